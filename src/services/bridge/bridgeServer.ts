import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Backend, BackendEvent, BackendLease, EpisodeEnd, EpisodeOutcome } from '../../domain/backend/backend';
import type { StateFrame } from '../../domain/robot/stateFrame';
import {
  G1_BRIDGE_CONTRACT,
  G1_BRIDGE_LIMITS,
  G1_BRIDGE_METADATA,
  G1_BRIDGE_SCHEMA_NAMES,
  G1_BRIDGE_TOPICS,
  type AckCode,
  type CommandAck,
  type CommandName,
  type RootStateSource,
  type RunnerStatus,
  type WbcState,
  type WbcStatusMsg,
} from '../../domain/bridge/g1BridgeContract';
import { lowStateFromFrame, rootStateFromFrame } from '../../domain/bridge/g1BridgeEncode';
import { g1BridgeChannel } from '../../domain/bridge/g1BridgeSchemas';
import { decodeCommand, type BridgeCommand } from '../../domain/bridge/g1BridgeValidate';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import {
  FOXGLOVE_SUBPROTOCOL,
  FoxgloveServer,
  ServerCapability,
  StatusLevel,
  type FoxgloveServerInstance,
} from '../robotLink/foxgloveWs';

// Serves one Backend on the Foxglove WebSocket protocol (foxglove.websocket.v1, JSON encoding)
// under the `g1-bridge/1` contract (docs/G1_BRIDGE.md): publishes /g1/lowstate (+ /g1/root_state
// when the backend has a global root) for every StateFrame and /g1/wbc_status on every change,
// every command (with an ack) and as a heartbeat; accepts /console/command from one controlling
// client at a time (others watch). Commands map onto a BackendLease: reset → lease.reset,
// prepare + start → lease.run, stop → lease.stop. Malformed client messages are counted and
// answered, never fatal. Listens on 127.0.0.1 unless told otherwise.
//
// Robot mode (`robot` option; the robot emulator, src/services/robotEmulator/): the backend is a
// live robot that publishes its state all the time on its own clock. Frames are published as
// they come, unpaced, with the backend's tick and stamp (a frame's timeS is the robot clock in
// seconds since `stampOriginUnixMs`, declared in serverInfo as `stamp_origin_unix_ms`), also
// between episodes; prepare lets the robot load the binding; the episode's time 0 is the robot's;
// damp and hold act on the motors at once; the robot reports state changes of its own (e-stop,
// human reset) through `robotState`.

export interface BridgeServerOptions {
  backend: Backend;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Server name in the Foxglove serverInfo. */
  name?: string;
  /**
   * Stream pacing: 1 (default) publishes each frame when its episode time comes (real time); 2 is
   * twice as fast; 0 publishes as fast as the backend produces. Pacing holds the backend through
   * its listener (backpressure), so a simulator runs no further ahead than it is published.
   */
  speed?: number;
  /** wbc_status heartbeat rate, Hz (default 5). */
  heartbeatHz?: number;
  /** `source` of /g1/root_state (default 'sim' for a simulation backend, 'mocap' otherwise). */
  rootStateSource?: RootStateSource;
  /** A client whose send buffer stays above the high-water mark this long is disconnected, ms (default 3000). */
  slowClientTimeoutMs?: number;
  /** Close the backend in close() (default true). */
  closeBackend?: boolean;
  /** One line per notable event (connections, control, refusals). Default: silent. */
  log?: (line: string) => void;
  /** Robot mode (see the file header). */
  robot?: RobotBridgeHooks;
  /** Client channels accepted besides /console/command (e.g. the robot emulator's /emulator/control). */
  clientChannels?: ClientChannelHandler[];
  /** serverInfo metadata beside the contract's (e.g. the robot emulator's `emulator_control` declaration). */
  extraMetadata?: Readonly<Record<string, string>>;
  /** Called on every WebSocket ping and message from a client: the robot side's proof the console lives. */
  onClientActivity?: (client: string) => void;
}

/** What the server needs from a live robot backend (robot mode). */
export interface RobotBridgeHooks {
  /** Unix time, ms (may be fractional), of stamp_ns = 0. */
  stampOriginUnixMs: number;
  /** The robot clock now, integer ns since the origin. */
  nowNs(): number;
  /** Loads the clip and binding for `runId` (a prepare); rejects with the reason to refuse it. */
  prepare(runId: string, clip: MotionClip, binding: WbcBinding): Promise<void>;
  /** stamp_ns of time 0 of the episode lease.run() has just begun (called right after run()); null if it did not begin. */
  episodeStartNs(runId: string): number | null;
  /** Damps the motors at once (every damp command, before any episode is stopped). */
  damp(reason: string): void;
  /** Holds the current pose (every hold command, after the episode, if any, is stopped). */
  hold(reason: string): void;
  /** True while the motors are damped: an episode ending then leaves the state `damping`. */
  isDamping(): boolean;
  /** Optional: true while a runner's declared standing controller drives the motors (an episode ending then leaves `standing`). */
  isStanding?(): boolean;
  /** Optional: the runner's own state, sent as `wbc_status.runner` with every status. */
  runnerStatus?(): RunnerStatus;
}

