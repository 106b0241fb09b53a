import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parse } from '@foxglove/rosmsg';
import { MessageWriter } from '@foxglove/rosmsg2-serialization';
import { WebSocketServer } from 'ws';
import {
  FOXGLOVE_SDK_SUBPROTOCOL,
  FOXGLOVE_SUBPROTOCOL,
  FoxgloveServer,
  type FoxgloveServerInstance,
} from '../../src/services/robotLink/foxgloveWs';
import { sharedData } from './sharedData';

// A stand-in for a G1 running unitree_ros2 with foxglove_bridge (ROS 2): a Foxglove WebSocket
// server on loopback that says what ros2_foxglove_bridge.cpp says (supportedEncodings
// ["cdr", "json"], metadata {ROS_DISTRO}, the bridge's default capabilities incl. clientPublish)
// and advertises `/lowstate` the way it does (encoding "cdr", schemaName
// "unitree_hg/msg/LowState", schemaEncoding "ros2msg", schema = LowState.msg, then per dependency
// 80 '=' + "MSG: unitree_hg/msg/<Type>" + its text — message_definition_cache.cpp, delimiter()).
// Messages are CDR built with @foxglove/rosmsg2-serialization's MessageWriter from Unitree's own
// LowState.msg, IMUState.msg and MotorState.msg (read from ../shared/data/ros2, BSD-3-Clause,
// © Unitree Robotics — see ../shared/data/ros2/LICENSE; never copied into this repo), published at
// 500 Hz with the bridge's receive time (ns since the Unix epoch) as the message timestamp.
//
// Two generations of foxglove_bridge (docs/ROS2_LINK.md §Bridge versions): `version: '0.8'` (the
// default) accepts only the subprotocol foxglove.websocket.v1, as the websocketpp server of
// foxglove_bridge ≤ 0.8.5 does; `version: '3'` accepts only foxglove.sdk.v1, as foxglove_bridge
// 3.x on the Foxglove SDK does (rust/foxglove/src/websocket/handshake.rs), and says in serverInfo
// what the SDK adds: metadata `fg-library` and a sessionId. Both refuse a client that offers none
// of their subprotocols with HTTP 400 "Missing expected sec-websocket-protocol header" (the SDK's
// words; websocketpp's validate handler also answers 400). After the handshake both speak the same
// messages.
//
// Every sample is a still G1 (calibration can capture it) whose every motor slot and IMU field
// holds a distinct value; what was sent is kept by tick so a test can compare bit for bit.

export const UNITREE_MSG_DIR = sharedData('ros2/unitree_hg/msg');
const SEPARATOR = '='.repeat(80);

const msgText = (type: string): string => fs.readFileSync(`${UNITREE_MSG_DIR}/${type}.msg`, 'utf8');

/** The definition text foxglove_bridge advertises for unitree_hg/msg/LowState (root, then its dependencies). */
export function lowStateDefinitionText(
  overrides: Partial<Record<'LowState' | 'IMUState' | 'MotorState', string>> = {},
): string {
  const text = (t: 'LowState' | 'IMUState' | 'MotorState'): string => overrides[t] ?? msgText(t);
  // get_full_text: the root's text, then for each dependency "\n" + delimiter + its text.
  return [
    text('LowState'),
    `\n${SEPARATOR}\nMSG: unitree_hg/msg/IMUState\n${text('IMUState')}`,
    `\n${SEPARATOR}\nMSG: unitree_hg/msg/MotorState\n${text('MotorState')}`,
  ].join('');
}

/** A MessageWriter for the real unitree_hg LowState definition. */
export function lowStateWriter(definition = lowStateDefinitionText()): MessageWriter {
  return new MessageWriter(parse(definition, { ros2: true }));
}

/** What one sent sample holds, as float32 values (the wire's precision). */
export interface SentLowState {
  tick: number;
  logTimeNs: bigint;
  q: Float32Array;
  dq: Float32Array;
  tauEst: Float32Array;
  quat: Float32Array;
  gyro: Float32Array;
  accel: Float32Array;
}

