import { Buffer } from 'node:buffer';
import WebSocket from 'ws';
import type { Problem } from '../../domain/backend/backend';
import type { BackendProblemCode } from '../../domain/backend/problemCodes';
import {
  G1_BRIDGE_CONTRACT,
  G1_BRIDGE_METADATA,
  G1_BRIDGE_TOPICS,
  type WireCommand,
} from '../../domain/bridge/g1BridgeContract';
import { g1BridgeChannel } from '../../domain/bridge/g1BridgeSchemas';
import { ROS2_LINK_WATCH_ONLY_REASON, stampOriginOf } from '../../domain/robotLink/serverCapabilities';
import { UNITREE_LOWSTATE_TOPIC } from '../../domain/robotLink/unitreeLowState';
import { checkedServerSocket } from './checkedServerSocket';
import {
  FOXGLOVE_CLIENT_SUBPROTOCOLS,
  FoxgloveClient,
  type Channel,
  type FoxgloveClientInstance,
  type ServerInfo,
  type StatusMessage,
} from './foxgloveWs';
import type { LinkClock } from './linkClock';
import { isRos2UnitreeLowState, Ros2LowStateDecoder } from './ros2LowStateDecoder';

// One WebSocket connection to a g1-bridge/1 server (the socket I/O of the console's client): opens
// it offering the Foxglove subprotocols (foxglove.websocket.v1, and foxglove.sdk.v1 for servers
// built on the Foxglove SDK such as foxglove_bridge 3.x: the same protocol under a new name, see
// docs/ROS2_LINK.md §1.1; a refused handshake is reported naming both), checks every server frame
// before the library parses it, reads serverInfo (contract, metadata, whether client messages are
// accepted), subscribes to the state topics of the contract's version and JSON encoding,
// advertises /console/command, follows the server's control statuses, pings, and writes commands.
// A reconnect is a new connection: this object never outlives its socket, so nothing of an old
// socket can leak into a new one.
//
// It reports to its owner: `opened`, `ready` once the server has said what it is AND advertised
// its lowstate (the capabilities are read from both, and a caller starts work the moment the
// link is present), each message of a subscribed topic, status messages, refused frames, problems
// of what the server is (unsupported contract or encoding, watch-only, bad metadata), pongs, and
// `closed` once (not after the owner itself dropped or closed it).
//
// A ROS 2 robot through foxglove_bridge (docs/ROS2_LINK.md) is recognised here too: a server that
// names no contract and says it is a ROS bridge (metadata `ROS_DISTRO`, or `cdr` among its
// supported encodings — ros2_foxglove_bridge.cpp sets both) gets no /console/command (foxglove_bridge
// would make a ROS publisher of it), and its `/lowstate` (unitree_hg/msg/LowState, CDR, ros2msg) is
// subscribed with a decoder built from the definition it advertises, once that definition has been
// bounded and parsed off this thread (Ros2LowStateDecoder.fromChannel). Such a connection is `ros2`:
// ready once that channel is checked and subscribed, never able to take commands. A channel the
// link reads that is advertised with a schema over the protocol limit, or a refused definition,
// is a problem naming the topic and why.

export interface ConnectionHandlers {
  opened(): void;
  ready(): void;
  /** `logTimeNs`: the Foxglove message's timestamp (the publisher's clock, ns). */
  message(topic: string, data: ArrayBufferView, logTimeNs: bigint): void;
  status(s: StatusMessage): void;
  badFrame(reason: string): void;
  problem(severity: Problem['severity'], code: BackendProblemCode, message: string): void;
  /** A ping's round trip, ms. */
  pong(rttMs: number): void;
  log(line: string): void;
  closed(why: string): void;
}

const WANTED_TOPICS: readonly string[] = [
  G1_BRIDGE_TOPICS.lowstate,
  G1_BRIDGE_TOPICS.rootState,
  G1_BRIDGE_TOPICS.wbcStatus,
];
/** A ping without an answer for this long no longer blocks the next one, ms. */
const PING_STALE_MS = 5000;

export class G1BridgeConnection {
  /** serverInfo metadata (empty before it arrives). */
  metadata: Record<string, string> = {};
  /** The server said whether this client controls it: true/false, null before (or never, for bridges that do not say). */
  controlKnown: boolean | null = null;
  controlRefused = false;
  /**
   * The server is a ROS 2 foxglove_bridge (no g1-bridge/1 contract): known from its serverInfo, or
   * at the latest when it advertises a unitree_hg LowState channel.
   */
  ros2 = false;
  /** The decoder of the subscribed ROS 2 `/lowstate` channel (its advertised definition); null before. */
  ros2LowState: Ros2LowStateDecoder | null = null;
  /** The id of the `/lowstate` channel whose definition is being checked (off this thread); null when none. */
  private ros2Checking: number | null = null;
  private readonly ws: WebSocket;
  private readonly client: FoxgloveClientInstance;
  private readonly channels = new Map<number, Channel>();
  private readonly subscriptions = new Map<number, string>();
  private commandChannel: number | null = null;
  private serverInfoSeen = false;
  private isReady = false;
  /** No more events: the socket closed, or the owner dropped or closed it. */
  private dead = false;
  private pingSentAtMs: number | null = null;
  /** The socket opened (the handshake succeeded). */
  private wsOpened = false;
  /** Why the handshake failed (the first socket error before it opened); null when it did not. */
  private handshakeError: string | null = null;

