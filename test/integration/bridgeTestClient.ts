import { Buffer } from 'node:buffer';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { G1_BRIDGE_CONTRACT, G1_BRIDGE_METADATA, G1_BRIDGE_TOPICS, g1BridgeChannel } from '../../src/domain/bridge';
import {
  FOXGLOVE_SUBPROTOCOL,
  FoxgloveClient,
  FoxgloveServer,
  ServerCapability,
  type Channel,
  type FoxgloveServerInstance,
  type ServerInfo,
  type StatusMessage,
} from '../../src/services/robotLink/foxgloveWs';

// Test helpers for the g1-bridge/1 server and client: a plain @foxglove/ws-protocol client (not
// the console's adapter) that records everything it receives, and a raw Foxglove server that
// publishes hand-made messages (for malformed, duplicate and out-of-order frames).

export interface Received {
  topic: string;
  /** Parsed JSON (null when it does not parse). */
  msg: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
  atMs: number;
  logTimeNs: bigint;
}

export class PlainClient {
  readonly ws: WebSocket;
  readonly client: InstanceType<typeof FoxgloveClient>;
  serverInfo: ServerInfo | null = null;
  readonly channels = new Map<string, Channel>();
  readonly received: Received[] = [];
  readonly statuses: StatusMessage[] = [];
  closed = false;
  private readonly subs = new Map<number, string>();
  private commandChannel: number | null = null;
  private seq = 0;
  private waiters: Array<() => void> = [];

