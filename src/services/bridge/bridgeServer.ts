import { randomBytes } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Backend, BackendCapabilities, BackendEvent } from '../../domain/backend/backend';
import {
  G1_BRIDGE_CONTRACT,
  G1_BRIDGE_LIMITS,
  G1_BRIDGE_METADATA,
  type CommandAck,
  type RootStateSource,
  type WbcState,
} from '../../domain/bridge/g1BridgeContract';
import { FoxgloveServer, ServerCapability, type FoxgloveServerInstance } from '../robotLink/foxgloveWs';
import { BridgeClients, type ClientChannelHandler, type CommandCounts } from './bridgeClients';
import { BridgeCommands } from './bridgeCommands';
import { CommandDecoder, type CommandDecoderOptions } from './commandDecoder';
import { BridgeRuns } from './bridgeRuns';
import { BridgeStream } from './bridgeStream';
import type { RobotBridgeHooks } from './robotBridgeHooks';

export { STATUS_ID, type ClientChannelHandler } from './bridgeClients';
export type { RobotBridgeHooks } from './robotBridgeHooks';

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
//
// The session composes its parts, each in its own file:
//   BridgeClients   bridgeClients.ts   connections, who controls, statuses, slow readers
//   BridgeCommands  bridgeCommands.ts  /console/command: decode, queue, answer, map onto the lease
//   BridgeRuns      bridgeRuns.ts      lease, prepared clip, running episode, the state (reducer:
//                                      src/domain/bridge/g1BridgeServerState.ts)
//   BridgeStream    bridgeStream.ts    channels, stamps, pacing of the published frames

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
  /** Where commands are decoded (default: up to 4 KiB on this thread, larger ones in a worker; commandDecoder.ts). */
  decoder?: CommandDecoderOptions;
}

export interface BridgeServerStats {
  clients: number;
  /** Name (address:port) of the controlling client, null when none. */
  controller: string | null;
  state: WbcState;
  published: { lowstate: number; rootState: number; wbcStatus: number };
  /** decodedOffThread: commands too large to decode on the server's thread (commandDecoder.ts). */
  commands: { accepted: number; refused: number; malformed: number; decodedOffThread: number };
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

const bracketed = (h: string): string => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h);

export async function startBridgeServer(options: BridgeServerOptions): Promise<BridgeServer> {
  const session = new BridgeSession(options);
  await session.listen();
  return session;
}

/** serverInfo metadata: the contract's keys (docs/G1_BRIDGE.md) after the caller's extra ones. */
function serverMetadata(
  backend: Backend,
  robot: RobotBridgeHooks | null,
  extra: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const caps: BackendCapabilities = backend.capabilities;
  return {
    ...extra,
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
    [G1_BRIDGE_METADATA.backendId]: backend.id,
    [G1_BRIDGE_METADATA.backendName]: backend.name,
    ...(robot ? { [G1_BRIDGE_METADATA.stampOriginUnixMs]: String(robot.stampOriginUnixMs) } : {}),
  };
}

class BridgeSession implements BridgeServer {
  readonly host: string;
  port = 0;
  private readonly backend: Backend;
  private readonly log: (line: string) => void;
  private readonly foxglove: FoxgloveServerInstance;
  private readonly wss: WebSocketServer;
  private readonly clients: BridgeClients;
  private readonly stream: BridgeStream;
  private readonly runs: BridgeRuns;
  private readonly commands: BridgeCommands;
  private readonly decoder: CommandDecoder;
  private readonly commandCounts: CommandCounts = { accepted: 0, refused: 0, malformed: 0 };
  private heartbeat: NodeJS.Timeout | null = null;
  private closing = false;