  /** Opens the socket; throws when the URL cannot be opened at all. */
  constructor(
    readonly url: string,
    private readonly o: { clock: LinkClock; handshakeTimeoutMs: number },
    private readonly h: ConnectionHandlers,
  ) {
    this.ws = new WebSocket(url, [...FOXGLOVE_CLIENT_SUBPROTOCOLS], {
      perMessageDeflate: false,
      handshakeTimeout: o.handshakeTimeoutMs,
    });
    const ws = this.ws;
    const live = (): boolean => !this.dead;
    ws.on('open', () => (this.wsOpened = true));
    ws.on('error', (err: Error) => {
      if (!this.wsOpened) this.handshakeError ??= err?.message ?? String(err);
    });
    ws.on('pong', () => {
      if (!live() || this.pingSentAtMs === null) return;
      const rtt = this.o.clock.nowMs() - this.pingSentAtMs;
      this.pingSentAtMs = null;
      this.h.pong(rtt);
    });
    // Every frame is checked before the library parses it; a bad one is a counted problem.
    const client = new FoxgloveClient({
      ws: checkedServerSocket(ws, {
        onBadFrame: (reason) => live() && this.h.badFrame(reason),
        onRefusedChannel: (ch, reason) => live() && this.onRefusedChannel(ch.topic, reason),
      }),
    });
    this.client = client;
    client.on('open', () => live() && this.h.opened());
    client.on('serverInfo', (info) => live() && this.onServerInfo(info));
    client.on('advertise', (chs) => live() && this.onAdvertise(chs));
    client.on('unadvertise', (ids) => {
      if (!live()) return;
      for (const id of ids) this.channels.delete(id);
      if (this.ros2Checking !== null && ids.includes(this.ros2Checking)) this.ros2Checking = null;
      for (const [sub, topic] of this.subscriptions) if (!this.advertises(topic)) this.subscriptions.delete(sub);
    });
    client.on('message', (m) => {
      if (!live()) return;
      const topic = this.subscriptions.get(m.subscriptionId);
      if (topic !== undefined) this.h.message(topic, m.data, m.timestamp);
    });
    client.on('status', (s) => live() && this.onStatus(s));
    client.on('error', (err) => live() && this.h.log(`bridge client: ${url}: ${err?.message ?? String(err)}`));
    client.on('close', () => {
      if (!live()) return;
      this.dead = true;
      this.h.closed(
        this.wsOpened || this.handshakeError === null ? 'connection closed' : handshakeFailure(this.handshakeError),
      );
    });
  }

  /** The subprotocol the server picked ('' before the socket opened). */
  get subprotocol(): string {
    return this.ws.protocol;
  }

  /** The topics the server advertises (and this client reads). */
  advertisedTopics(): Set<string> {
    return new Set([...this.channels.values()].map((c) => c.topic));
  }

  /** `stamp_origin_unix_ms` of the server, parsed; null when absent or invalid. */
  get stampOriginUnixMs(): number | null {
    return stampOriginOf(this.metadata);
  }

  /** The server accepts commands from this client on this (live) connection. */
  get hasCommandChannel(): boolean {
    return !this.dead && this.commandChannel !== null;
  }

  /** Commands can be written now: the socket is open and the command channel advertised (freshness aside). */
  canWrite(): boolean {
    return this.hasCommandChannel && this.ws.readyState === WebSocket.OPEN;
  }

  /** Writes one command with its seq on the command channel (throws what the socket throws). */
  write(cmd: WireCommand, seq: number): void {
    if (this.commandChannel === null) throw new Error('no command channel');
    this.client.sendMessage(
      this.commandChannel,
      Buffer.from(JSON.stringify({ ...cmd, seq, contract: G1_BRIDGE_CONTRACT }), 'utf8'),
    );
  }

  /** Sends a WebSocket ping unless one is in flight (for at most PING_STALE_MS). */
  ping(): void {
    if (this.dead || this.ws.readyState !== WebSocket.OPEN) return;
    const now = this.o.clock.nowMs();
    if (this.pingSentAtMs !== null && now - this.pingSentAtMs < PING_STALE_MS) return;
    this.pingSentAtMs = now;
    try {
      this.ws.ping();
    } catch {
      this.pingSentAtMs = null;
    }
  }

