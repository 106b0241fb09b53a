import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BackendEvent } from '../../src/domain/backend/backend';
import type { StateFrame } from '../../src/domain/robot/stateFrame';
import {
  G1_BRIDGE_TOPICS,
  clipToWire,
  decodeWireClip,
  initialStateToWire,
  prepareCommand,
} from '../../src/domain/bridge';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { initialStateFromClipFrame } from '../../src/domain/sim/initialState';
import { StatusLevel } from '../../src/services/robotLink/foxgloveWs';
import { BridgeClientBackend } from '../../src/services/bridge/bridgeClientBackend';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { REPO_ROOT, sharedData } from '../helpers/sharedData';
import { PlainClient, sleep, waitFor } from './bridgeTestClient';

// `motionbench serve-sim` as a user runs it — the real CLI in a child process with the real
// embedded MuJoCo simulator (our G1) — driven by a plain @foxglove/ws-protocol client, then by
// the console's BridgeClientBackend, over loopback. The stream is paced in real time.

const BIN = path.join(REPO_ROOT, 'bin/motionbench.mjs');
const HANDS_UP = loadClipFile(sharedData('motions/g1_moves/npz/B_HandsUp.npz')); // 60 fps, 7.33 s
const TWO_SECONDS = firstFrames(HANDS_UP, 121); // 2.0 s at 60 fps → 101 frames at 50 Hz
const binding = makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) });

function firstFrames(c: MotionClip, n: number): MotionClip {
  const d = decodeWireClip(
    clipToWire({
      ...c,
      frameCount: n,
      rootPosM: c.rootPosM.slice(0, 3 * n),
      rootQuatWxyz: c.rootQuatWxyz.slice(0, 4 * n),
      jointPosRad: c.jointPosRad.slice(0, 29 * n),
      jointVelRadS: undefined,
    }),
  );
  if (!d.ok) throw new Error(d.reason);
  return { ...d.value, name: `${c.name} (first ${n} frames)` };
}

let child: ChildProcess;
let url = '';
let stderr = '';
let exit: Promise<number | null>;
const clients: PlainClient[] = [];

beforeAll(async () => {
  child = spawn(process.execPath, [BIN, 'serve-sim', '--port', '0', '--json'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  let stdout = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`serve-sim did not start within 60 s:\n${stderr}`)), 60_000);
    child.stdout!.on('data', (d) => {
      stdout += String(d);
      try {
        const doc = JSON.parse(stdout) as { url: string; contract: string; topics: string[] };
        expect(doc.contract).toBe('g1-bridge/1');
        expect(doc.topics).toEqual(['/g1/lowstate', '/g1/root_state', '/g1/wbc_status']);
        url = doc.url;
        clearTimeout(t);
        resolve();
      } catch {
        // not all of it yet
      }
    });
    child.once('exit', (code) => reject(new Error(`serve-sim exited with ${code}:\n${stderr}`)));
  });
  expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
}, 90_000);

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await sleep(50); // the server notices the controller left
});

afterAll(async () => {
  if (!child || child.exitCode !== null) return;
  child.kill('SIGINT');
  const code = await exit;
  expect(code).toBe(0);
  expect(stderr).toMatch(/serve-sim: SIGINT: stopping/);
  expect(stderr).toMatch(/serve-sim: stopped; published \d+ lowstate/);
}, 30_000);

async function controller(): Promise<PlainClient> {
  const c = await PlainClient.connect(url);
  clients.push(c);
  c.advertiseCommands();
  await c.until(() => c.statuses.some((s) => s.id === 'g1-bridge/control-granted'), 5000, 'control');
  return c;
}