/** A client channel the server accepts besides /console/command. */
export interface ClientChannelHandler {
  topic: string;
  /** Handles one message; the answer goes to the sender as a Foxglove status (info if ok, error if not) with `id`. */
  handle(data: Uint8Array, client: string): { ok: boolean; message: string; id?: string };
}

export interface BridgeServerStats {
  clients: number;
  /** Name (address:port) of the controlling client, null when none. */
  controller: string | null;
  state: WbcState;
  published: { lowstate: number; rootState: number; wbcStatus: number };
  commands: { accepted: number; refused: number; malformed: number };
  /** Clients disconnected for not reading their stream. */
  slowClientsDropped: number;
}

export interface BridgeServer {
  /** ws://host:port */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  stats(): BridgeServerStats;
  close(): Promise<void>;
  /** Robot mode: the robot changed state on its own (e-stop, human reset); ignored while an episode runs. Drops what was prepared. */
  robotState(state: WbcState, reason: string): void;
  /** Publishes nothing (no topic) for `ms` from now; the connections stay open. */
  suspendPublishing(ms: number): void;
  /** Terminates every client connection at once; returns how many. */
  dropClients(): number;
  /** Whether an episode is running. */
  readonly episodeRunning: boolean;
}

/** Ids of the Foxglove status messages a client may act on (docs/G1_BRIDGE.md, "Status messages"). */
export const STATUS_ID = {
  controlGranted: 'g1-bridge/control-granted',
  controlRefused: 'g1-bridge/control-refused',
  refused: (seq: number | null): string => `g1-bridge/refused/${seq ?? 'unknown'}`,
} as const;

const SEND_HIGH_WATER_BYTES = 4 * 1024 * 1024;
const SEND_LOW_WATER_BYTES = 512 * 1024;

interface ClientState {
  ws: WebSocket;
  name: string;
  /** Its advertised /console/command channel id, if any. */
  commandChannel: number | null;
}

interface Episode {
  runId: string;
  clip: MotionClip;
  /** stamp_ns of episode time 0. */
  startNs: number;
  /** performance.now() at episode time 0, for pacing. */
  wallStartMs: number;
  frames: number;
  lastTimeS: number;
  refFrame: number;
  /** The command that ended it early, if any. */
  stopCause: 'stop' | 'damp' | 'hold' | 'disconnect' | 'shutdown' | null;
  /** Frames the backend produced after the stop and that were not published. */
  droppedAfterStop: number;
  /** Robot mode: the run began by lease.run(), its promise. */
  robotRun?: Promise<EpisodeEnd>;
  listenerEnded: boolean;
  done: Promise<void>;
}

const bracketed = (h: string): string => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function startBridgeServer(options: BridgeServerOptions): Promise<BridgeServer> {
  const session = new BridgeSession(options);
  await session.listen();
  return session;
}

class BridgeSession implements BridgeServer {
  readonly host: string;
  port = 0;
  private readonly backend: Backend;
  private readonly speed: number;
  private readonly log: (line: string) => void;
  private readonly foxglove: FoxgloveServerInstance;
  private readonly wss: WebSocketServer;
  private readonly clients = new Map<WebSocket, ClientState>();
  private readonly channels: { lowstate: number; rootState: number | null; wbcStatus: number };
  private readonly rootSource: RootStateSource;
  private readonly sessionTag = randomBytes(3).toString('hex');
  private readonly startHr = process.hrtime.bigint();
  private readonly startEpochNs: bigint;
  private readonly robot: RobotBridgeHooks | null;
  private readonly extraChannels: Map<string, ClientChannelHandler>;
  private suspendedUntil = 0;
  private suspendedFrames = 0;
  private heartbeat: NodeJS.Timeout | null = null;

  private controller: ClientState | null = null;
  private state: WbcState = 'idle';
  private lease: BackendLease | null = null;
  private prepared: { clip: MotionClip; binding: WbcBinding; seed: number } | null = null;
  private episode: Episode | null = null;
  private lastEpisode: {
    runId: string;
    clipId: string;
    frame: number;
    startNs: number;
    outcome: EpisodeOutcome;
    reason: string;
  } | null = null;
  private reason = '';
  private runCounter = 0;
  private tick = 0;
  private lastStampNs = -1;
  /** Serialises reset/prepare/start; stop/damp/hold bypass it. */
  private chain: Promise<void> = Promise.resolve();
  /** Bumped by every stop/damp/hold: queued commands from before it are cancelled. */
  private stopEpoch = 0;
  /** The connection whose message FoxgloveServer is handling (to attribute its 'error' events). */
  private handling: ClientState | null = null;
  private listenerBusy = 0;
  private closing = false;
  private readonly counts = {
    published: { lowstate: 0, rootState: 0, wbcStatus: 0 },
    commands: { accepted: 0, refused: 0, malformed: 0 },
    slowClientsDropped: 0,
  };