  private constructor(url: string, subscribe: boolean) {
    this.ws = new WebSocket(url, [FOXGLOVE_SUBPROTOCOL]);
    this.client = new FoxgloveClient({ ws: this.ws as never });
    this.client.on('serverInfo', (i) => {
      this.serverInfo = i;
      this.notify();
    });
    this.client.on('advertise', (chs) => {
      for (const ch of chs) {
        this.channels.set(ch.topic, ch);
        if (subscribe) this.subs.set(this.client.subscribe(ch.id), ch.topic);
      }
      this.notify();
    });
    this.client.on('message', (m) => {
      const topic = this.subs.get(m.subscriptionId) ?? '?';
      const text = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength).toString('utf8');
      let msg: unknown = null;
      try {
        msg = JSON.parse(text);
      } catch {
        msg = null;
      }
      this.received.push({ topic, msg, text, atMs: performance.now(), logTimeNs: m.timestamp });
      this.notify();
    });
    this.client.on('status', (s) => {
      this.statuses.push(s);
      this.notify();
    });
    this.client.on('close', () => {
      this.closed = true;
      this.notify();
    });
    this.client.on('error', () => {});
  }

  static async connect(url: string, options: { subscribe?: boolean } = {}): Promise<PlainClient> {
    const c = new PlainClient(url, options.subscribe ?? true);
    await c.until(() => c.serverInfo !== null && c.channels.size > 0, 5000, 'serverInfo + advertise');
    return c;
  }

  private notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolves when `pred` holds (checked on every received message), rejects after `timeoutMs`. */
  until(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (pred()) return resolve();
      const t = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
      const check = (): void => {
        if (pred()) {
          clearTimeout(t);
          resolve();
        } else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }

  advertiseCommands(schemaName = 'g1-bridge/1/Command'): number {
    this.commandChannel = this.client.advertise({
      ...g1BridgeChannel('command', G1_BRIDGE_TOPICS.command),
      schemaName,
    });
    return this.commandChannel;
  }

  /** Sends a command object (seq added) and returns its seq. */
  command(cmd: Record<string, unknown>): number {
    const seq = ++this.seq;
    this.sendRaw(JSON.stringify({ ...cmd, seq }));
    return seq;
  }

  sendRaw(payload: string | Uint8Array, channelId = this.commandChannel): void {
    if (channelId === null) throw new Error('no command channel advertised');
    this.client.sendMessage(channelId, typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload);
  }

  of(topic: string): Received[] {
    return this.received.filter((r) => r.topic === topic);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  statusMsgs(): any[] {
    return this.of(G1_BRIDGE_TOPICS.wbcStatus).map((r) => r.msg);
  }

  /** Waits for the wbc_status carrying the ack of `seq`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async ack(seq: number, timeoutMs = 10_000): Promise<{ ok: boolean; code: string; message: string; status: any }> {
    let found: any = null; // eslint-disable-line @typescript-eslint/no-explicit-any
    await this.until(
      () => {
        found = this.statusMsgs().find((s) => s?.ack?.seq === seq) ?? null;
        return found !== null;
      },
      timeoutMs,
      `the ack of command ${seq}`,
    );
    return { ok: found.ack.ok, code: found.ack.code, message: found.ack.message, status: found };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await new Promise<void>((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
      setTimeout(resolve, 1000);
    });
  }
}

/** A bare Foxglove server advertising g1-bridge/1 topics; the test publishes whatever bytes it likes. */
export class RawBridgeServer {
  readonly foxglove: FoxgloveServerInstance;
  readonly wss: WebSocketServer;
  readonly channel: { lowstate: number; rootState: number; wbcStatus: number };
  readonly sockets = new Set<WebSocket>();
  url = '';

  private constructor(port: number, withRoot: boolean) {
    this.foxglove = new FoxgloveServer({
      name: 'raw test bridge',
      capabilities: [ServerCapability.clientPublish],
      supportedEncodings: ['json'],
      metadata: {
        [G1_BRIDGE_METADATA.contract]: G1_BRIDGE_CONTRACT,
        [G1_BRIDGE_METADATA.executionDomain]: 'simulation',
        [G1_BRIDGE_METADATA.stateRateHz]: '500',
      },
    });
    this.channel = {
      lowstate: this.foxglove.addChannel(g1BridgeChannel('lowstate', G1_BRIDGE_TOPICS.lowstate)),
      rootState: withRoot ? this.foxglove.addChannel(g1BridgeChannel('rootState', G1_BRIDGE_TOPICS.rootState)) : -1,
      wbcStatus: this.foxglove.addChannel(g1BridgeChannel('wbcStatus', G1_BRIDGE_TOPICS.wbcStatus)),
    };
    this.foxglove.on('error', () => {});
    this.wss = new WebSocketServer({
      host: '127.0.0.1',
      port,
      handleProtocols: (p) => this.foxglove.handleProtocols(p),
    });
    this.wss.on('connection', (ws, req) => {
      this.sockets.add(ws);
      ws.on('close', () => this.sockets.delete(ws));
      this.foxglove.handleConnection(ws as never, `${req.socket.remoteAddress}:${req.socket.remotePort}`);
    });
  }

  static async start(options: { port?: number; withRoot?: boolean } = {}): Promise<RawBridgeServer> {
    const s = new RawBridgeServer(options.port ?? 0, options.withRoot ?? false);
    await new Promise<void>((resolve, reject) => {
      s.wss.once('listening', () => resolve());
      s.wss.once('error', reject);
    });
    s.url = `ws://127.0.0.1:${(s.wss.address() as AddressInfo).port}`;
    return s;
  }

  publish(channel: number, payload: unknown, stampNs = 0): void {
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
    this.foxglove.sendMessage(channel, BigInt(stampNs), Buffer.from(text, 'utf8'));
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    await new Promise<void>((r) => this.wss.close(() => r()));
  }
}

export function lowState(tick: number, stampNs: number, q0 = 0): Record<string, unknown> {
  return {
    tick,
    stamp_ns: stampNs,
    q: Array.from({ length: 29 }, (_, j) => q0 + 0.01 * j),
    dq: new Array(29).fill(0),
    tau_est: new Array(29).fill(0),
    imu: { quat_wxyz: [1, 0, 0, 0], gyro: [0, 0, 0], accel: [0, 0, 9.81] },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function waitFor(pred: () => boolean, timeoutMs: number, what: string, stepMs = 10): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!pred()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(stepMs);
  }
}