describe('motionbench serve-sim (real MuJoCo) with a plain Foxglove client', () => {
  it('reset, prepare + start a 2 s clip: lowstate and root_state at 50 Hz, ready → tracking → done', async () => {
    const c = await controller();
    expect(c.serverInfo!.metadata).toMatchObject({
      contract: 'g1-bridge/1',
      execution_domain: 'simulation',
      state_rate_hz: '50',
      exact_reset: 'true',
      contacts: 'true',
    });
    const initial = initialStateFromClipFrame(TWO_SECONDS, { placeOnFloor: true });
    const reset = await c.ack(c.command({ command: 'reset', args: { initial_state: initialStateToWire(initial) } }));
    expect(reset).toMatchObject({ ok: true, status: { state: 'idle' } });
    const prep = await c.ack(
      c.command(prepareCommand({ clip: TWO_SECONDS, binding, seed: 1 }) as unknown as Record<string, unknown>),
    );
    expect(prep).toMatchObject({ ok: true, status: { state: 'ready', clip_id: TWO_SECONDS.id } });
    const start = await c.ack(c.command({ command: 'start' }));
    expect(start).toMatchObject({ ok: true, status: { state: 'tracking', frame: 0 } });
    const runId = start.status.run_id as string;
    expect(runId).toBe(reset.status.run_id); // one lease: reset, prepare and start are one episode
    await c.until(() => c.statusMsgs().some((m) => m.state === 'done'), 20_000, 'done');
    const done = c.statusMsgs().find((m) => m.state === 'done');
    expect(done).toMatchObject({ run_id: runId, clip_id: TWO_SECONDS.id, outcome: 'completed', frame: 120 });

    const lows = c.of(G1_BRIDGE_TOPICS.lowstate);
    const roots = c.of(G1_BRIDGE_TOPICS.rootState);
    expect(lows).toHaveLength(101);
    expect(roots).toHaveLength(101);
    const t0 = start.status.episode_start_ns as number;
    lows.forEach((r, k) => {
      expect(r.msg.stamp_ns - t0).toBe(Math.round((k / 50) * 1e9)); // 50 Hz recording
      expect(roots[k].msg.stamp_ns).toBe(r.msg.stamp_ns);
      expect(r.msg.q).toHaveLength(29);
      expect(r.msg.q.every(Number.isFinite)).toBe(true);
    });
    // measured wall-clock arrival rate (real-time pacing)
    const rate = (lows.length - 1) / ((lows[lows.length - 1].atMs - lows[0].atMs) / 1000);
    console.log(
      `serve-sim stream: ${lows.length} lowstate in ${((lows[lows.length - 1].atMs - lows[0].atMs) / 1000).toFixed(3)} s = ${rate.toFixed(2)} Hz`,
    );
    expect(rate).toBeGreaterThan(45);
    expect(rate).toBeLessThan(55);
    // the episode starts where reset put it: the clip's first joint angles
    const q0 = lows[0].msg.q as number[];
    q0.forEach((v, j) => expect(Math.abs(v - initial.jointPosRad[j])).toBeLessThan(1e-9));
    // the root is a sim root, standing, tracking the clip within the reference tracker's margin
    expect(roots[0].msg.source).toBe('sim');
    for (const r of roots) expect(r.msg.pos[2]).toBeGreaterThan(0.55);
    const refEnd = TWO_SECONDS.rootPosM.subarray(120 * 3, 120 * 3 + 3);
    expect(Math.hypot(roots[100].msg.pos[0] - refEnd[0], roots[100].msg.pos[1] - refEnd[1])).toBeLessThan(0.2);
    expect(lows.some((r) => r.msg.tau_est.some((t: number) => Math.abs(t) > 0.1))).toBe(true);
    expect(lows[50].msg.ref_frame).toBe(60);
    // wbc_status transitions
    const states = c
      .statusMsgs()
      .map((m) => m.state)
      .filter((s, i, a) => i === 0 || a[i - 1] !== s);
    expect(states.slice(-3)).toEqual(['ready', 'tracking', 'done']);
  });

  it('stop works mid-clip', async () => {
    const c = await controller();
    await c.ack(c.command(prepareCommand({ clip: HANDS_UP, binding, seed: 2 }) as unknown as Record<string, unknown>));
    const start = await c.ack(c.command({ command: 'start' }));
    await c.until(() => c.of(G1_BRIDGE_TOPICS.lowstate).length >= 25, 5000, '0.5 s of frames');
    const stop = await c.ack(c.command({ command: 'stop', args: { reason: 'test stop' } }));
    expect(stop.ok).toBe(true);
    await c.until(
      () => c.statusMsgs().some((m) => m.state === 'done' && m.run_id === start.status.run_id),
      5000,
      'done',
    );
    expect(c.statusMsgs().find((m) => m.state === 'done' && m.run_id === start.status.run_id)).toMatchObject({
      outcome: 'aborted_by_operator',
      reason: expect.stringMatching(/test stop/),
    });
    const n = c.of(G1_BRIDGE_TOPICS.lowstate).length;
    expect(n).toBeLessThan(60);
    await sleep(200);
    expect(c.of(G1_BRIDGE_TOPICS.lowstate).length).toBe(n);
  });

  it('answers a malformed command with an error status and keeps the connection', async () => {
    const c = await controller();
    const before = c.statuses.length;
    c.sendRaw('{"command": "prepare", "args": {"clip": 42}}');
    c.sendRaw('not json at all');
    await c.until(() => c.statuses.length >= before + 2, 5000, 'two statuses');
    const errs = c.statuses.slice(before);
    expect(errs.map((s) => s.level)).toEqual([StatusLevel.ERROR, StatusLevel.ERROR]);
    expect(errs[0].message).toMatch(/prepare refused \(malformed\): args\.clip: must be an object, found number 42/);
    expect(errs[1].message).toMatch(/invalid JSON/);
    expect(await c.ack(c.command({ command: 'hold' }))).toMatchObject({ ok: true });
    expect(c.closed).toBe(false);
  });
});

