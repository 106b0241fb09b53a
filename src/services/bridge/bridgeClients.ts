import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { G1_BRIDGE_CONTRACT, G1_BRIDGE_SCHEMA_NAMES, G1_BRIDGE_TOPICS } from '../../domain/bridge/g1BridgeContract';
import { FOXGLOVE_SUBPROTOCOL, StatusLevel, type FoxgloveServerInstance } from '../robotLink/foxgloveWs';

// The g1-bridge/1 server's connections: who is connected, who controls (the first client to
// advertise /console/command, until it disconnects or unadvertises; the others watch), the
// Foxglove statuses to them, client channels besides /console/command, malformed protocol
// messages (answered and counted, never fatal), and clients too slow to read their stream.

/** Ids of the Foxglove status messages a client may act on (docs/G1_BRIDGE.md, "Status messages"). */
export const STATUS_ID = {
  controlGranted: 'g1-bridge/control-granted',
  controlRefused: 'g1-bridge/control-refused',
  refused: (seq: number | null): string => `g1-bridge/refused/${seq ?? 'unknown'}`,
} as const;

/** A client channel the server accepts besides /console/command. */
export interface ClientChannelHandler {
  topic: string;
  /** Handles one message; the answer goes to the sender as a Foxglove status (info if ok, error if not) with `id`. */
  handle(data: Uint8Array, client: string): { ok: boolean; message: string; id?: string };
}

export interface ClientState {
  ws: WebSocket;
  name: string;
  /** Its advertised /console/command channel id, if any. */
  commandChannel: number | null;
}

/** Command counts the connections and the command handling share. */
export interface CommandCounts {
  accepted: number;
  refused: number;
  malformed: number;
}

export type StatusLevelName = 'info' | 'warn' | 'error';

export interface BridgeClientsOptions {
  foxglove: FoxgloveServerInstance;
  backendName: string;
  counts: CommandCounts;
  clientChannels: readonly ClientChannelHandler[];
  /** A client whose send buffer stays above the high-water mark this long is disconnected, ms. */
  slowClientTimeoutMs: number;
  /** Called on every WebSocket ping and message from a client. */
  onClientActivity?: (client: string) => void;
  /** The controlling client let go (`disconnect`: it went away; `stop`: it unadvertised its command channel). */
  onControlReleased: (why: string, cause: 'disconnect' | 'stop') => void;
  log: (line: string) => void;
}

