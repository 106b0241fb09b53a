import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ClipDto, WsResponse } from '../../src/api/contract';
import { MAX_MESSAGE_BYTES } from '../../src/api/contract';
import { startHostServer, type HostServer } from '../../src/services/host/hostServer';
import type { ConnectionInfo, MeshDto } from '../../src/api/contract';
import { FakeBackend } from '../helpers/fakeBackend';
import { MENAGERIE_G1 } from '../helpers/sharedData';
import { openHostApiSocket } from '../helpers/hostApiClient';

// The loopback host with a real ws client: who may connect, and what bad requests get back.

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NPZ = path.resolve(repo, '../shared/data/motions/g1_moves/npz/B_HandsUp.npz');

let tmp: string;
let server: HostServer;
let origin: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-host-'));
  const rendererDir = path.join(tmp, 'renderer');
  fs.mkdirSync(rendererDir);
  fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html><title>stub</title>');
  fs.writeFileSync(path.join(tmp, 'secret.txt'), 'not for the browser');
  server = await startHostServer({ port: 0, rendererDir });
  origin = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function apiUrl(token: string | null = server.token): string {
  return `ws://127.0.0.1:${server.port}/api${token === null ? '' : `?token=${token}`}`;
}

/** Resolves with the HTTP status of a refused upgrade, or 101 if it was accepted. */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.on('error', (err) => {
      if (!/Unexpected server response/.test(err.message)) reject(err);
    });
  });
}

/** An open client with a `call` that sends raw text and waits for the next response. */
async function connect(): Promise<{ ws: WebSocket; send(text: string): Promise<WsResponse>; close(): void }> {
  const ws = new WebSocket(apiUrl(), { headers: { Origin: origin }, maxPayload: 1 << 30 });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    send(text) {
      return new Promise((resolve, reject) => {
        ws.once('message', (data) => resolve(JSON.parse(String(data)) as WsResponse));
        ws.once('close', (code) => reject(new Error(`closed ${code}`)));
        ws.send(text);
      });
    },
    close: () => ws.close(),
  };
}

function httpGet(
  pathAndQuery: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: server.port, path: pathAndQuery, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

describe('loopback host', () => {
  it('listens on 127.0.0.1 and prints a URL carrying a 48-hex-digit token', () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.token).toMatch(/^[0-9a-f]{48}$/);
    expect(server.url).toBe(`${origin}/?token=${server.token}`);
  });

  it('serves the renderer with the console CSP, and nothing outside it', async () => {
    const page = await httpGet('/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('stub');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${server.port}`);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect((await httpGet('/../secret.txt')).status).toBe(404);
    expect((await httpGet('/%2e%2e/secret.txt')).status).toBe(404);
    expect((await httpGet('/nope.js')).status).toBe(404);
  });

  it('refuses requests naming another host (DNS rebinding)', async () => {
    expect((await httpGet('/', { Host: `evil.example:${server.port}` })).status).toBe(403);
    expect(
      await upgradeStatus(apiUrl(), {
        Host: `evil.example:${server.port}`,
        Origin: `http://evil.example:${server.port}`,
      }),
    ).toBe(403);
  });

  it('refuses a missing or wrong token', async () => {
    expect(await upgradeStatus(apiUrl(null), { Origin: origin })).toBe(401);
    expect(await upgradeStatus(apiUrl('0'.repeat(48)), { Origin: origin })).toBe(401);
    expect(await upgradeStatus(apiUrl(server.token.slice(1)), { Origin: origin })).toBe(401);
  });

  it('refuses a foreign or missing Origin, even with the token', async () => {
    expect(await upgradeStatus(apiUrl(), { Origin: 'http://evil.example' })).toBe(403);
    expect(await upgradeStatus(apiUrl(), { Origin: `http://127.0.0.1:${server.port + 1}` })).toBe(403);
    expect(await upgradeStatus(apiUrl(), {})).toBe(403);
  });

  it('accepts its own origin with the token and answers calls', async () => {
    const c = await connect();
    try {
      const info = await c.send(JSON.stringify({ id: 1, method: 'app.info', params: {} }));
      expect(info).toMatchObject({ id: 1, result: { transport: 'host', capabilities: { nativeOpenDialog: false } } });
      const clip = await c.send(JSON.stringify({ id: 'c', method: 'clips.load', params: { path: NPZ } }));
      expect('result' in clip).toBe(true);
      const dto = (clip as { result: ClipDto }).result;
      expect(dto.name).toContain('B_HandsUp');
      expect(dto.format).toBe('mjlab-npz');
      expect(dto.jointPosRad.length).toBe(dto.frameCount * 29);
      expect(dto.rootQuatWxyz.length).toBe(dto.frameCount * 4);
    } finally {
      c.close();
    }
  });

  it('answers malformed JSON, unknown methods and bad params with structured errors and stays open', async () => {
    const c = await connect();
    try {
      const bad = await c.send('{"id": 1, "method": ');
      expect(bad).toMatchObject({ id: null, error: { code: 'bad_request' } });

      const notRpc = await c.send(JSON.stringify({ id: 2, params: {} }));
      expect(notRpc).toMatchObject({ id: 2, error: { code: 'bad_request', field: 'method' } });

      const unknown = await c.send(JSON.stringify({ id: 3, method: 'robot.selfDestruct', params: {} }));
      expect(unknown).toMatchObject({ id: 3, error: { code: 'unknown_method', field: 'method' } });

      const badFps = await c.send(JSON.stringify({ id: 4, method: 'clips.load', params: { path: NPZ, fps: -5 } }));
      expect(badFps).toMatchObject({ id: 4, error: { code: 'bad_params', field: 'params.fps' } });

      const extra = await c.send(JSON.stringify({ id: 5, method: 'app.info', params: { debug: true } }));
      expect(extra).toMatchObject({ id: 5, error: { code: 'bad_params', field: 'params.debug' } });

      const noPath = await c.send(JSON.stringify({ id: 6, method: 'clips.load', params: {} }));
      expect(noPath).toMatchObject({ id: 6, error: { code: 'bad_params', field: 'params.path' } });

      const dialog = await c.send(JSON.stringify({ id: 7, method: 'clips.openDialog', params: {} }));
      expect(dialog).toMatchObject({ id: 7, error: { code: 'unsupported' } });

      const ok = await c.send(JSON.stringify({ id: 8, method: 'app.info' }));
      expect(ok).toMatchObject({ id: 8, result: { transport: 'host' } });
      expect(c.ws.readyState).toBe(WebSocket.OPEN);
    } finally {
      c.close();
    }
  });

  it('reports a malformed clip with its file and line', async () => {
    const csv = path.join(tmp, 'broken.csv');
    const good = Array.from({ length: 36 }, (_, i) => (i === 6 ? '1' : '0')).join(',');
    fs.writeFileSync(csv, `${good}\n${good}\n${good.replace(/^0/, 'abc')}\n`);
    const c = await connect();
    try {
      const r = await c.send(JSON.stringify({ id: 1, method: 'clips.load', params: { path: csv, fps: 30 } }));
      expect(r).toMatchObject({ id: 1, error: { code: 'input_error', location: { file: csv, line: 3 } } });
      const missing = await c.send(
        JSON.stringify({ id: 2, method: 'clips.load', params: { path: path.join(tmp, 'missing.csv') } }),
      );
      expect(missing).toMatchObject({ id: 2, error: { location: { file: path.join(tmp, 'missing.csv') } } });
    } finally {
      c.close();
    }
  });

  it('closes the connection on a message over the size limit (1009)', async () => {
    const c = await connect();
    const closed = new Promise<number>((resolve) => c.ws.once('close', (code) => resolve(code)));
    c.ws.on('error', () => {});
    c.ws.send('x'.repeat(MAX_MESSAGE_BYTES + 1));
    expect(await closed).toBe(1009);
    // The server itself is fine.
    const again = await connect();
    expect(await again.send(JSON.stringify({ id: 1, method: 'app.info', params: {} }))).toMatchObject({ id: 1 });
    again.close();
  });
});