describe('BridgeClientBackend against motionbench serve-sim (real MuJoCo)', () => {
  it('runs a clip end to end over the link', async () => {
    const remote = new BridgeClientBackend({ url, id: 'remote-serve-sim' });
    const frames: StateFrame[] = [];
    const events: BackendEvent[] = [];
    remote.setListener(async (evs) => {
      for (const e of evs) {
        if (e.type === 'frames') frames.push(...e.frames);
        else events.push(e);
      }
    });
    try {
      const lease = await remote.acquire('console-run-1');
      expect(remote.capabilities).toMatchObject({
        executionDomain: 'simulation',
        globalRootPosition: true,
        contacts: true,
        stateRateHz: 50,
        exactReset: true,
        bindingKinds: ['builtin', 'onnx'],
      });
      await lease.reset(initialStateFromClipFrame(TWO_SECONDS, { placeOnFloor: true }));
      const t0 = performance.now();
      const end = await lease.run({ clip: TWO_SECONDS, binding, seed: 3 });
      const wall = (performance.now() - t0) / 1000;
      expect(end).toMatchObject({ runId: 'console-run-1', outcome: 'completed', frames: 101 });
      expect(end.simSeconds).toBeCloseTo(2, 9);
      expect(wall).toBeGreaterThan(1.9); // real-time pacing
      await lease.release();
      expect(frames).toHaveLength(101);
      frames.forEach((f, k) => {
        expect(f.timeS).toBeCloseTo(k / 50, 9);
        expect(f.rootPosM).not.toBeNull();
        expect(Array.isArray(f.contacts)).toBe(true);
      });
      expect(events.some((e) => e.type === 'episode_end' && e.end.outcome === 'completed')).toBe(true);
      expect(remote.stats()).toMatchObject({
        received: 101,
        accepted: 101,
        malformed: 0,
        duplicate: 0,
        outOfOrder: 0,
        dropped: 0,
      });
      await waitFor(() => remote.presence === 'present', 1000, 'present');
    } finally {
      await remote.close();
    }
  });
});

describe('motionbench serve-sim errors', () => {
  const mb = (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, timeout: 60_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });

  it('exits 2 on bad usage and 1 on a missing model or a port in use, with a one-line reason', async () => {
    const bad = await mb('serve-sim', '--port', 'abc');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^motionbench: --port must be a TCP port/m);
    const missing = await mb('serve-sim', '--port', '0', '--model', '/nonexistent/g1.xml');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^motionbench: \/nonexistent\/g1\.xml: cannot read the file/m);
    const port = new URL(url).port;
    const busy = await mb('serve-sim', '--port', port);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(
      new RegExp(`^motionbench: cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`, 'm'),
    );
    expect(busy.stdout).toBe('');
  });
});