const SEND_HIGH_WATER_BYTES = 4 * 1024 * 1024;
const SEND_LOW_WATER_BYTES = 512 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class BridgeClients {
  private readonly clients = new Map<WebSocket, ClientState>();
  private readonly extraChannels: Map<string, ClientChannelHandler>;
  private controlling: ClientState | null = null;
  /** The connection whose message FoxgloveServer is handling (to attribute its 'error' events). */
  private handling: ClientState | null = null;
  slowClientsDropped = 0;

  constructor(private readonly o: BridgeClientsOptions) {
    this.extraChannels = new Map(o.clientChannels.map((h) => [h.topic, h]));
  }

  get size(): number {
    return this.clients.size;
  }

  get controller(): ClientState | null {
    return this.controlling;
  }

  get(ws: WebSocket): ClientState | undefined {
    return this.clients.get(ws);
  }

  /** Terminates every connection at once; returns how many. */
  terminateAll(): number {
    const all = [...this.clients.values()];
    for (const c of all) c.ws.terminate();
    return all.length;
  }

  closeAll(code: number, reason: string): void {
    for (const c of this.clients.values()) c.ws.close(code, reason);
  }

  onConnection(ws: WebSocket, req: IncomingMessage): void {
    const name = `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`;
    const log = this.o.log;
    if (ws.protocol !== FOXGLOVE_SUBPROTOCOL) {
      log(`serve: ${name} refused: no ${FOXGLOVE_SUBPROTOCOL} subprotocol`);
      ws.close(1002, `subprotocol ${FOXGLOVE_SUBPROTOCOL} required`);
      return;
    }
    const client: ClientState = { ws, name, commandChannel: null };
    this.clients.set(ws, client);
    ws.on('error', (err) => log(`serve: ${name}: ${err.message}`));
    ws.on('close', () => this.onDisconnect(client));
    const activity = this.o.onClientActivity;
    if (activity) ws.on('ping', () => activity(name));
    this.o.foxglove.handleConnection(ws as never, name);
    // FoxgloveServer reports protocol errors without saying whose message caused them: note the
    // connection around its message handler so they can be answered and counted.
    const handler = ws.onmessage;
    ws.onmessage = (ev) => {
      activity?.(name);
      this.handling = client;
      try {
        handler?.call(ws, ev);
      } catch (err) {
        this.onProtocolError(err as Error);
      } finally {
        this.handling = null;
      }
    };
    log(`serve: ${name} connected (${this.clients.size} client${this.clients.size === 1 ? '' : 's'})`);
  }

  private onDisconnect(client: ClientState): void {
    this.clients.delete(client.ws);
    this.o.log(`serve: ${client.name} disconnected`);
    if (this.controlling === client) this.releaseControl(client, 'controlling client disconnected', 'disconnect');
  }

  private releaseControl(client: ClientState, why: string, cause: 'disconnect' | 'stop'): void {
    if (this.controlling !== client) return;
    this.controlling = null;
    this.o.log(`serve: ${client.name} released control (${why})`);
    this.o.onControlReleased(why, cause);
  }

  onAdvertise(ws: WebSocket, channelId: number, topic: string, encoding: string, schemaName: string | undefined): void {
    const client = this.clients.get(ws);
    if (!client) return;
    if (this.extraChannels.has(topic)) return;
    if (topic !== G1_BRIDGE_TOPICS.command) {
      this.status(
        client,
        'warn',
        `client channel ${topic} is not part of ${G1_BRIDGE_CONTRACT}; its messages are ignored (publish commands on ${G1_BRIDGE_TOPICS.command})`,
      );
      return;
    }
    if (encoding !== 'json') {
      this.o.counts.refused++;
      this.status(
        client,
        'error',
        `${G1_BRIDGE_TOPICS.command} must use JSON encoding, not ${encoding}; its messages are ignored`,
      );
      return;
    }
    if (schemaName && schemaName !== G1_BRIDGE_SCHEMA_NAMES.command) {
      this.o.counts.refused++;
      this.status(
        client,
        'error',
        `schema ${schemaName} is not supported; this server speaks ${G1_BRIDGE_SCHEMA_NAMES.command}; commands on this channel are refused`,
      );
      return;
    }
    client.commandChannel = channelId;
    this.claimControl(client);
  }

  onUnadvertise(ws: WebSocket, channelId: number): void {
    const client = this.clients.get(ws);
    if (!client || client.commandChannel !== channelId) return;
    client.commandChannel = null;
    this.releaseControl(client, 'controlling client unadvertised its command channel', 'stop');
  }

  /** Grants control when nobody holds it; true if `client` controls afterwards. */
  claimControl(client: ClientState): boolean {
    const backend = this.o.backendName;
    if (this.controlling === client) return true;
    if (this.controlling === null) {
      this.controlling = client;
      this.o.log(`serve: ${client.name} controls ${backend}`);
      this.status(client, 'info', `${G1_BRIDGE_CONTRACT}: you control ${backend}`, STATUS_ID.controlGranted);
      return true;
    }
    this.status(
      client,
      'warn',
      `${backend} is controlled by ${this.controlling.name}; you may watch, your commands are refused until it lets go`,
      STATUS_ID.controlRefused,
    );
    return false;
  }

  /** A Foxglove status to one client; `id` marks control changes and refusals for machines (docs/G1_BRIDGE.md). */
  status(client: ClientState, level: StatusLevelName, message: string, id?: string): void {
    const lvl = level === 'info' ? StatusLevel.INFO : level === 'warn' ? StatusLevel.WARNING : StatusLevel.ERROR;
    try {
      this.o.foxglove.sendStatus({ level: lvl, message, ...(id ? { id } : {}) }, client.ws as never);
    } catch {
      // the connection is going away; its close handler cleans up
    }
  }

  broadcastStatus(level: StatusLevelName, message: string): void {
    for (const c of this.clients.values()) this.status(c, level, message);
  }

  onProtocolError(err: Error): void {
    const client = this.handling;
    const counts = this.o.counts;
    counts.malformed++;
    const msg = `malformed client message (#${counts.malformed}): ${err?.message ?? String(err)}`;
    this.o.log(`serve: ${client?.name ?? 'a client'}: ${msg}`);
    if (client) this.status(client, 'error', msg);
  }

  /** Handles a message on a client channel besides /console/command; false if `topic` is none of them. */
  handleClientChannel(client: ClientState, topic: string, data: ArrayBufferView): boolean {
    const extra = this.extraChannels.get(topic);
    if (!extra) return false;
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    let r: { ok: boolean; message: string; id?: string };
    try {
      r = extra.handle(bytes, client.name);
    } catch (err) {
      r = { ok: false, message: `${topic}: ${(err as Error)?.message ?? String(err)}` };
    }
    this.o.log(`serve: ${client.name}: ${topic}: ${r.ok ? '' : 'refused: '}${r.message}`);
    this.status(client, r.ok ? 'info' : 'error', r.message, r.id);
    return true;
  }

  /** Holds the stream while a client's send buffer is above the high-water mark; drops clients that stay there. */
  async drainSlowClients(): Promise<void> {
    const over = (): ClientState[] =>
      [...this.clients.values()].filter((c) => c.ws.bufferedAmount > SEND_HIGH_WATER_BYTES);
    if (over().length === 0) return;
    const deadline = performance.now() + this.o.slowClientTimeoutMs;
    while (performance.now() < deadline) {
      await sleep(10);
      if ([...this.clients.values()].every((c) => c.ws.bufferedAmount <= SEND_LOW_WATER_BYTES)) return;
    }
    for (const c of over()) {
      this.slowClientsDropped++;
      this.o.log(`serve: ${c.name} dropped: it did not read its stream (${c.ws.bufferedAmount} bytes queued)`);
      c.ws.terminate();
    }
  }
}
