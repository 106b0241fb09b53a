import { randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import { Buffer } from 'node:buffer';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type WebSocket } from 'ws';
import { MAX_MESSAGE_BYTES, WS_API_PATH, type WsServerMessage } from '../../api/contract';
import { buildContentSecurityPolicy } from '../../api/contentSecurityPolicy';
import { createConsoleApi, type ConsoleApi } from '../console/consoleApiHandlers';
import type { BackendFactories } from '../console/connectionRegistry';
import { dispatchWsMessage, isSerializedResponse, type WsSerializedResponse } from '../console/wsDispatch';

// The loopback host (`motionbench host`): serves the built renderer over HTTP and the console
// API on a WebSocket at /api, so the console runs in a browser and end-to-end tests drive the
// real UI against the real services. The API requires the per-run token from the URL and an
// Origin equal to the server's own; nothing listens beyond 127.0.0.1 unless `host` says so.

export interface HostServerOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Robot model (MJCF); default our G1 in assets/. */
  modelFile?: string;
  /** Built renderer; default <repo>/out/renderer. */
  rendererDir?: string;
  /** Largest accepted WebSocket message, bytes; default MAX_MESSAGE_BYTES. */
  maxMessageBytes?: number;
  /** One line per notable event (connections refused, ...). Default: silent. */
  log?: (line: string) => void;
  /** Backend implementations for the Connections panel; default: src/services/console/backendFactories.ts. */
  backends?: BackendFactories;
  /** The runners' interlock e-stop socket (createConsoleApi's runnerEstopSocket); default: one the services make. */
  runnerEstopSocket?: string | null;
}

export interface HostServer {
  /** Open this in a browser: includes `?token=…`. */
  url: string;
  host: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const DEFAULT_RENDERER_DIR = path.join(REPO_ROOT, 'out', 'renderer');

export class RendererNotBuiltError extends Error {
  override readonly name = 'RendererNotBuiltError';
  constructor(readonly rendererDir: string) {
    super(`console renderer not built (${path.join(rendererDir, 'index.html')} missing): run \`npm run build\` first`);
  }
}

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.map': 'application/json; charset=utf-8',
};

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];
const isWildcard = (h: string): boolean => h === '0.0.0.0' || h === '::' || h === '[::]';
const isLoopback = (h: string): boolean => h === '127.0.0.1' || h === 'localhost' || h === '::1' || h === '[::1]';
const bracketed = (h: string): string => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h);

function readAppVersion(): string {
  try {
    return (
      (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version?: string }).version ??
      '0.0.0'
    );
  } catch {
    return '0.0.0';
  }
}