/**
 * The message object of sample `k`: motor slot i has q = 0.02·(i − 17) + 1e-4·sin(k/50 + i) (a still
 * pose, every slot distinct), dq, tau_est distinct per slot and small; the IMU is a unit quaternion
 * near upright (w, x, y, z), small gyro, accel ≈ +9.81 on z.
 */
export function lowStateMessage(
  k: number,
  tick: number,
): Record<string, unknown> & { sent: Omit<SentLowState, 'logTimeNs'> } {
  const q = new Float32Array(35);
  const dq = new Float32Array(35);
  const tau = new Float32Array(35);
  for (let i = 0; i < 35; i++) {
    q[i] = 0.02 * (i - 17) + 1e-4 * Math.sin(k / 50 + i);
    dq[i] = 1e-3 * Math.cos(k / 50 + i) + 1e-5 * i;
    tau[i] = 0.5 * (i + 1) + 1e-3 * Math.sin(k / 30);
  }
  const half = 0.02 + 1e-4 * Math.sin(k / 100);
  const quat = new Float32Array([Math.cos(half), 0.6 * Math.sin(half), 0.0 * Math.sin(half), 0.8 * Math.sin(half)]);
  const gyro = new Float32Array([0.001, -0.002, 0.003 + 1e-4 * Math.sin(k / 20)]);
  const accel = new Float32Array([0.11, -0.07, 9.81 + 1e-3 * Math.cos(k / 20)]);
  return {
    version: [1, 0],
    mode_pr: 0,
    mode_machine: 5,
    tick,
    imu_state: { quaternion: quat, gyroscope: gyro, accelerometer: accel, rpy: [0, 0, 0], temperature: 31 },
    motor_state: Array.from({ length: 35 }, (_, i) => ({
      mode: 1,
      q: q[i],
      dq: dq[i],
      ddq: 0,
      tau_est: tau[i],
      temperature: [30 + i, 31 + i],
      vol: 48,
      sensor: [0, 0],
      motorstate: 0,
      reserve: [0, 0, 0, 0],
    })),
    wireless_remote: new Uint8Array(40),
    reserve: [0, 0, 0, 0],
    crc: 0,
    sent: { tick, q, dq, tauEst: tau, quat, gyro, accel },
  };
}

export interface Ros2LowStateBridgeOptions {
  rateHz?: number;
  /** The definition text advertised AND used to write (default: the real unitree_hg one). */
  definition?: string;
  /** The definition used to write, when it must differ from the advertised one. */
  writeDefinition?: string;
  /** What is sent for sample k instead of the written CDR (a hostile payload); default: the written bytes. */
  payload?: (written: Uint8Array, k: number) => Uint8Array;
  /** Ticks advance by this per sample (default 2: 500 Hz on a 1 kHz counter). */
  tickStep?: number;
  /** First tick (default 1000). */
  firstTick?: number;
  /** serverInfo as a bridge that does not say it is ROS (default: foxglove_bridge's, ROS_DISTRO and cdr). */
  serverInfo?: { supportedEncodings: string[]; metadata: Record<string, string> };
  /** Which foxglove_bridge generation to stand in for (default '0.8'; see above). */
  version?: '0.8' | '3';
  /** The subprotocols the server accepts (default: the version's one); a client offering none of them gets HTTP 400. */
  acceptSubprotocols?: readonly string[];
}

/** The SDK's words when a client offers none of the server's subprotocols (handshake.rs). */
export const SUBPROTOCOL_REFUSAL = 'Missing expected sec-websocket-protocol header';

export interface Ros2LowStateBridge {
  url: string;
  /** Samples published so far. */
  readonly published: number;
  /** Sent samples by tick (the last 20 000). */
  readonly sent: Map<number, SentLowState>;
  /** Client channels the console advertised to this server (it must advertise none). */
  readonly clientAdvertisements: string[];
  /** Client channels the console withdrew (unadvertise). */
  readonly clientUnadvertisements: number;
  /** The subprotocol of each accepted connection, in order. */
  readonly connections: string[];
  /** Handshakes refused for want of an accepted subprotocol: what each client offered. */
  readonly refusedOffers: string[][];
  stop(): Promise<void>;
}