  constructor(private readonly options: BridgeServerOptions) {
    this.backend = options.backend;
    this.host = options.host ?? '127.0.0.1';
    const speed = options.speed ?? 1;
    if (!(speed >= 0) || !Number.isFinite(speed)) throw new Error(`speed must be ≥ 0, got ${options.speed}`);
    this.log = options.log ?? (() => {});
    const robot = options.robot ?? null;
    const caps = this.backend.capabilities;
    this.foxglove = new FoxgloveServer({
      name: options.name ?? `motionbench ${this.backend.name}`,
      capabilities: [ServerCapability.clientPublish],
      supportedEncodings: ['json'],
      metadata: serverMetadata(this.backend, robot, options.extraMetadata),
    });
    this.clients = new BridgeClients({
      foxglove: this.foxglove,
      backendName: this.backend.name,
      counts: this.commandCounts,
      clientChannels: options.clientChannels ?? [],
      slowClientTimeoutMs: options.slowClientTimeoutMs ?? 3000,
      ...(options.onClientActivity ? { onClientActivity: options.onClientActivity } : {}),
      onControlReleased: (why, cause) => {
        if (this.runs.episode)
          void this.runs.stopEpisode(cause === 'disconnect' ? 'disconnect' : 'stop', 'aborted_by_operator', why);
      },
      log: this.log,
    });
    this.stream = new BridgeStream({
      foxglove: this.foxglove,
      rootState: caps.globalRootPosition,
      rootSource: options.rootStateSource ?? (caps.executionDomain === 'simulation' ? 'sim' : 'mocap'),
      speed,
      robotClock: robot,
      episode: () => this.runs.episode,
      closing: () => this.closing,
      drain: () => this.clients.drainSlowClients(),
      log: this.log,
    });
    this.runs = new BridgeRuns({
      backend: this.backend,
      robot,
      sessionTag: randomBytes(3).toString('hex'),
      episodeStartNs: (periodNs) => this.stream.episodeStartNs(periodNs),
      statusStampNs: () => this.stream.statusStampNs(),
      publishStatus: (ack) => this.publishStatus(ack),
      log: this.log,
    });
    this.decoder = new CommandDecoder(options.decoder);
    this.commands = new BridgeCommands({
      backend: this.backend,
      robot,
      clients: this.clients,
      runs: this.runs,
      counts: this.commandCounts,
      decoder: this.decoder,
      ack: (ack) => this.publishStatus(ack),
      log: this.log,
    });
    this.foxglove.on('advertise', (ch) =>
      this.clients.onAdvertise(
        ch.client.connection as unknown as WebSocket,
        ch.id,
        ch.topic,
        ch.encoding,
        ch.schemaName,
      ),
    );
    this.foxglove.on('unadvertise', (ch) =>
      this.clients.onUnadvertise(ch.client.connection as unknown as WebSocket, ch.channelId),
    );
    this.foxglove.on('message', (ev) =>
      this.onClientMessage(ev.client.connection as unknown as WebSocket, ev.channel.id, ev.channel.topic, ev.data),
    );
    this.foxglove.on('error', (err) => this.clients.onProtocolError(err));
    this.foxglove.on('subscribe', (channelId) => {
      if (channelId === this.stream.channels.wbcStatus) this.publishStatus();
    });
    this.wss = new WebSocketServer({
      host: this.host,
      port: options.port ?? 0,
      handleProtocols: (protocols) => this.foxglove.handleProtocols(protocols),
      maxPayload: G1_BRIDGE_LIMITS.commandBytes * 2,
      perMessageDeflate: false,
    });
    this.wss.on('connection', (ws, req) => this.clients.onConnection(ws, req));
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
      controller: this.clients.controller?.name ?? null,
      state: this.runs.state,
      published: { ...this.stream.published },
      commands: { ...this.commandCounts, decodedOffThread: this.decoder.decodedOffThread },
      slowClientsDropped: this.clients.slowClientsDropped,
    };
  }

  get episodeRunning(): boolean {
    return this.runs.episode !== null;
  }

  robotState(state: WbcState, reason: string): void {
    if (this.runs.episode || this.closing) return;
    void this.runs.releaseLease();
    this.runs.dropPrepared();
    this.runs.apply({ type: 'robot_state', state }, reason);
  }

  suspendPublishing(ms: number): void {
    this.stream.suspend(ms);
  }

  dropClients(): number {
    return this.clients.terminateAll();
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.runs.shutdown();
    await this.decoder.close();
    this.backend.setListener(null);
    this.clients.closeAll(1001, 'server shutting down');
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => this.clients.terminateAll(), 1000);
      this.wss.close(() => {
        clearTimeout(force);
        resolve();
      });
    });
    if (this.options.closeBackend ?? true) await this.backend.close();
  }

  private onClientMessage(ws: WebSocket, channelId: number, topic: string, data: ArrayBufferView): void {
    const client = this.clients.get(ws);
    if (!client) return;
    if (this.clients.handleClientChannel(client, topic, data)) return;
    this.commands.onMessage(client, channelId, topic, data);
  }

  /** The status to every subscriber: on every change, with every ack, and as the heartbeat. */
  private publishStatus(ack?: CommandAck): void {
    if (this.closing && !ack) return;
    if (this.stream.suspended) return;
    this.stream.publishStatus(this.runs.statusMessage(ack));
  }

  private async onBackendEvents(events: BackendEvent[]): Promise<void> {
    this.runs.listenerEnter();
    try {
      for (const ev of events) {
        switch (ev.type) {
          case 'frames':
            await this.stream.publishFrames(ev.frames);
            break;
          case 'episode_end':
            this.runs.listenerEnded(ev.end.runId);
            break;
          case 'presence':
            this.clients.broadcastStatus(
              ev.presence === 'present' ? 'info' : 'warn',
              `${this.backend.name}: ${ev.presence}`,
            );
            break;
          case 'problem':
            this.clients.broadcastStatus(
              ev.problem.severity === 'warn' ? 'warn' : ev.problem.severity,
              `${this.backend.name}: ${ev.problem.code}: ${ev.problem.message}`,
            );
            break;
        }
      }
    } finally {
      this.runs.listenerLeave();
    }
  }
}