describe('loopback host with a model and backends', () => {
  it('serves the meshes of the model it was started with, and the Connections registry; closes the backends', async () => {
    const made: FakeBackend[] = [];
    const meshed = await startHostServer({
      port: 0,
      rendererDir: path.join(tmp, 'renderer'),
      modelFile: MENAGERIE_G1,
      backends: {
        embeddedSimulator: () => made[made.push(new FakeBackend({ id: 'sim', presentAfterMs: 0, streamHz: 50 })) - 1],
        remoteSimulator: ({ id }) =>
          made[made.push(new FakeBackend({ id, initialPresence: 'present', latencyMs: 2 })) - 1],
      },
    });
    const ws = await openHostApiSocket(meshed);
    let nextId = 1;
    const call = (method: string, params: unknown): Promise<WsResponse> =>
      new Promise((resolve) => {
        const id = nextId++;
        const onMessage = (data: WebSocket.RawData): void => {
          const r = JSON.parse(String(data)) as WsResponse;
          if (r.id !== id) return;
          ws.off('message', onMessage);
          resolve(r);
        };
        ws.on('message', onMessage);
        ws.send(JSON.stringify({ id, method, params }));
      });
    try {
      const info = await call('app.info', {});
      expect((info as { result: { modelFile: string } }).result.modelFile).toBe(MENAGERIE_G1);
      const mesh = await call('robot.getMesh', { name: 'pelvis' });
      const dto = (mesh as { result: MeshDto }).result;
      expect(dto.format).toBe('stl');
      expect(
        Buffer.from(dto.bytesBase64, 'base64').equals(
          fs.readFileSync(path.join(path.dirname(MENAGERIE_G1), 'assets/pelvis.STL')),
        ),
      ).toBe(true);
      expect(await call('robot.getMesh', { name: '../g1.xml' })).toMatchObject({ error: { code: 'not_found' } });

      expect(await call('connections.connect', { id: 'embedded-sim' })).toMatchObject({ result: { active: true } });
      expect(await call('connections.add', { url: 'ws://127.0.0.1:9/' })).toMatchObject({
        result: { id: 'remote-1', presence: 'present', latencyMs: 2 },
      });
      expect(await call('connections.add', { url: 'file:///etc/passwd' })).toMatchObject({
        error: { code: 'bad_params', field: 'params.url' },
      });
      await new Promise((r) => setTimeout(r, 700));
      const list = (await call('connections.list', {})) as { result: ConnectionInfo[] };
      expect(list.result.map((e) => e.id)).toEqual(['embedded-sim', 'remote-1']);
      expect(list.result[0].presence).toBe('present');
      expect(list.result[0].rateHz).toBeGreaterThan(40);
      expect(list.result[0].rateHz).toBeLessThan(60);
      expect(list.result[0].lastFrameAgeMs).toBeLessThan(500);
    } finally {
      ws.close();
      await meshed.close();
    }
    expect(made).toHaveLength(2);
    expect(made.every((b) => b.closed)).toBe(true);
  });
});