export async function startRos2LowStateBridge(options: Ros2LowStateBridgeOptions = {}): Promise<Ros2LowStateBridge> {
  const rateHz = options.rateHz ?? 500;
  const definition = options.definition ?? lowStateDefinitionText();
  const writer = lowStateWriter(options.writeDefinition ?? definition);
  const tickStep = options.tickStep ?? 2;
  const firstTick = options.firstTick ?? 1000;
  const sdk = options.version === '3';
  const accepted = options.acceptSubprotocols ?? [sdk ? FOXGLOVE_SDK_SUBPROTOCOL : FOXGLOVE_SUBPROTOCOL];
  const server: FoxgloveServerInstance = new FoxgloveServer({
    name: 'foxglove_bridge',
    // ros2_foxglove_bridge's default `capabilities` parameter (the same list in 0.8.x and 3.x).
    capabilities: ['clientPublish', 'parameters', 'parametersSubscribe', 'services', 'connectionGraph', 'assets'],
    supportedEncodings: options.serverInfo?.supportedEncodings ?? ['cdr', 'json'],
    metadata: options.serverInfo?.metadata ?? {
      ROS_DISTRO: sdk ? 'jazzy' : 'humble',
      // The SDK server adds its library identifier (server.rs server_info(); library_version.rs).
      ...(sdk ? { 'fg-library': 'foxglove-bridge/3.4.3 foxglove-sdk-cpp/0.26.0' } : {}),
    },
    ...(sdk ? { sessionId: String(Date.now()) } : {}),
  });
  const channel = server.addChannel({
    topic: '/lowstate',
    encoding: 'cdr',
    schemaName: 'unitree_hg/msg/LowState',
    schemaEncoding: 'ros2msg',
    schema: definition,
  });
  const clientAdvertisements: string[] = [];
  server.on('advertise', (ch) => clientAdvertisements.push(ch.topic));
  let clientUnadvertisements = 0;
  server.on('unadvertise', () => clientUnadvertisements++);
  server.on('error', () => {});
  const connections: string[] = [];
  const refusedOffers: string[][] = [];
  const offered = (header: string | string[] | undefined): string[] =>
    [header ?? []]
      .flat()
      .flatMap((h) => h.split(','))
      .map((p) => p.trim())
      .filter((p) => p.length > 0);
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    // Refuse the upgrade, as both bridges do, when none of the accepted subprotocols is offered.
    verifyClient: (info, done) => {
      const o = offered(info.req.headers['sec-websocket-protocol']);
      if (o.some((p) => accepted.includes(p))) return done(true);
      refusedOffers.push(o);
      done(false, 400, SUBPROTOCOL_REFUSAL);
    },
    handleProtocols: (protocols) => [...protocols].find((p) => accepted.includes(p)) ?? false,
    perMessageDeflate: false,
  });
  wss.on('connection', (ws, req) => {
    connections.push(ws.protocol);
    server.handleConnection(ws, `${req.socket.remoteAddress}:${req.socket.remotePort}`);
  });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const port = (wss.address() as { port: number }).port;

  const sent = new Map<number, SentLowState>();
  const startUnixNs = BigInt(Date.now()) * 1_000_000n;
  const t0 = performance.now();
  let k = 0;
  // Catch up every due sample on each timer turn (a 1 ms timer, never a busy loop).
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - t0) / 1000) * rateHz);
    for (; k < due; k++) {
      const tick = (firstTick + k * tickStep) >>> 0;
      const msg = lowStateMessage(k, tick);
      const logTimeNs = startUnixNs + BigInt(Math.round((k / rateHz) * 1e9));
      const written = writer.writeMessage(msg);
      const bytes = options.payload ? options.payload(written, k) : written;
      server.sendMessage(channel, logTimeNs, bytes as Uint8Array<ArrayBuffer>);
      sent.set(tick, { ...msg.sent, logTimeNs });
      if (sent.size > 20_000) sent.delete(sent.keys().next().value as number);
    }
  }, 1);

  return {
    url: `ws://127.0.0.1:${port}`,
    get published() {
      return k;
    },
    sent,
    clientAdvertisements,
    get clientUnadvertisements() {
      return clientUnadvertisements;
    },
    connections,
    refusedOffers,
    async stop() {
      clearInterval(timer);
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