  constructor(private readonly options: BridgeServerOptions) {
    this.backend = options.backend;
    this.host = options.host ?? '127.0.0.1';
    this.speed = options.speed ?? 1;
    if (!(this.speed >= 0) || !Number.isFinite(this.speed)) throw new Error(`speed must be ≥ 0, got ${options.speed}`);
    this.log = options.log ?? (() => {});
    this.robot = options.robot ?? null;
    this.extraChannels = new Map((options.clientChannels ?? []).map((h) => [h.topic, h]));
    this.startEpochNs = this.robot
      ? BigInt(Math.round(this.robot.stampOriginUnixMs * 1e6))
      : BigInt(Date.now()) * 1_000_000n;
    const caps = this.backend.capabilities;
    this.rootSource = options.rootStateSource ?? (caps.executionDomain === 'simulation' ? 'sim' : 'mocap');
    this.foxglove = new FoxgloveServer({
      name: options.name ?? `motionbench ${this.backend.name}`,
      capabilities: [ServerCapability.clientPublish],
      supportedEncodings: ['json'],
      metadata: {
        ...options.extraMetadata,
        [G1_BRIDGE_METADATA.contract]: G1_BRIDGE_CONTRACT,
        [G1_BRIDGE_METADATA.executionDomain]: caps.executionDomain,
        [G1_BRIDGE_METADATA.stateRateHz]: String(caps.stateRateHz),
        [G1_BRIDGE_METADATA.exactReset]: String(caps.exactReset),
        [G1_BRIDGE_METADATA.bindingKinds]: caps.bindingKinds.join(','),
        [G1_BRIDGE_METADATA.contacts]: String(caps.contacts),
        [G1_BRIDGE_METADATA.jointTorque]: String(caps.jointTorque),
        [G1_BRIDGE_METADATA.commands]: (caps.exactReset
          ? ['prepare', 'start', 'stop', 'damp', 'hold', 'reset']
          : ['prepare', 'start', 'stop', 'damp', 'hold']
        ).join(','),
        [G1_BRIDGE_METADATA.backendId]: this.backend.id,
        [G1_BRIDGE_METADATA.backendName]: this.backend.name,
        ...(this.robot ? { [G1_BRIDGE_METADATA.stampOriginUnixMs]: String(this.robot.stampOriginUnixMs) } : {}),
      },
    });
    this.channels = {
      lowstate: this.foxglove.addChannel(g1BridgeChannel('lowstate', G1_BRIDGE_TOPICS.lowstate)),
      rootState: caps.globalRootPosition
        ? this.foxglove.addChannel(g1BridgeChannel('rootState', G1_BRIDGE_TOPICS.rootState))
        : null,
      wbcStatus: this.foxglove.addChannel(g1BridgeChannel('wbcStatus', G1_BRIDGE_TOPICS.wbcStatus)),
    };
    this.foxglove.on('advertise', (ch) =>
      this.onAdvertise(ch.client.connection as unknown as WebSocket, ch.id, ch.topic, ch.encoding, ch.schemaName),
    );
    this.foxglove.on('unadvertise', (ch) =>
      this.onUnadvertise(ch.client.connection as unknown as WebSocket, ch.channelId),
    );
    this.foxglove.on('message', (ev) =>
      this.onClientMessage(ev.client.connection as unknown as WebSocket, ev.channel.id, ev.channel.topic, ev.data),
    );
    this.foxglove.on('error', (err) => this.onProtocolError(err));
    this.foxglove.on('subscribe', (channelId) => {
      if (channelId === this.channels.wbcStatus) this.publishStatus();
    });
    this.wss = new WebSocketServer({
      host: this.host,
      port: options.port ?? 0,
      handleProtocols: (protocols) => this.foxglove.handleProtocols(protocols),
      maxPayload: G1_BRIDGE_LIMITS.commandBytes * 2,
      perMessageDeflate: false,
    });
    this.wss.on('connection', (ws, req) => this.onConnection(ws, req));
    this.backend.setListener((events) => this.onBackendEvents(events));
  }