  /** Drops the socket at once (no `closed` event): a polite close, terminated after 1 s at the latest. */
  drop(code: number, reason: string): void {
    this.dead = true;
    try {
      this.ws.close(code, reason);
    } catch {
      this.ws.terminate();
    }
    this.o.clock.setTimeout(() => this.ws.terminate(), 1000, { keepAlive: false });
  }

  /** Closes the socket (no `closed` event) and resolves once it is closed (terminated after 1 s). */
  close(reason: string): Promise<void> {
    this.dead = true;
    const ws = this.ws;
    return new Promise<void>((resolve) => {
      if (ws.readyState === WebSocket.CLOSED) return resolve();
      const t = this.o.clock.setTimeout(() => {
        ws.terminate();
        resolve();
      }, 1000);
      ws.once('close', () => {
        this.o.clock.clearTimeout(t);
        resolve();
      });
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(1000, reason);
    });
  }

  private advertises(topic: string): boolean {
    for (const c of this.channels.values()) if (c.topic === topic) return true;
    return false;
  }

  private onServerInfo(info: ServerInfo): void {
    this.metadata = { ...(info.metadata ?? {}) };
    const contract = this.metadata[G1_BRIDGE_METADATA.contract];
    this.ros2 =
      contract === undefined &&
      (this.metadata.ROS_DISTRO !== undefined || (info.supportedEncodings ?? []).includes('cdr'));
    if (contract !== undefined && contract !== G1_BRIDGE_CONTRACT) {
      this.h.problem(
        'error',
        'unsupported_contract',
        `${this.url} speaks ${contract}, not ${G1_BRIDGE_CONTRACT}; not using it`,
      );
      this.ws.close(1000, 'unsupported contract');
      return;
    }
    if (this.ros2) {
      // Not a g1-bridge/1 runner: nothing to command (the backend declares the link watch-only).
      this.reportRos2WatchOnly();
    } else if (!info.capabilities.includes('clientPublish')) {
      this.h.problem(
        'warn',
        'watch_only',
        `${this.url} does not accept client messages: it can be watched, not controlled`,
      );
    } else {
      this.commandChannel = this.client.advertise(g1BridgeChannel('command', G1_BRIDGE_TOPICS.command));
    }
    const originKey = G1_BRIDGE_METADATA.stampOriginUnixMs;
    if (this.metadata[originKey] !== undefined && this.stampOriginUnixMs === null) {
      this.h.problem(
        'warn',
        'bad_metadata',
        `${this.url}: ${originKey} is not a number ("${this.metadata[originKey]}"); one-way latency not measured`,
      );
    }
    this.serverInfoSeen = true;
    this.readyWhenKnown();
  }

  private onAdvertise(chs: Channel[]): void {
    for (const ch of chs) {
      // `/lowstate` is no g1-bridge/1 topic: read as ROS 2 only from a server that names no contract.
      const contract = this.metadata[G1_BRIDGE_METADATA.contract];
      if (
        ch.topic === UNITREE_LOWSTATE_TOPIC &&
        contract === undefined &&
        !this.advertises(ch.topic) &&
        this.ros2Checking === null
      ) {
        this.onRos2LowStateChannel(ch);
        continue;
      }
      if (!WANTED_TOPICS.includes(ch.topic)) continue;
      if (ch.schemaName.startsWith('g1-bridge/') && !ch.schemaName.startsWith(`${G1_BRIDGE_CONTRACT}/`)) {
        this.h.problem(
          'error',
          'unsupported_contract',
          `${ch.topic} has schema ${ch.schemaName}; this console reads ${G1_BRIDGE_CONTRACT}; not subscribed`,
        );
        continue;
      }
      if (ch.encoding !== 'json') {
        this.h.problem(
          'error',
          'unsupported_encoding',
          `${ch.topic} is ${ch.encoding}-encoded; ${G1_BRIDGE_CONTRACT} is JSON; not subscribed`,
        );
        continue;
      }
      if (this.advertises(ch.topic)) continue;
      this.channels.set(ch.id, ch);
      this.subscriptions.set(this.client.subscribe(ch.id), ch.topic);
    }
    this.readyWhenKnown();
  }

