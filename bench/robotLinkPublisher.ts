import { Buffer } from 'node:buffer';
import type { AddressInfo } from 'node:net';
import process from 'node:process';
import readline from 'node:readline';
import { WebSocketServer } from 'ws';
import {
  G1_BRIDGE_CONTRACT,
  G1_BRIDGE_METADATA,
  G1_BRIDGE_TOPICS,
  type WbcState,
} from '../src/domain/bridge/g1BridgeContract';
import { g1BridgeChannel } from '../src/domain/bridge/g1BridgeSchemas';
import { FoxgloveServer, ServerCapability } from '../src/services/robotLink/foxgloveWs';

// A minimal robot-like g1-bridge/1 publisher, run as its own process by the robot-link benchmark
// (bench/robotLinkLatency.ts) and tests (test/integration/robotLinkClient.test.ts):
//
//   node --import tsx bench/robotLinkPublisher.ts [--rate 500] [--port 0]
//
// It streams /g1/lowstate at --rate Hz from start-up: frames due by the clock are sent at every
// 1 ms wake-up (so 5 kHz goes out in bursts of ~5), each stamped with its sample time — when it
// was due, t0 + n/rate on performance.now()'s clock, in ns — as a robot bridge stamps samples,
// not sends (stamps at sending would bunch a burst at one instant and look like jitter of
// several periods). It declares `stamp_origin_unix_ms` = performance.timeOrigin, so a client on
// the same host measures one-way latency from the sample time, which includes the publisher's
// wake-up delay (≤ ~1 ms). /g1/wbc_status is a 100 ms heartbeat and answers
// prepare/start/stop/damp/hold with acks (a robot: no reset, no root_state). It prints one JSON
// line {url, rateHz} when listening, and one JSON line per command received.
//
// stdin, one command per line: `freeze` (stop lowstate, keep the heartbeat), `resume`,
// `skip <n>` (leave n ticks out once), `quit`; and, to play a broken or hostile bridge in the
// tests (test/helpers/hostileBridge.ts): `raw <text>` (send <text> verbatim as a text frame to
// every client: malformed protocol messages), `ack-delay <command> <ms>` (answer that command
// only after <ms>), `no-ack <command>` (never answer it), `stall <ms>` (block this process's
// event loop for <ms>: a robot PC that hangs — nothing is sent or read meanwhile).

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a non-negative number`);
  return v;
}

const rateHz = arg('rate', 500);
const port = arg('port', 0);
const J = 29;

const server = new FoxgloveServer({
  name: 'motionbench robot-link publisher',
  capabilities: [ServerCapability.clientPublish],
  supportedEncodings: ['json'],
  metadata: {
    [G1_BRIDGE_METADATA.contract]: G1_BRIDGE_CONTRACT,
    [G1_BRIDGE_METADATA.executionDomain]: 'real_robot',
    [G1_BRIDGE_METADATA.stateRateHz]: String(rateHz),
    [G1_BRIDGE_METADATA.exactReset]: 'false',
    [G1_BRIDGE_METADATA.bindingKinds]: 'builtin,remote',
    [G1_BRIDGE_METADATA.commands]: 'prepare,start,stop,damp,hold',
    [G1_BRIDGE_METADATA.stampOriginUnixMs]: String(performance.timeOrigin),
  },
});
const lowstate = server.addChannel(g1BridgeChannel('lowstate', G1_BRIDGE_TOPICS.lowstate));
const wbcStatus = server.addChannel(g1BridgeChannel('wbcStatus', G1_BRIDGE_TOPICS.wbcStatus));
server.on('error', () => {});

const nowNs = (): number => Math.round(performance.now() * 1e6);

let state: WbcState = 'idle';
let runId: string | null = null;
let episodeStartNs: number | null = null;
let outcome: string | null = null;

function status(ack?: {
  seq: number | null;
  command: string | null;
  ok: boolean;
  code: string;
  message: string;
}): void {
  const msg = {
    state,
    clip_id: null,
    frame: null,
    stamp_ns: nowNs(),
    run_id: runId,
    episode_start_ns: episodeStartNs,
    outcome,
    ...(ack ? { ack } : {}),
  };
  server.sendMessage(wbcStatus, BigInt(Date.now()) * 1_000_000n, Buffer.from(JSON.stringify(msg), 'utf8'));
}

server.on('message', (ev) => {
  let cmd: { command?: string; seq?: number; args?: Record<string, unknown> } = {};
  try {
    cmd = JSON.parse(Buffer.from(ev.data.buffer, ev.data.byteOffset, ev.data.byteLength).toString('utf8'));
  } catch {
    return;
  }
  const seq = typeof cmd.seq === 'number' ? cmd.seq : null;
  const name = cmd.command ?? null;
  const args = cmd.args ?? {};
  process.stdout.write(
    `${JSON.stringify({ command: name, seq, reason: args.reason ?? null, outcome: args.outcome ?? null })}\n`,
  );
  const delay = name !== null ? ackDelayMs.get(name) : undefined;
  const ok = (message: string): void => {
    if (delay === Infinity) return;
    if (delay !== undefined) setTimeout(() => status({ seq, command: name, ok: true, code: 'ok', message }), delay);
    else status({ seq, command: name, ok: true, code: 'ok', message });
  };
  switch (name) {
    case 'prepare':
      state = 'ready';
      runId = typeof args.run_id === 'string' ? args.run_id : 'run';
      episodeStartNs = null;
      outcome = null;
      return ok('prepared');
    case 'start':
      state = 'tracking';
      episodeStartNs = nowNs();
      return ok(`started run ${runId}`);
    case 'stop':
    case 'damp':
    case 'hold':
      if (state === 'tracking') outcome = typeof args.outcome === 'string' ? args.outcome : 'aborted_by_operator';
      state = name === 'stop' ? (state === 'tracking' ? 'done' : 'idle') : name === 'damp' ? 'damping' : 'idle';
      return ok(name);
    default:
      return status({
        seq,
        command: null,
        ok: false,
        code: 'unsupported',
        message: `${String(name)} is not supported here`,
      });
  }
});

const wss = new WebSocketServer({
  host: '127.0.0.1',
  port,
  handleProtocols: (p) => server.handleProtocols(p),
  perMessageDeflate: false,
});
wss.on('connection', (ws, req) =>
  server.handleConnection(ws as never, `${req.socket.remoteAddress}:${req.socket.remotePort}`),
);

let frozen = false;
/** Commands whose ack is delayed (ms; Infinity = never answered). */
const ackDelayMs = new Map<string, number>();
let skip = 0;
let tick = 0;
let sent = 0;
const q = new Array<number>(J).fill(0);
const zeros = new Array<number>(J).fill(0);
const t0 = performance.now();

function publishDue(): void {
  const due = Math.floor(((performance.now() - t0) * rateHz) / 1000);
  // After a stall, send at most 1 s of backlog (a robot does not queue its past either).
  if (due - sent > rateHz) sent = due - Math.ceil(rateHz);
  while (sent < due) {
    sent++;
    tick++;
    if (skip > 0) {
      skip--;
      continue;
    }
    if (frozen) continue;
    const t = tick / rateHz;
    for (let j = 0; j < J; j++) q[j] = 0.2 * Math.sin(t + j);
    const body = {
      tick,
      stamp_ns: Math.round((t0 + (sent * 1000) / rateHz) * 1e6),
      q,
      dq: zeros,
      tau_est: zeros,
      imu: { quat_wxyz: [1, 0, 0, 0], gyro: [0, 0, 0], accel: [0, 0, 9.81] },
    };
    server.sendMessage(lowstate, BigInt(Date.now()) * 1_000_000n, Buffer.from(JSON.stringify(body), 'utf8'));
  }
}

wss.on('listening', () => {
  const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  process.stdout.write(`${JSON.stringify({ url, rateHz })}\n`);
  setInterval(publishDue, 1);
  setInterval(() => status(), 100);
});

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const [cmd, n = ''] = line.trim().split(/\s+/);
  if (cmd === 'freeze') frozen = true;
  else if (cmd === 'resume') frozen = false;
  else if (cmd === 'skip') skip += Number(n) || 0;
  else if (cmd === 'quit') process.exit(0);
  else if (cmd === 'raw') {
    const text = line.trim().slice(4);
    for (const c of wss.clients) c.send(text);
  } else if (cmd === 'ack-delay') ackDelayMs.set(n, Number(line.trim().split(/\s+/)[2]) || 0);
  else if (cmd === 'no-ack') ackDelayMs.set(n, Infinity);
  else if (cmd === 'stall') {
    const until = performance.now() + (Number(n) || 0);
    while (performance.now() < until) {
      // busy: the process hangs
    }
  }
});
process.stdin.on('end', () => process.exit(0));