function tokensEqual(given: string | null, token: string): boolean {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  const text = http.STATUS_CODES[status] ?? 'Refused';
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(reason)}\r\n\r\n${reason}`,
  );
  socket.destroy();
}

export async function startHostServer(options: HostServerOptions = {}): Promise<HostServer> {
  const bindHost = options.host ?? '127.0.0.1';
  const rendererDir = path.resolve(options.rendererDir ?? DEFAULT_RENDERER_DIR);
  const maxMessageBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  const log = options.log ?? (() => {});
  if (!fs.existsSync(path.join(rendererDir, 'index.html'))) throw new RendererNotBuiltError(rendererDir);

  const token = randomBytes(24).toString('hex');
  const api: ConsoleApi = createConsoleApi({
    transport: 'host',
    ...(options.modelFile !== undefined && { modelFile: options.modelFile }),
    ...(options.backends !== undefined && { backends: options.backends }),
    ...(options.runnerEstopSocket !== undefined && { runnerEstopSocket: options.runnerEstopSocket }),
    appVersion: readAppVersion(),
  });

  let port = 0;
  /** Host headers this server answers to (`name:port`); null = any (wildcard bind). */
  const allowedHosts = (): Set<string> | null => {
    if (isWildcard(bindHost)) return null;
    const names = isLoopback(bindHost) ? LOOPBACK_NAMES : [bracketed(bindHost)];
    return new Set(names.map((n) => `${n}:${port}`));
  };
  let hostAllow: Set<string> | null = null;
  /** DNS-rebinding guard: the Host header must name this server. */
  const hostOk = (hostHeader: string | undefined): boolean =>
    hostHeader !== undefined &&
    (hostAllow === null ? hostHeader.endsWith(`:${port}`) : hostAllow.has(hostHeader.toLowerCase()));

  const securityHeaders = (hostHeader: string): Record<string, string> => ({
    'Content-Security-Policy': buildContentSecurityPolicy({ connectSrc: [`ws://${hostHeader}`] }),
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  });

  const server = http.createServer((req, res) => {
    const hostHeader = req.headers.host;
    if (!hostOk(hostHeader)) {
      res.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8' }).end('unexpected Host header\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res
        .writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' })
        .end('method not allowed\n');
      return;
    }
    let rel: string;
    try {
      rel = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' }).end('bad path\n');
      return;
    }
    if (rel === '/' || rel === '') rel = '/index.html';
    const file = path.resolve(rendererDir, `.${path.posix.normalize(rel)}`);
    if (!file.startsWith(rendererDir + path.sep) || rel.includes('\0')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    fs.readFile(file, (err, body) => {
      if (err) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
        return;
      }
      res.writeHead(200, {
        ...securityHeaders(hostHeader as string),
        'Content-Type': MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Length': String(body.length),
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    });
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: maxMessageBytes, perMessageDeflate: false });

  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const hostHeader = req.headers.host;
    if (url.pathname !== WS_API_PATH) return refuseUpgrade(socket, 404, 'no such endpoint');
    if (!hostOk(hostHeader)) {
      log(`host: refused WebSocket: unexpected Host ${hostHeader ?? '(none)'}`);
      return refuseUpgrade(socket, 403, 'unexpected Host header');
    }
    if (req.headers.origin !== `http://${hostHeader}`) {
      log(`host: refused WebSocket from origin ${req.headers.origin ?? '(none)'}`);
      return refuseUpgrade(socket, 403, 'foreign origin');
    }
    if (!tokensEqual(url.searchParams.get('token'), token)) {
      log('host: refused WebSocket: bad token');
      return refuseUpgrade(socket, 401, 'bad or missing token');
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  wss.on('connection', (ws: WebSocket) => {
    // This socket's pushes (live.frames, sim.end, …), flow-controlled by its events.ack calls.
    const client = api.attachClient({ send: (event) => send(ws, { event }) });
    const ctx = { client };
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        send(ws, { id: null, error: { code: 'bad_request', message: 'send JSON text frames, not binary' } });
        return;
      }
      const text = Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.from(data as ArrayBuffer).toString('utf8');
      void dispatchWsMessage(api, text, maxMessageBytes, ctx).then((response) =>
        isSerializedResponse(response) ? sendSerialized(ws, response) : send(ws, response),
      );
    });
    ws.on('close', () => client.detach());
    ws.on('error', (err) => log(`host: WebSocket error: ${err.message}`));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, bindHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as { port: number }).port;
  hostAllow = allowedHosts();

  const urlHost = isWildcard(bindHost) ? '127.0.0.1' : bracketed(bindHost);
  let closed: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}/?token=${token}`,
    host: bindHost,
    port,
    token,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        let pending = 2;
        const done = (): void => {
          if (--pending === 0) resolve();
        };
        server.close(done);
        server.closeAllConnections();
        void api.close().then(done, done);
      })),
  };
}

function send(ws: WebSocket, message: WsServerMessage): void {
  if (ws.readyState !== ws.OPEN) return;
  ws.send(JSON.stringify(message));
}

/**
 * A response whose result was serialized off the event loop: one text message in three fragments
 * (`{"id":…,"result":`, the bytes as they are, `}`), so the result is neither parsed, copied nor
 * stringified here. The three sends are synchronous: nothing interleaves with the fragments.
 */
function sendSerialized(ws: WebSocket, r: WsSerializedResponse): void {
  if (ws.readyState !== ws.OPEN) return;
  ws.send(Buffer.from(`{"id":${JSON.stringify(r.id)},"result":`), { binary: false, fin: false });
  ws.send(Buffer.from(r.resultJson.buffer, r.resultJson.byteOffset, r.resultJson.byteLength), {
    binary: false,
    fin: false,
  });
  ws.send(Buffer.from('}'), { binary: false, fin: true });
}