  /**
   * A `/lowstate` channel: its definition is checked off this thread (Ros2LowStateDecoder), then
   * the channel is subscribed when it is unitree_hg's LowState in CDR within the bounds; else a
   * problem naming the topic and why. Advertisements that come meanwhile are handled as they come.
   */
  private onRos2LowStateChannel(ch: Channel): void {
    if (!isRos2UnitreeLowState(ch)) {
      this.h.problem(
        'error',
        'unsupported_encoding',
        `${ch.topic} is ${ch.schemaName} (${ch.encoding}/${ch.schemaEncoding ?? '?'}); a ROS 2 robot link reads unitree_hg/msg/LowState (cdr/ros2msg); not subscribed`,
      );
      return;
    }
    this.ros2Checking = ch.id;
    Ros2LowStateDecoder.fromChannel(ch).then(
      (decoder) => this.onRos2LowStateChecked(ch, decoder),
      (err: unknown) => {
        if (this.dead || this.ros2Checking !== ch.id) return;
        this.ros2Checking = null;
        this.h.problem(
          'error',
          'unsupported_encoding',
          `${ch.topic}: advertised definition refused: ${(err as Error)?.message ?? String(err)}; not subscribed`,
        );
      },
    );
  }

  /** The checked `/lowstate` channel, still advertised on a live socket: subscribed, and the link ready. */
  private onRos2LowStateChecked(ch: Channel, decoder: Ros2LowStateDecoder): void {
    if (this.dead || this.ros2Checking !== ch.id) return; // closed, or unadvertised meanwhile
    this.ros2Checking = null;
    if (!this.ros2 || this.commandChannel !== null) {
      // A server that did not say it is a ROS bridge but serves unitree_hg: still no commands to it.
      this.ros2 = true;
      if (this.commandChannel !== null) this.client.unadvertise(this.commandChannel);
      this.commandChannel = null;
      this.reportRos2WatchOnly();
    }
    this.ros2LowState = decoder;
    this.channels.set(ch.id, ch);
    this.subscriptions.set(this.client.subscribe(ch.id), ch.topic);
    this.readyWhenKnown();
  }

  /** A channel left out of an advertisement (schema over the limit): a problem when it is one this link reads. */
  private onRefusedChannel(topic: string, reason: string): void {
    const contract = this.metadata[G1_BRIDGE_METADATA.contract];
    const read = WANTED_TOPICS.includes(topic) || (topic === UNITREE_LOWSTATE_TOPIC && contract === undefined);
    if (!read) return this.h.log(`bridge client: ${this.url}: ${reason}; not read`);
    this.h.problem('error', 'unsupported_encoding', `${reason}; not subscribed`);
  }

  /** The `watch_only` condition of a ROS 2 bridge (the Connections panel shows why it cannot run clips). */
  private reportRos2WatchOnly(): void {
    this.h.problem('warn', 'watch_only', `${this.url}: ${ROS2_LINK_WATCH_ONLY_REASON}`);
  }

  /**
   * Ready once the server has said what it is (serverInfo) and advertised its lowstate — not at
   * serverInfo alone: the channels decide the capabilities (a root_state channel = a global root),
   * and the advertisement is a separate message that can arrive in a later read on a loaded machine.
   */
  private readyWhenKnown(): void {
    const lowstate = this.ros2LowState !== null ? UNITREE_LOWSTATE_TOPIC : G1_BRIDGE_TOPICS.lowstate;
    if (this.isReady || !this.serverInfoSeen || !this.advertises(lowstate)) return;
    this.isReady = true;
    this.h.ready();
  }

  private onStatus(s: StatusMessage): void {
    // The server marks control and command refusals (docs/G1_BRIDGE.md, "Status messages").
    if (s.id === 'g1-bridge/control-refused') this.controlRefused = true;
    if (s.id === 'g1-bridge/control-granted') this.controlRefused = false;
    if (s.id === 'g1-bridge/control-refused' || s.id === 'g1-bridge/control-granted')
      this.controlKnown = !this.controlRefused;
    this.h.status(s);
  }
}

/**
 * Why a WebSocket handshake failed, in words an operator can act on: a server that speaks none of
 * the offered subprotocols refuses the upgrade (HTTP 400 from foxglove_bridge 0.8.x and 3.x alike)
 * or, if it does not check, answers without one; either way the subprotocols are named.
 */
export function handshakeFailure(error: string): string {
  const offered = FOXGLOVE_CLIENT_SUBPROTOCOLS.join(' or ');
  const status = /Unexpected server response: (\d+)/.exec(error)?.[1];
  if (status === '400')
    return (
      `WebSocket handshake refused with HTTP 400: the console offers the subprotocols ${offered}, ` +
      `and a Foxglove server that speaks neither refuses the handshake this way`
    );
  if (status !== undefined) return `WebSocket handshake refused with HTTP ${status}`;
  if (/Server sent (no|an invalid) subprotocol/.test(error))
    return `${error}: the console needs a Foxglove WebSocket server speaking ${offered}`;
  return error;
}
