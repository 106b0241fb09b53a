import { afterEach, describe, expect, it } from 'vitest';
import {
  G1_BRIDGE_TOPICS,
  bindingToWire,
  clipToWire,
  decodeWireClip,
  initialStateToWire,
  prepareCommand,
} from '../../src/domain/bridge';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { resampleClip } from '../../src/domain/motion/resample';
import { makeBuiltinBinding } from '../../src/domain/sim/builtinBinding';
import { initialStateFromClipFrame } from '../../src/domain/sim/initialState';
import type { RemoteBinding } from '../../src/domain/wbc/wbcBinding';
import { startBridgeServer, type BridgeServer } from '../../src/services/bridge/bridgeServer';
import type { CommandDecoderOptions } from '../../src/services/bridge/commandDecoder';
import { StatusLevel } from '../../src/services/robotLink/foxgloveWs';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { sharedData } from '../helpers/sharedData';
import { FakeBackend } from '../unit/bridgeFakeBackend';
import { PlainClient, sleep } from './bridgeTestClient';

// The g1-bridge/1 server over a deterministic fake backend, driven by a plain
// @foxglove/ws-protocol client: advertise, control, commands, acks, streams, refusals.

const HANDS_UP = loadClipFile(sharedData('motions/g1_moves/npz/B_HandsUp.npz')); // 441 frames at 60 fps
const SHORT = sliceClip(61); // the first second
const binding = makeBuiltinBinding();

/** The first n frames as a clip of their own (content id of those frames). */
function sliceClip(n: number): MotionClip {
  const c = HANDS_UP;
  const raw = {
    ...c,
    frameCount: n,
    rootPosM: c.rootPosM.slice(0, 3 * n),
    rootQuatWxyz: c.rootQuatWxyz.slice(0, 4 * n),
    jointPosRad: c.jointPosRad.slice(0, 29 * n),
    jointVelRadS: undefined,
  };
  const d = decodeWireClip(clipToWire(raw));
  if (!d.ok) throw new Error(d.reason);
  return d.value;
}

let server: BridgeServer | null = null;
const clients: PlainClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await server?.close();
  server = null;
});

async function setup(opts: { speed?: number; globalRoot?: boolean; decoder?: CommandDecoderOptions } = {}) {
  const backend = new FakeBackend({ globalRoot: opts.globalRoot ?? true });
  server = await startBridgeServer({ backend, speed: opts.speed ?? 0, heartbeatHz: 5, decoder: opts.decoder });
  const c = await PlainClient.connect(server.url);
  clients.push(c);
  return { backend, c };
}

function prepare(c: PlainClient, clip = SHORT, runId?: string): number {
  return c.command(
    prepareCommand({ clip, binding, seed: 3, ...(runId ? { runId } : {}) }) as unknown as Record<string, unknown>,
  );
}