  get url(): string {
    return `ws://${bracketed(this.host)}:${this.port}`;
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => {
        this.backend.setListener(null);
        reject(new Error(`cannot listen on ${bracketed(this.host)}:${this.options.port ?? 0}: ${err.message}`));
      };
      this.wss.once('error', onError);
      this.wss.once('listening', () => {
        this.wss.off('error', onError);
        this.wss.on('error', (err) => this.log(`serve: server error: ${err.message}`));
        const addr = this.wss.address();
        this.port = typeof addr === 'object' && addr ? addr.port : (this.options.port ?? 0);
        const hz = this.options.heartbeatHz ?? 5;
        if (hz > 0) {
          this.heartbeat = setInterval(() => this.publishStatus(), 1000 / hz);
          this.heartbeat.unref();
        }
        resolve();
      });
    });
  }

  stats(): BridgeServerStats {
    return {
      clients: this.clients.size,
      controller: this.controller?.name ?? null,
      state: this.state,
      published: { ...this.counts.published },
      commands: { ...this.counts.commands },
      slowClientsDropped: this.counts.slowClientsDropped,
    };
  }

  get episodeRunning(): boolean {
    return this.episode !== null;
  }

  robotState(state: WbcState, reason: string): void {
    if (this.episode || this.closing) return;
    if (this.lease) {
      const lease = this.lease;
      this.lease = null;
      void lease.release().catch(() => {});
    }
    this.prepared = null;
    this.setState(state, reason);
  }

  suspendPublishing(ms: number): void {
    this.suspendedUntil = Math.max(this.suspendedUntil, performance.now() + ms);
  }

  private get suspended(): boolean {
    return this.suspendedUntil > 0 && performance.now() < this.suspendedUntil;
  }

  dropClients(): number {
    const all = [...this.clients.values()];
    for (const c of all) c.ws.terminate();
    return all.length;
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    const ep = this.episode;
    if (ep && this.lease) {
      ep.stopCause = 'shutdown';
      await this.lease.stop('aborted_by_operator', 'bridge server shutting down').catch(() => {});
      await Promise.race([ep.done, sleep(5000)]);
    }
    if (this.lease) await this.lease.release().catch(() => {});
    this.lease = null;
    this.backend.setListener(null);
    for (const c of this.clients.values()) c.ws.close(1001, 'server shutting down');
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        for (const c of this.clients.values()) c.ws.terminate();
      }, 1000);
      this.wss.close(() => {
        clearTimeout(force);
        resolve();
      });
    });
    if (this.options.closeBackend ?? true) await this.backend.close();
  }

  // -------------------------------------------------------------------------------------------
  // Connections and control

  private onConnection(ws: WebSocket, req: IncomingMessage): void {
    const name = `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`;
    if (ws.protocol !== FOXGLOVE_SUBPROTOCOL) {
      this.log(`serve: ${name} refused: no ${FOXGLOVE_SUBPROTOCOL} subprotocol`);
      ws.close(1002, `subprotocol ${FOXGLOVE_SUBPROTOCOL} required`);
      return;
    }
    const client: ClientState = { ws, name, commandChannel: null };
    this.clients.set(ws, client);
    ws.on('error', (err) => this.log(`serve: ${name}: ${err.message}`));
    ws.on('close', () => this.onDisconnect(client));
    const activity = this.options.onClientActivity;
    if (activity) ws.on('ping', () => activity(name));
    this.foxglove.handleConnection(ws as never, name);
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
    this.log(`serve: ${name} connected (${this.clients.size} client${this.clients.size === 1 ? '' : 's'})`);
  }

  private onDisconnect(client: ClientState): void {
    this.clients.delete(client.ws);
    this.log(`serve: ${client.name} disconnected`);
    if (this.controller === client) this.releaseControl(client, 'controlling client disconnected', 'disconnect');
  }

  private releaseControl(client: ClientState, why: string, cause: 'disconnect' | 'stop'): void {
    if (this.controller !== client) return;
    this.controller = null;
    this.log(`serve: ${client.name} released control (${why})`);
    if (this.episode) void this.stopEpisode(cause === 'disconnect' ? 'disconnect' : 'stop', 'aborted_by_operator', why);
  }

  private onAdvertise(
    ws: WebSocket,
    channelId: number,
    topic: string,
    encoding: string,
    schemaName: string | undefined,
  ): void {
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
      this.counts.commands.refused++;
      this.status(
        client,
        'error',
        `${G1_BRIDGE_TOPICS.command} must use JSON encoding, not ${encoding}; its messages are ignored`,
      );
      return;
    }
    if (schemaName && schemaName !== G1_BRIDGE_SCHEMA_NAMES.command) {
      this.counts.commands.refused++;
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

  private onUnadvertise(ws: WebSocket, channelId: number): void {
    const client = this.clients.get(ws);
    if (!client || client.commandChannel !== channelId) return;
    client.commandChannel = null;
    this.releaseControl(client, 'controlling client unadvertised its command channel', 'stop');
  }

  /** Grants control when nobody holds it; true if `client` controls afterwards. */
  private claimControl(client: ClientState): boolean {
    if (this.controller === client) return true;
    if (this.controller === null) {
      this.controller = client;
      this.log(`serve: ${client.name} controls ${this.backend.name}`);
      this.status(client, 'info', `${G1_BRIDGE_CONTRACT}: you control ${this.backend.name}`, STATUS_ID.controlGranted);
      return true;
    }
    this.status(
      client,
      'warn',
      `${this.backend.name} is controlled by ${this.controller.name}; you may watch, your commands are refused until it lets go`,
      STATUS_ID.controlRefused,
    );
    return false;
  }

  /** A Foxglove status to one client; `id` marks control changes and refusals for machines (docs/G1_BRIDGE.md). */
  private status(client: ClientState, level: 'info' | 'warn' | 'error', message: string, id?: string): void {
    const lvl = level === 'info' ? StatusLevel.INFO : level === 'warn' ? StatusLevel.WARNING : StatusLevel.ERROR;
    try {
      this.foxglove.sendStatus({ level: lvl, message, ...(id ? { id } : {}) }, client.ws as never);
    } catch {
      // the connection is going away; its close handler cleans up
    }
  }

  private broadcastStatus(level: 'info' | 'warn' | 'error', message: string): void {
    for (const c of this.clients.values()) this.status(c, level, message);
  }

  private onProtocolError(err: Error): void {
    const client = this.handling;
    this.counts.commands.malformed++;
    const msg = `malformed client message (#${this.counts.commands.malformed}): ${err?.message ?? String(err)}`;
    this.log(`serve: ${client?.name ?? 'a client'}: ${msg}`);
    if (client) this.status(client, 'error', msg);
  }

  // -------------------------------------------------------------------------------------------
  // Commands

  private onClientMessage(ws: WebSocket, channelId: number, topic: string, data: ArrayBufferView): void {
    const client = this.clients.get(ws);
    if (!client) return;
    const extra = this.extraChannels.get(topic);
    if (extra) {
      const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      let r: { ok: boolean; message: string; id?: string };
      try {
        r = extra.handle(bytes, client.name);
      } catch (err) {
        r = { ok: false, message: `${topic}: ${(err as Error)?.message ?? String(err)}` };
      }
      this.log(`serve: ${client.name}: ${topic}: ${r.ok ? '' : 'refused: '}${r.message}`);
      this.status(client, r.ok ? 'info' : 'error', r.message, r.id);
      return;
    }
    if (topic !== G1_BRIDGE_TOPICS.command || client.commandChannel !== channelId) {
      this.counts.commands.refused++;
      this.status(
        client,
        'error',
        `message on ${topic} ignored: only ${G1_BRIDGE_TOPICS.command} (${G1_BRIDGE_SCHEMA_NAMES.command}, JSON) is accepted`,
      );
      return;
    }
    const decoded = decodeCommand(data);
    const isController = this.controller === client || (this.controller === null && this.claimControl(client));
    if (!decoded.ok) {
      if (decoded.code === 'malformed' || decoded.code === 'oversized') this.counts.commands.malformed++;
      else this.counts.commands.refused++;
      this.log(`serve: ${client.name}: command refused (${decoded.code}): ${decoded.reason}`);
      this.status(
        client,
        'error',
        `${decoded.command ?? 'command'} refused (${decoded.code}): ${decoded.reason}`,
        STATUS_ID.refused(decoded.seq),
      );
      if (isController)
        this.ack({
          seq: decoded.seq,
          command: decoded.command,
          ok: false,
          code: decoded.code,
          message: decoded.reason,
        });
      return;
    }
    const cmd = decoded.value;
    if (!isController) {
      this.counts.commands.refused++;
      this.status(
        client,
        'error',
        `${cmd.command} refused (not_controller): ${this.backend.name} is controlled by ${this.controller?.name ?? 'another client'}`,
        STATUS_ID.refused(cmd.seq),
      );
      return;
    }
    switch (cmd.command) {
      case 'stop':
      case 'damp':
      case 'hold':
        this.stopEpoch++;
        void this.execStop(cmd, client);
        return;
      default: {
        const epoch = this.stopEpoch;
        this.chain = this.chain.then(async () => {
          if (epoch !== this.stopEpoch)
            return this.refuse(client, cmd, 'bad_state', `cancelled: a stop/damp/hold arrived after it`);
          try {
            await this.execQueued(cmd, client);
          } catch (err) {
            this.refuse(client, cmd, 'backend_error', (err as Error)?.message ?? String(err));
          }
        });
      }
    }
  }

  private ack(ack: CommandAck): void {
    this.publishStatus(ack);
  }

  private accept(cmd: BridgeCommand, message: string): void {
    this.counts.commands.accepted++;
    this.ack({ seq: cmd.seq, command: cmd.command, ok: true, code: 'ok', message });
  }

  private refuse(
    client: ClientState,
    cmd: { seq: number | null; command: CommandName },
    code: AckCode,
    message: string,
  ): void {
    this.counts.commands.refused++;
    this.log(`serve: ${client.name}: ${cmd.command} refused (${code}): ${message}`);
    this.status(client, 'error', `${cmd.command} refused (${code}): ${message}`, STATUS_ID.refused(cmd.seq));
    this.ack({ seq: cmd.seq, command: cmd.command, ok: false, code, message });
  }

  private async ensureLease(runId: string | null): Promise<BackendLease> {
    if (this.lease && (runId === null || runId === this.lease.runId)) return this.lease;
    if (this.lease) {
      const old = this.lease;
      this.lease = null;
      await old.release();
    }
    const id = runId ?? `serve-${this.sessionTag}-${++this.runCounter}`;
    this.lease = await this.backend.acquire(id);
    return this.lease;
  }

  private async execQueued(
    cmd: Exclude<BridgeCommand, { command: 'stop' | 'damp' | 'hold' }>,
    client: ClientState,
  ): Promise<void> {
    if (this.controller !== client)
      return this.refuse(client, cmd, 'not_controller', 'control was lost before the command ran');
    if (this.episode)
      return this.refuse(client, cmd, 'bad_state', `an episode is running (${this.episode.runId}); stop it first`);
    switch (cmd.command) {
      case 'reset': {
        if (!this.backend.capabilities.exactReset)
          return this.refuse(client, cmd, 'unsupported', `${this.backend.name} cannot be reset to an exact state`);
        const lease = await this.ensureLease(cmd.runId);
        try {
          await lease.reset(cmd.initial);
        } catch (err) {
          return this.refuse(client, cmd, 'backend_error', `reset failed: ${(err as Error)?.message ?? String(err)}`);
        }
        this.lastEpisode = null;
        this.setState(this.prepared ? 'ready' : 'idle', 'reset', false);
        return this.accept(cmd, `reset done (run ${lease.runId})`);
      }
      case 'prepare': {
        const kinds = this.backend.capabilities.bindingKinds;
        if (!kinds.includes(cmd.binding.kind)) {
          return this.refuse(
            client,
            cmd,
            'unsupported',
            `binding kind ${cmd.binding.kind} is not supported here (supported: ${kinds.join(', ')})`,
          );
        }
        const lease = await this.ensureLease(cmd.runId);
        if (this.robot) {
          try {
            await this.robot.prepare(lease.runId, cmd.clip, cmd.binding);
          } catch (err) {
            return this.refuse(
              client,
              cmd,
              'backend_error',
              `prepare failed: ${(err as Error)?.message ?? String(err)}`,
            );
          }
        }
        this.prepared = { clip: cmd.clip, binding: cmd.binding, seed: cmd.seed };
        this.lastEpisode = null;
        this.setState('ready', `prepared ${cmd.clip.name}`, false);
        return this.accept(
          cmd,
          `prepared clip ${cmd.clip.id} (${cmd.clip.frameCount} frames at ${cmd.clip.fps} fps) with ${cmd.binding.id}@${cmd.binding.version}, run ${lease.runId}`,
        );
      }
      case 'start': {
        if (this.state !== 'ready' || !this.prepared || !this.lease) {
          return this.refuse(
            client,
            cmd,
            'bad_state',
            `start needs a prepared clip (state is ${this.state}); send prepare first`,
          );
        }
        if (cmd.runId !== null && cmd.runId !== this.lease.runId) {
          return this.refuse(
            client,
            cmd,
            'bad_state',
            `run_id ${cmd.runId} does not match the prepared episode ${this.lease.runId}`,
          );
        }
        this.counts.commands.accepted++;
        // The tracking status (with the ack) goes out before the backend can produce a frame.
        this.startEpisode(this.lease, this.prepared, {
          seq: cmd.seq,
          command: 'start',
          ok: true,
          code: 'ok',
          message: `started run ${this.lease.runId}`,
        });
        return;
      }
    }
  }

  private async execStop(
    cmd: Extract<BridgeCommand, { command: 'stop' | 'damp' | 'hold' }>,
    client: ClientState,
  ): Promise<void> {
    const outcome = cmd.command === 'stop' ? cmd.outcome : 'aborted_by_operator';
    if (this.robot && cmd.command === 'damp') this.robot.damp(cmd.reason);
    if (this.episode) {
      const runId = this.episode.runId;
      const ok = await this.stopEpisode(cmd.command, outcome, cmd.reason);
      if (this.robot && cmd.command === 'hold') this.robot.hold(cmd.reason);
      if (!ok.ok) return this.refuse(client, cmd, 'backend_error', `stop failed: ${ok.error}`);
      return this.accept(cmd, `${cmd.command}: stopping run ${runId} (${outcome})`);
    }
    if (this.robot && cmd.command === 'hold') this.robot.hold(cmd.reason);
    // Nothing running: drop any prepared episode and report the requested mode.
    if (this.lease) {
      const lease = this.lease;
      this.lease = null;
      await lease.release().catch(() => {});
    }
    this.prepared = null;
    if (cmd.command === 'damp' || (this.robot?.isDamping() ?? false)) this.setState('damping', cmd.reason, false);
    else this.setState('idle', cmd.reason, false);
    return this.accept(cmd, `${cmd.command}: nothing was running`);
  }

  private async stopEpisode(
    cause: NonNullable<Episode['stopCause']>,
    outcome: 'aborted_by_operator' | 'estop' | 'intervention',
    reason: string,
  ): Promise<{ ok: true } | { ok: false; error: string }> {
    const ep = this.episode;
    const lease = this.lease;
    if (!ep || !lease) return { ok: true };
    ep.stopCause ??= cause;
    try {
      await lease.stop(outcome, reason);
      return { ok: true };
    } catch (err) {
      return { ok: false, error: (err as Error)?.message ?? String(err) };
    }
  }

  // -------------------------------------------------------------------------------------------
  // Episodes and publishing

  private clockNs(): number {
    if (this.robot) return this.robot.nowNs();
    return Number(process.hrtime.bigint() - this.startHr);
  }

  private startEpisode(
    lease: BackendLease,
    prepared: { clip: MotionClip; binding: WbcBinding; seed: number },
    ack: CommandAck,
  ): void {
    const periodNs = Math.round(1e9 / Math.max(1, this.backend.capabilities.stateRateHz));
    // Robot mode: the robot begins the episode in run() (at its next sample) and says when its time 0 is.
    const robotRun = this.robot
      ? lease.run({ clip: prepared.clip, binding: prepared.binding, seed: prepared.seed })
      : undefined;
    const robotStart = this.robot ? this.robot.episodeStartNs(lease.runId) : null;
    const startNs = robotStart ?? Math.max(this.clockNs(), this.lastStampNs + periodNs);
    let resolveDone!: () => void;
    const ep: Episode = {
      runId: lease.runId,
      clip: prepared.clip,
      startNs,
      wallStartMs: performance.now(),
      frames: 0,
      lastTimeS: 0,
      refFrame: 0,
      stopCause: null,
      droppedAfterStop: 0,
      robotRun,
      listenerEnded: false,
      done: new Promise<void>((r) => (resolveDone = r)),
    };
    this.episode = ep;
    this.setState('tracking', `tracking ${prepared.clip.name}`, false);
    this.ack(ack);
    const wallT0 = performance.now();
    (robotRun ?? lease.run({ clip: prepared.clip, binding: prepared.binding, seed: prepared.seed }))
      .then(
        (end) => end,
        (err): EpisodeEnd => ({
          runId: ep.runId,
          outcome: 'infrastructure_error',
          reason: `backend run failed: ${(err as Error)?.message ?? String(err)}`,
          frames: ep.frames,
          simSeconds: ep.lastTimeS,
          wallSeconds: (performance.now() - wallT0) / 1000,
        }),
      )
      .then(async (end) => {
        // Frames are published by the listener, possibly after run() resolved: let it finish.
        for (let i = 0; i < 200 && !ep.listenerEnded && this.listenerBusy > 0; i++) await sleep(5);
        await new Promise((r) => setImmediate(r));
        while (this.listenerBusy > 0) await sleep(5);
        await this.finishEpisode(ep, lease, end);
      })
      .catch((err) => this.log(`serve: finishing run ${ep.runId} failed: ${(err as Error)?.message ?? String(err)}`))
      .finally(() => resolveDone());
  }

  private async finishEpisode(ep: Episode, lease: BackendLease, end: EpisodeEnd): Promise<void> {
    if (this.episode !== ep) return;
    this.episode = null;
    if (this.lease === lease) this.lease = null;
    await lease
      .release()
      .catch((err) => this.log(`serve: release of ${ep.runId} failed: ${(err as Error)?.message ?? String(err)}`));
    this.prepared = null;
    const cause = ep.stopCause;
    let reason = end.reason;
    if (ep.droppedAfterStop > 0)
      reason += ` (${ep.droppedAfterStop} frames computed after the stop were not published)`;
    this.lastEpisode = {
      runId: ep.runId,
      clipId: ep.clip.id,
      frame: ep.refFrame,
      startNs: ep.startNs,
      outcome: end.outcome,
      reason,
    };
    const state: WbcState =
      cause === 'damp' || (this.robot?.isDamping() ?? false)
        ? 'damping'
        : cause === 'hold'
          ? 'idle'
          : (this.robot?.isStanding?.() ?? false)
            ? 'standing'
            : end.outcome === 'infrastructure_error'
              ? 'fault'
              : 'done';
    this.log(`serve: run ${ep.runId} ended: ${end.outcome} after ${ep.frames} frames (${reason})`);
    this.setState(state, reason);
  }

  /** Changes the state; `publish` false when an ack (which carries the state) follows at once. */
  private setState(state: WbcState, reason: string, publish = true): void {
    this.state = state;
    this.reason = reason;
    if (publish) this.publishStatus();
  }

  private statusMessage(ack?: CommandAck): WbcStatusMsg {
    const ep = this.episode;
    const last = this.lastEpisode;
    const clipId = ep?.clip.id ?? this.prepared?.clip.id ?? last?.clipId ?? null;
    const msg: WbcStatusMsg = {
      state: this.state,
      clip_id: clipId,
      frame: ep ? ep.refFrame : last ? last.frame : null,
      stamp_ns: Math.max(this.clockNs(), this.lastStampNs),
      run_id: ep?.runId ?? this.lease?.runId ?? last?.runId ?? null,
      episode_start_ns: ep?.startNs ?? last?.startNs ?? null,
      outcome: ep ? null : (last?.outcome ?? null),
      reason: this.reason,
    };
    if (ack) msg.ack = ack;
    const runner = this.options.robot?.runnerStatus?.();
    if (runner) msg.runner = runner;
    return msg;
  }

  private publishStatus(ack?: CommandAck): void {
    if (this.closing && !ack) return;
    if (this.suspended) return;
    const msg = this.statusMessage(ack);
    this.send(this.channels.wbcStatus, msg.stamp_ns ?? 0, msg);
    this.counts.published.wbcStatus++;
  }

  private send(channel: number, stampNs: number, msg: unknown): void {
    const bytes = Buffer.from(JSON.stringify(msg), 'utf8');
    try {
      this.foxglove.sendMessage(channel, this.startEpochNs + BigInt(stampNs), bytes);
    } catch (err) {
      this.log(`serve: send failed: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  private async onBackendEvents(events: BackendEvent[]): Promise<void> {
    this.listenerBusy++;
    try {
      for (const ev of events) {
        switch (ev.type) {
          case 'frames':
            await this.publishFrames(ev.frames);
            break;
          case 'episode_end':
            if (this.episode && this.episode.runId === ev.end.runId) this.episode.listenerEnded = true;
            break;
          case 'presence':
            this.broadcastStatus(ev.presence === 'present' ? 'info' : 'warn', `${this.backend.name}: ${ev.presence}`);
            break;
          case 'problem':
            this.broadcastStatus(
              ev.problem.severity === 'warn' ? 'warn' : ev.problem.severity,
              `${this.backend.name}: ${ev.problem.code}: ${ev.problem.message}`,
            );
            break;
        }
      }
    } finally {
      this.listenerBusy--;
    }
  }

  private async publishFrames(frames: StateFrame[]): Promise<void> {
    if (this.robot) return this.publishRobotFrames(frames);
    for (const f of frames) {
      const ep = this.episode;
      if (this.closing) return;
      if (ep && ep.stopCause) {
        ep.droppedAfterStop++;
        continue;
      }
      let stampNs: number;
      if (ep) {
        if (ep.frames === 0) ep.wallStartMs = performance.now() - (this.speed > 0 ? (f.timeS * 1000) / this.speed : 0);
        if (this.speed > 0) {
          const due = ep.wallStartMs + (f.timeS * 1000) / this.speed;
          const wait = due - performance.now();
          if (wait > 1) await sleep(wait);
          if (ep.stopCause) {
            ep.droppedAfterStop++;
            continue;
          }
        }
        stampNs = ep.startNs + Math.round(f.timeS * 1e9);
        ep.frames++;
        ep.lastTimeS = f.timeS;
        ep.refFrame = Math.min(ep.clip.frameCount - 1, Math.max(0, Math.round(f.timeS * ep.clip.fps)));
      } else {
        stampNs = this.clockNs();
      }
      if (stampNs <= this.lastStampNs) stampNs = this.lastStampNs + 1;
      this.lastStampNs = stampNs;
      if (this.channels.rootState !== null) {
        const root = rootStateFromFrame(f, stampNs, this.rootSource);
        if (root) {
          this.send(this.channels.rootState, stampNs, root);
          this.counts.published.rootState++;
        }
      }
      const low = lowStateFromFrame(f, ++this.tick, stampNs);
      // ref_frame is the clip frame (at the clip's own fps) the episode time corresponds to.
      if (ep) low.ref_frame = ep.refFrame;
      else delete low.ref_frame;
      this.send(this.channels.lowstate, stampNs, low);
      this.counts.published.lowstate++;
      await this.drainSlowClients();
    }
  }

  /** Robot mode: every frame at once, with the robot's tick and stamp (timeS on the robot clock). */
  private async publishRobotFrames(frames: StateFrame[]): Promise<void> {
    for (const f of frames) {
      if (this.closing) return;
      if (this.suspended) {
        this.suspendedFrames++;
        continue;
      }
      const ep = this.episode;
      let stampNs = Math.round(f.timeS * 1e9);
      if (stampNs < this.lastStampNs) stampNs = this.lastStampNs;
      this.lastStampNs = stampNs;
      if (ep && !ep.stopCause && f.referenceFrame !== null) {
        ep.frames++;
        ep.lastTimeS = (stampNs - ep.startNs) / 1e9;
        ep.refFrame = f.referenceFrame;
      }
      if (this.channels.rootState !== null) {
        const root = rootStateFromFrame(f, stampNs, this.rootSource);
        if (root) {
          this.send(this.channels.rootState, stampNs, root);
          this.counts.published.rootState++;
        }
      }
      this.tick = f.tick;
      const low = lowStateFromFrame(f, f.tick, stampNs);
      if (!(ep && f.referenceFrame !== null)) delete low.ref_frame;
      this.send(this.channels.lowstate, stampNs, low);
      this.counts.published.lowstate++;
    }
    await this.drainSlowClients();
  }

  /** Holds the stream while a client's send buffer is above the high-water mark; drops clients that stay there. */
  private async drainSlowClients(): Promise<void> {
    const over = (): ClientState[] =>
      [...this.clients.values()].filter((c) => c.ws.bufferedAmount > SEND_HIGH_WATER_BYTES);
    if (over().length === 0) return;
    const deadline = performance.now() + (this.options.slowClientTimeoutMs ?? 3000);
    while (performance.now() < deadline) {
      await sleep(10);
      if ([...this.clients.values()].every((c) => c.ws.bufferedAmount <= SEND_LOW_WATER_BYTES)) return;
    }
    for (const c of over()) {
      this.counts.slowClientsDropped++;
      this.log(`serve: ${c.name} dropped: it did not read its stream (${c.ws.bufferedAmount} bytes queued)`);
      c.ws.terminate();
    }
  }
}
