import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  EMULATOR_CONTROL_METADATA_KEY,
  EMULATOR_CONTROL_STATUS_ID,
  EMULATOR_CONTROL_TOPIC,
} from '../../domain/robotEmulator/emulatorControl';
import { FOXGLOVE_SUBPROTOCOL, FoxgloveServer, ServerCapability, StatusLevel } from '../robotLink/foxgloveWs';

// `/emulator/control` on its own Foxglove WebSocket server, for an emulator with no g1-bridge/1
// server (the G1 on DDS): the same channel, metadata key and status ids as the bridge's, so
// emulatorControlClient.ts (`sendEmulatorControl`) and `motionbench emulate-robot-reset` work
// against it unchanged. Only loopback by default; messages above 64 KiB are refused by the socket.

export interface ControlAnswer {
  ok: boolean;
  message: string;
}

export interface EmulatorControlServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const MAX_CONTROL_BYTES = 64 * 1024;

export async function startEmulatorControlServer(options: {
  host?: string;
  port?: number;
  name: string;
  /** Handles the message text of one control message (JSON); never throws to the socket. */
  handle: (text: string) => ControlAnswer;
  log?: (line: string) => void;
}): Promise<EmulatorControlServer> {
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? (() => {});
  const foxglove = new FoxgloveServer({
    name: options.name,
    capabilities: [ServerCapability.clientPublish],
    supportedEncodings: ['json'],
    metadata: { [EMULATOR_CONTROL_METADATA_KEY]: EMULATOR_CONTROL_TOPIC },
  });
  foxglove.on('message', (ev) => {
    const ws = ev.client.connection;
    let r: ControlAnswer;
    if (ev.channel.topic !== EMULATOR_CONTROL_TOPIC) {
      r = { ok: false, message: `${ev.channel.topic}: this server takes only ${EMULATOR_CONTROL_TOPIC}` };
    } else {
      try {
        r = options.handle(Buffer.from(ev.data.buffer, ev.data.byteOffset, ev.data.byteLength).toString('utf8'));
      } catch (err) {
        r = { ok: false, message: `${EMULATOR_CONTROL_TOPIC}: ${(err as Error)?.message ?? String(err)}` };
      }
    }
    log(`control: ${r.ok ? '' : 'refused: '}${r.message}`);
    try {
      foxglove.sendStatus(
        {
          level: r.ok ? StatusLevel.INFO : StatusLevel.ERROR,
          message: r.message,
          id: r.ok ? EMULATOR_CONTROL_STATUS_ID.ok : EMULATOR_CONTROL_STATUS_ID.refused,
        },
        ws,
      );
    } catch {
      // the connection is going away
    }
  });
  foxglove.on('error', (err) => log(`control: ${err?.message ?? String(err)}`));
  const wss = new WebSocketServer({
    host,
    port: options.port ?? 0,
    handleProtocols: (protocols) => foxglove.handleProtocols(protocols),
    maxPayload: MAX_CONTROL_BYTES,
    perMessageDeflate: false,
  });
  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    if (ws.protocol !== FOXGLOVE_SUBPROTOCOL) {
      ws.close(1002, `subprotocol ${FOXGLOVE_SUBPROTOCOL} required`);
      return;
    }
    foxglove.handleConnection(ws as never, `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`);
  });
  await new Promise<void>((resolve, reject) => {
    wss.once('error', (err) => reject(new Error(`cannot listen on ${host}:${options.port ?? 0}: ${err.message}`)));
    wss.once('listening', () => resolve());
  });
  wss.on('error', (err) => log(`control: server error: ${err.message}`));
  const addr = wss.address();
  const port = typeof addr === 'object' && addr ? addr.port : (options.port ?? 0);
  const h = host.includes(':') ? `[${host}]` : host;
  return {
    url: `ws://${h}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => resolve());
      }),
  };
}