describe('bridge server: advertise and control', () => {
  it('advertises the g1-bridge/1 topics with JSON schemas and its capabilities', async () => {
    const { c } = await setup();
    expect(server!.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    expect(c.serverInfo!.metadata).toMatchObject({
      contract: 'g1-bridge/1',
      execution_domain: 'simulation',
      state_rate_hz: '50',
      exact_reset: 'true',
      binding_kinds: 'builtin,remote',
    });
    expect(c.serverInfo!.capabilities).toContain('clientPublish');
    expect([...c.channels.keys()].sort()).toEqual(['/g1/lowstate', '/g1/root_state', '/g1/wbc_status']);
    const low = c.channels.get('/g1/lowstate')!;
    expect(low).toMatchObject({ encoding: 'json', schemaName: 'g1-bridge/1/LowState', schemaEncoding: 'jsonschema' });
    expect(JSON.parse(low.schema).required).toEqual(['tick', 'stamp_ns', 'q', 'dq', 'tau_est', 'imu']);
  });

  it('does not advertise root_state for a backend without a global root', async () => {
    const { c } = await setup({ globalRoot: false });
    expect([...c.channels.keys()].sort()).toEqual(['/g1/lowstate', '/g1/wbc_status']);
  });

  it('gives control to the first client that advertises commands; others watch and are refused', async () => {
    const { c } = await setup();
    c.advertiseCommands();
    await c.until(() => c.statuses.some((s) => s.id === 'g1-bridge/control-granted'), 3000, 'control granted');
    const watcher = await PlainClient.connect(server!.url);
    clients.push(watcher);
    watcher.advertiseCommands();
    await watcher.until(
      () => watcher.statuses.some((s) => s.id === 'g1-bridge/control-refused'),
      3000,
      'control refused',
    );
    const seq = watcher.command({ command: 'stop' });
    await watcher.until(() => watcher.statuses.some((s) => s.id === `g1-bridge/refused/${seq}`), 3000, 'refusal');
    expect(watcher.statuses.find((s) => s.id === `g1-bridge/refused/${seq}`)).toMatchObject({
      level: StatusLevel.ERROR,
      message: expect.stringMatching(/not_controller/),
    });
    // The watcher still sees the streams.
    await watcher.until(() => watcher.of(G1_BRIDGE_TOPICS.wbcStatus).length > 0, 3000, 'heartbeat');
    // When the controller leaves, the next command from the watcher takes control.
    await c.close();
    await sleep(100);
    const seq2 = watcher.command({ command: 'hold' });
    expect(await watcher.ack(seq2)).toMatchObject({ ok: true, code: 'ok' });
    expect(server!.stats().controller).not.toBeNull();
  });

  it('refuses a command channel of another contract version', async () => {
    const { c } = await setup();
    c.advertiseCommands('g1-bridge/2/Command');
    await c.until(() => c.statuses.some((s) => /not supported/.test(s.message)), 3000, 'refusal');
    expect(server!.stats().controller).toBeNull();
  });
});

describe('bridge server: commands and streams', () => {
  it('reset, prepare and start a clip: lowstate + root_state for every frame, ready → tracking → done', async () => {
    const { backend, c } = await setup();
    c.advertiseCommands();
    const initial = initialStateFromClipFrame(SHORT);
    const r = await c.ack(
      c.command({ command: 'reset', args: { initial_state: initialStateToWire(initial), run_id: 'ep-1' } }),
    );
    expect(r).toMatchObject({ ok: true, status: { state: 'idle', run_id: 'ep-1' } });
    expect(backend.resets).toEqual([initial]);
    const p = await c.ack(prepare(c));
    expect(p).toMatchObject({ ok: true, status: { state: 'ready', run_id: 'ep-1' } });
    const s = await c.ack(c.command({ command: 'start', args: { run_id: 'ep-1' } }));
    expect(s).toMatchObject({ ok: true, status: { state: 'tracking', run_id: 'ep-1', frame: 0 } });
    await c.until(() => c.statusMsgs().some((m) => m.state === 'done'), 10_000, 'done');
    const done = c.statusMsgs().find((m) => m.state === 'done');
    expect(done).toMatchObject({ run_id: 'ep-1', outcome: 'completed', frame: 60 });
    const K = resampleClip(SHORT, 50).frameCount; // 51
    const lows = c.of(G1_BRIDGE_TOPICS.lowstate).map((x) => x.msg);
    const roots = c.of(G1_BRIDGE_TOPICS.rootState).map((x) => x.msg);
    expect(lows).toHaveLength(K);
    expect(roots).toHaveLength(K);
    // stamps: episode time exactly, ticks strictly increasing, root_state stamped like its lowstate
    const t0 = s.status.episode_start_ns;
    lows.forEach((m, k) => {
      expect(m.stamp_ns - t0).toBe(Math.round((k / 50) * 1e9));
      expect(roots[k].stamp_ns).toBe(m.stamp_ns);
      expect(m.ref_frame).toBe(Math.round((k / 50) * 60));
      if (k > 0) expect(m.tick).toBeGreaterThan(lows[k - 1].tick);
    });
    // content: the fake's q = reference + 0.01·j, root = reference
    const ref = resampleClip(SHORT, 50);
    expect(lows[10].q[5]).toBeCloseTo(ref.jointPosRad[10 * 29 + 5] + 0.05, 12);
    expect(roots[10].pos).toEqual(Array.from(ref.rootPosM.subarray(30, 33)));
    expect(roots[10].source).toBe('sim');
    // the order of states seen
    const states = c
      .statusMsgs()
      .map((m) => m.state)
      .filter((st, i, a) => i === 0 || a[i - 1] !== st);
    expect(states.slice(-3)).toEqual(['ready', 'tracking', 'done']);
    expect(backend.calls).toEqual([
      'acquire ep-1',
      'reset ep-1',
      `run ep-1 ${SHORT.id}`,
      'end ep-1 completed',
      'release ep-1',
    ]);
    expect(server!.stats()).toMatchObject({
      state: 'done',
      published: { lowstate: K, rootState: K },
      commands: { accepted: 3, refused: 0, malformed: 0 },
    });
  });

  it('streams at the backend rate in real time (speed 1) and stops mid-clip', async () => {
    const { backend, c } = await setup({ speed: 1 });
    c.advertiseCommands();
    await c.ack(prepare(c, HANDS_UP));
    const s = await c.ack(c.command({ command: 'start' }));
    expect(s.ok).toBe(true);
    const runId = s.status.run_id;
    await c.until(() => c.of(G1_BRIDGE_TOPICS.lowstate).length >= 30, 5000, '30 frames');
    const stop = await c.ack(c.command({ command: 'stop', args: { reason: 'operator pressed stop' } }));
    expect(stop).toMatchObject({ ok: true, message: expect.stringMatching(/stopping run/) });
    await c.until(() => c.statusMsgs().some((m) => m.state === 'done'), 5000, 'done');
    const done = c.statusMsgs().find((m) => m.state === 'done');
    expect(done).toMatchObject({
      run_id: runId,
      outcome: 'aborted_by_operator',
      reason: expect.stringMatching(/operator pressed stop/),
    });
    const lows = c.of(G1_BRIDGE_TOPICS.lowstate);
    const n = lows.length;
    expect(n).toBeGreaterThanOrEqual(30);
    expect(n).toBeLessThan(resampleClip(HANDS_UP, 50).frameCount / 2);
    // measured arrival rate ≈ 50 Hz
    const span = (lows[n - 1].atMs - lows[0].atMs) / 1000;
    const rate = (n - 1) / span;
    expect(rate).toBeGreaterThan(45);
    expect(rate).toBeLessThan(55);
    await sleep(150);
    expect(c.of(G1_BRIDGE_TOPICS.lowstate).length).toBe(n); // nothing after the stop
    expect(backend.calls).toContain(`stop ${runId} aborted_by_operator`);
  });

  it('answers malformed messages with an error status and keeps the connection', async () => {
    const { c } = await setup();
    c.advertiseCommands();
    await c.until(() => c.statuses.length > 0, 3000, 'control status');
    const before = c.statuses.length;
    c.sendRaw('this is not json');
    c.sendRaw('{"command": "start", "seq": 5, "args": {"run_id": NaN}}');
    c.sendRaw(JSON.stringify({ command: 'fly', seq: 6 }));
    c.sendRaw(new Uint8Array([0xff, 0xfe]));
    c.ws.send('{"op": "nonsense"}'); // not even a Foxglove operation
    c.sendRaw('{}', 999); // data on a channel never advertised
    await c.until(() => c.statuses.length >= before + 6, 3000, 'six error statuses');
    const errs = c.statuses.slice(before);
    expect(errs.every((s) => s.level === StatusLevel.ERROR)).toBe(true);
    expect(errs.map((s) => s.message).join('\n')).toMatch(
      /invalid JSON[\s\S]*NaN is not a JSON number[\s\S]*unknown command the string "fly"[\s\S]*not valid UTF-8[\s\S]*nonsense[\s\S]*unknown channel 999/,
    );
    expect(await c.ack(6)).toMatchObject({ ok: false, code: 'unknown_command' });
    expect(server!.stats().commands).toMatchObject({ malformed: 5, refused: 1 });
    // still alive and in control
    expect(await c.ack(c.command({ command: 'hold' }))).toMatchObject({ ok: true });
    expect(c.closed).toBe(false);
  });

  it('refuses start without prepare, a second start while tracking, and an unsupported binding', async () => {
    const { c } = await setup();
    c.advertiseCommands();
    expect(await c.ack(c.command({ command: 'start' }))).toMatchObject({
      ok: false,
      code: 'bad_state',
      message: expect.stringMatching(/needs a prepared clip/),
    });
    const onnxLike: RemoteBinding = {
      kind: 'remote',
      id: 'r',
      version: '1',
      controlRateHz: 50,
      label: '',
      checkpointHash: null,
    };
    const wire = {
      command: 'prepare',
      args: {
        clip: clipToWire(SHORT),
        binding: {
          ...bindingToWire(onnxLike),
          kind: 'onnx',
          modelFile: '/x.onnx',
          checkpointHash: 'a'.repeat(64),
          interface: {
            inputName: 'o',
            outputName: 'a',
            observation: [{ term: 'joint_vel', scale: 1 }],
            actionScale: 1,
            actionOffset: 0,
            gains: { kp: 1, kd: 1 },
          },
        },
      },
    };
    expect(await c.ack(c.command(wire))).toMatchObject({
      ok: false,
      code: 'unsupported',
      message: expect.stringMatching(/binding kind onnx is not supported here/),
    });
    await c.ack(prepare(c, HANDS_UP));
    expect((await c.ack(c.command({ command: 'start' }))).ok).toBe(true);
    expect(await c.ack(c.command({ command: 'start' }))).toMatchObject({
      ok: false,
      code: 'bad_state',
      message: expect.stringMatching(/episode is running/),
    });
    expect(
      await c.ack(
        c.command({ command: 'reset', args: { initial_state: initialStateToWire(initialStateFromClipFrame(SHORT)) } }),
      ),
    ).toMatchObject({ ok: false, code: 'bad_state' });
    expect((await c.ack(c.command({ command: 'damp' }))).ok).toBe(true);
    await c.until(() => c.statusMsgs().some((m) => m.state === 'damping'), 5000, 'damping');
    expect(c.statusMsgs().find((m) => m.state === 'damping')).toMatchObject({ outcome: 'aborted_by_operator' });
  });

  it('stops the episode when the controlling client disconnects', async () => {
    const { backend, c } = await setup({ speed: 1 });
    const watcher = await PlainClient.connect(server!.url);
    clients.push(watcher);
    c.advertiseCommands();
    await c.ack(prepare(c, HANDS_UP));
    const s = await c.ack(c.command({ command: 'start' }));
    await watcher.until(() => watcher.of(G1_BRIDGE_TOPICS.lowstate).length >= 5, 5000, 'frames');
    await c.close();
    await watcher.until(() => watcher.statusMsgs().some((m) => m.state === 'done'), 5000, 'done');
    expect(watcher.statusMsgs().find((m) => m.state === 'done')).toMatchObject({
      run_id: s.status.run_id,
      outcome: 'aborted_by_operator',
      reason: expect.stringMatching(/controlling client disconnected/),
    });
    expect(backend.leased).toBeNull();
  });
});

// A prepare carries a whole clip (HANDS_UP: 589 KB), too large to decode on the thread that relays
// state and hears STOP; stop, start and the like are decoded at once (commandDecoder.ts).
describe('bridge server: large commands decoded off its thread', () => {
  it('a start sent right behind a large prepare waits for it: both act, in arrival order', async () => {
    const { backend, c } = await setup();
    c.advertiseCommands();
    const p = prepare(c, HANDS_UP);
    const s = c.command({ command: 'start' });
    expect(await c.ack(p)).toMatchObject({ ok: true, status: { state: 'ready' } });
    expect(await c.ack(s)).toMatchObject({ ok: true, status: { state: 'tracking' } });
    const acks = c.statusMsgs().filter((m) => m?.ack);
    expect(acks.map((m) => m.ack.seq)).toEqual([p, s]);
    expect(backend.calls).toContain(`run ${acks[1].run_id} ${HANDS_UP.id}`);
    expect(server!.stats().commands).toMatchObject({ accepted: 2, decodedOffThread: 1 });
  });

  it('a stop sent right behind a large prepare acts first and cancels it; sent after its ack (negative control) it does not', async () => {
    const { backend, c } = await setup();
    c.advertiseCommands();
    const p = prepare(c, HANDS_UP);
    const stop = c.command({ command: 'stop', args: { reason: 'operator pressed stop' } });
    expect(await c.ack(stop)).toMatchObject({ ok: true });
    expect(await c.ack(p)).toMatchObject({
      ok: false,
      code: 'bad_state',
      message: 'cancelled: a stop/damp/hold arrived after it',
    });
    const acks = c.statusMsgs().filter((m) => m?.ack);
    expect(acks.map((m) => m.ack.seq)).toEqual([stop, p]);
    expect(backend.calls.some((x) => x.startsWith('run '))).toBe(false);
    const p2 = prepare(c, HANDS_UP);
    expect(await c.ack(p2)).toMatchObject({ ok: true, status: { state: 'ready' } });
    expect(await c.ack(c.command({ command: 'stop', args: { reason: 'after' } }))).toMatchObject({ ok: true });
    expect(server!.stats().commands.decodedOffThread).toBe(2);
  });

  it('a command whose decoding misses its deadline is refused naming it; the server goes on with a fresh decoder', async () => {
    const { c } = await setup({ decoder: { decodeMs: 1 } });
    c.advertiseCommands();
    prepare(c, HANDS_UP);
    await c.until(() => c.statusMsgs().some((m) => m?.ack?.ok === false), 30_000, 'the refusal');
    // The decoder did not finish: the refusal cannot name the command's seq.
    expect(c.statusMsgs().find((m) => m?.ack)?.ack).toMatchObject({
      seq: null,
      ok: false,
      code: 'oversized',
      message: 'decoding it took longer than 1 ms',
    });
    expect(c.statuses.map((x) => x.message)).toContain(
      'command refused (oversized): decoding it took longer than 1 ms',
    );
    expect(await c.ack(c.command({ command: 'hold' }))).toMatchObject({ ok: true });
    expect(server!.stats().commands).toMatchObject({ malformed: 1, decodedOffThread: 1 });
  });

  it('a small command is decoded on the server thread (negative control: with no inline room, every command goes to the worker)', async () => {
    const { c } = await setup({ decoder: { inlineMaxBytes: 0 } });
    c.advertiseCommands();
    expect(await c.ack(c.command({ command: 'hold' }))).toMatchObject({ ok: true });
    expect(server!.stats().commands.decodedOffThread).toBe(1);
    await server!.close();
    server = null;
    const { c: c2 } = await setup();
    c2.advertiseCommands();
    expect(await c2.ack(c2.command({ command: 'hold' }))).toMatchObject({ ok: true });
    expect(server!.stats().commands.decodedOffThread).toBe(0);
  });
});
