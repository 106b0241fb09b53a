// motionbench g1-runner end to end on real Cyclone DDS over loopback: the console's own client
// (connectRobot) → runner (bridge thread + real-time worker) → DDS → a small G1 plant on the robot
// end (G1DdsRobot: first-order joints following the PD target, upright IMU, a wireless remote).
import { performance } from 'node:perf_hooks';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeEnd } from '../../src/domain/backend/backend';
import { decodeWireClip } from '../../src/domain/bridge';
import { REMOTE_KEY_B, REMOTE_KEY_L2 } from '../../src/domain/g1Runner/g1RunnerSafety';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { standingArmRaiseClip } from '../../src/domain/robotEmulator/standingClip';
import { makeBuiltinBinding } from '../../src/domain/sim/builtinBinding';
import { connectRobot, type BridgeClientBackend } from '../../src/services/bridge/bridgeClientBackend';
import { startG1Runner, type G1Runner } from '../../src/services/g1Runner/g1Runner';
import { setAutogroupNice } from '../../src/services/os/threadPriority';
import { nodeArgsFor } from '../helpers/tsChild';
import { claimDdsDomains } from '../helpers/ddsDomain';

const DOMAIN = claimDdsDomains();
const FIX_STAND = [
  -0.1, 0, 0, 0.3, -0.2, 0, -0.1, 0, 0, 0.3, -0.2, 0, 0, 0, 0, 0, 0.25, 0, 0.97, 0.15, 0, 0, 0, -0.25, 0, 0.97, -0.15,
  0, 0,
];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
async function until(pred: () => boolean, timeoutMs: number, what: string | (() => string)): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!pred()) {
    if (performance.now() > end)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(2);
  }
}

/** The plant thread (g1PlantWorker.ts) seen from the test. Times are Unix ms. */
class Plant {
  readonly cmds: { atMs: number; damped: boolean; modeMachine: number; modePr: number }[] = [];
  q: number[] = [];
  maxPublishGapMs = 0;
  private readonly worker: Worker;
  private lastSetAtMs = 0;
  readonly ready: Promise<void>;
  constructor(domainId: number) {
    this.worker = new Worker(BOOTSTRAP, { workerData: { entry: PLANT_ENTRY.href, domainId } });
    this.ready = new Promise((resolve) => {
      this.worker.on(
        'message',
        (m: { type: string; cmds?: Plant['cmds']; q?: number[]; maxPublishGapMs?: number; atMs?: number }) => {
          if (m.type === 'ready') resolve();
          else if (m.type === 'set_at') this.lastSetAtMs = m.atMs!;
          else if (m.type === 'report') {
            this.cmds.push(...m.cmds!);
            this.q = m.q!;
            this.maxPublishGapMs = m.maxPublishGapMs!;
          }
        },
      );
    });
  }
  /** Applies a change on the plant thread; resolves with the Unix ms at which it took effect. */
  async set(s: {
    publishing?: boolean;
    nanQ0?: boolean;
    remoteKeys?: number;
    tick?: number;
    quat?: number[];
  }): Promise<number> {
    const before = this.lastSetAtMs;
    this.worker.postMessage({ type: 'set', ...s });
    await until(() => this.lastSetAtMs !== before, 2000, 'the plant to apply a change');
    return this.lastSetAtMs;
  }
  /** First damping LowCmd at or after `t0Ms`, ms after t0. */
  dampAfter(t0Ms: number): number | null {
    const c = this.cmds.find((x) => x.atMs >= t0Ms && x.damped);
    return c ? c.atMs - t0Ms : null;
  }
  async close(): Promise<void> {
    this.worker.postMessage({ type: 'close' });
    await sleep(50);
    await this.worker.terminate();
  }
}
const BOOTSTRAP = new URL('../../src/services/sim/simWorkerBootstrap.mjs', import.meta.url);
const PLANT_ENTRY = new URL('./g1PlantWorker.ts', import.meta.url);
const CRASH_CHILD = fileURLToPath(new URL('./g1RunnerCrashChild.ts', import.meta.url));
const unixNow = (): number => performance.timeOrigin + performance.now();

let runner: G1Runner;
let plant: Plant;
let clip: MotionClip;
const traces: string[] = [];
const binding = makeBuiltinBinding({});

function clipOf(seconds: number): MotionClip {
  const d = decodeWireClip(standingArmRaiseClip({ rootPosM: [0, 0, 0.79], jointPosRad: FIX_STAND, seconds }));
  if (!d.ok) throw new Error(d.reason);
  return d.value;
}

const clients: BridgeClientBackend[] = [];
let consoleMaxGapMs = 0;
function console_(): BridgeClientBackend {
  const c = connectRobot({ url: runner.url, reconnectInitialDelayMs: 50 });
  let last = 0;
  c.setListener(async (evs) => {
    for (const e of evs)
      if (e.type === 'frames') {
        const now = performance.now();
        if (last) consoleMaxGapMs = Math.max(consoleMaxGapMs, now - last);
        last = now;
      }
  });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  // The runner and the robot keep time: as `motionbench g1-runner` does for itself, this process's
  // session gets the timekeepers' weight (the runner's real-time thread raises its own nice).
  setAutogroupNice(-10);
  plant = new Plant(DOMAIN);
  await plant.ready;
  runner = await startG1Runner({
    interfaceName: 'lo',
    domainId: DOMAIN,
    port: 0,
    afterClip: 'gantry',
    // The plant has no motion switcher (a simulator): a short wait keeps prepare's timing bounds
    // about the runner's own checks (g1RunnerMotionSwitcher.test.ts covers the question).
    motionSwitcherTimeoutMs: 100,
    log: (l) => traces.push(l),
  });
  clip = clipOf(1.5);
  await until(() => plant.cmds.length > 50, 10_000, 'LowCmd from the runner');
}, 60_000);

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await sleep(50);
});

afterAll(async () => {
  await runner?.close();
  await plant?.close();
});

describe('g1-runner over real Cyclone DDS (loopback)', () => {
  it('LowCmd at 500 Hz, damping (kp 0, kd 3) before prepare, mode_machine echoed, mode_pr 0', async () => {
    const n0 = plant.cmds.length;
    await sleep(2000);
    const w = plant.cmds.slice(n0);
    const spanS = (w[w.length - 1].atMs - w[0].atMs) / 1000;
    const gaps = w
      .slice(1)
      .map((c, i) => c.atMs - w[i].atMs)
      .sort((a, b) => a - b);
    const rate = (w.length - 1) / spanS;
    console.log(
      `g1-runner LowCmd: ${rate.toFixed(1)} Hz over ${spanS.toFixed(2)} s; period p50 ${gaps[gaps.length >> 1].toFixed(3)} ms p99 ${gaps[Math.floor(gaps.length * 0.99)].toFixed(3)} ms max ${gaps[gaps.length - 1].toFixed(3)} ms; worker stats ${JSON.stringify(runner.stats())}`,
    );
    expect(rate).toBeGreaterThan(300);
    expect(rate).toBeLessThan(560);
    expect(w.every((c) => c.damped)).toBe(true);
    expect(w.at(-1)!.modeMachine).toBe(5);
    expect(w.every((c) => c.modePr === 0)).toBe(true);
  });

  it('prepare ramps to the start pose under FixStand gains, start tracks with the builtin tracker, the episode completes', async () => {
    const client = console_();
    try {
      const lease = await client.acquire('g1r-1');
      const t0 = performance.now();
      const end = await lease.run({ clip, binding, seed: 0 });
      await lease.release();
      const tookS = (performance.now() - t0) / 1000;
      console.log(
        `gaps: plant publish max ${plant.maxPublishGapMs.toFixed(1)} ms, console frames max ${consoleMaxGapMs.toFixed(1)} ms, stats ${JSON.stringify(runner.stats())}`,
      );
      expect(end).toMatchObject({ runId: 'g1r-1', outcome: 'completed', reason: 'reached the end of the clip' });
      expect(tookS).toBeGreaterThan(3 + 1.4); // the 3 s ramp, then the 1.5 s clip
      const modes = runner.modes.map((m) => m.mode);
      expect(modes.slice(-4)).toEqual(['ramping', 'holding', 'tracking', 'holding']);
      // The plant reached the start pose's elbows and holds (gantry) after the clip.
      expect(plant.q[18]).toBeCloseTo(0.97, 1);
      expect(runner.mode()).toBe('holding');
      expect(traces.some((l) => l.includes('no motion switcher answered on domain'))).toBe(true);
    } finally {
      await client.close();
    }
  }, 30_000);

  async function tracking(
    runId: string,
    seconds: number,
  ): Promise<{ client: BridgeClientBackend; done: Promise<EpisodeEnd> }> {
    const client = console_();
    const lease = await client.acquire(runId);
    const done = lease.run({ clip: clipOf(seconds), binding, seed: 0 });
    done.catch(() => {});
    await until(() => runner.mode() === 'tracking', 15_000, 'tracking').catch((err: Error) => {
      throw new Error(`${err.message}; runner trace: ${traces.slice(-6).join(' | ')}`);
    });
    return { client, done };
  }

  it('state drop: lowstate silent > 100 ms → damp on the wire, episode link_lost', async () => {
    const { client, done } = await tracking('g1r-drop', 10);
    await sleep(300);
    const t0 = await plant.set({ publishing: false });
    await until(() => plant.dampAfter(t0) !== null, 1000, 'damping LowCmd');
    const dampMs = plant.dampAfter(t0)!;
    await plant.set({ publishing: true });
    const end = await done;
    await client.close();
    console.log(`g1-runner: lowstate stopped → damping LowCmd on the wire after ${dampMs.toFixed(1)} ms`);
    expect(end.outcome).toBe('link_lost');
    expect(dampMs).toBeGreaterThanOrEqual(95); // the last lowstate left up to one 2 ms period before the drop
    expect(dampMs).toBeLessThan(130);
  }, 30_000);

  it('console frozen 300 ms mid-trial (its thread blocked) → the runner neither holds nor damps', async () => {
    const { done } = await tracking('g1r-freeze', 4);
    await sleep(300);
    const n0 = runner.modes.length;
    const end = performance.now() + 300;
    while (performance.now() < end) {
      // the console's (and the bridge's) thread is blocked on purpose
    }
    await sleep(300);
    const after = runner.modes.slice(n0);
    console.log(`g1-runner: console frozen 300 ms → runner modes after: ${JSON.stringify(after.map((m) => m.cause))}`);
    expect(after.filter((m) => /console silent/.test(m.cause))).toEqual([]);
    expect(after.filter((m) => m.mode === 'damping')).toEqual([]);
    await done;
  }, 30_000);

  it('lowstate ticks reach the console unwrapped past 2^32 (the uint32 tick wraps)', async () => {
    const client = console_();
    await plant.set({ tick: 2 ** 32 - 100 });
    const ticks: number[] = [];
    // This client's events go to the tick recorder instead of the gap meter: the backend has one
    // listener owner, so the meter's listener is released first.
    client.setListener(null);
    client.setListener(async (evs) => {
      for (const e of evs) if (e.type === 'frames') for (const f of e.frames) ticks.push(f.tick);
    });
    await until(() => ticks.length > 0 && ticks.at(-1)! > 2 ** 32 + 100, 5000, 'frames past the wrap');
    expect(ticks.at(-1)!).toBeGreaterThan(2 ** 32);
    for (let i = 1; i < ticks.length; i++) expect(ticks[i]).toBeGreaterThan(ticks[i - 1]);
  }, 30_000);

  it('the console leaving during the ramp ends the ramp: holding where the robot is, cause traced', async () => {
    const client = console_();
    const lease = await client.acquire('g1r-ramp-gone');
    const done = lease.run({ clip: clipOf(2), binding, seed: 0 });
    done.catch(() => {});
    await until(() => runner.mode() === 'ramping', 10_000, 'ramping');
    await sleep(500);
    const t0 = performance.now();
    await client.close();
    await until(() => runner.mode() !== 'ramping', 2000, 'the ramp to end');
    const ms = performance.now() - t0;
    console.log(
      `g1-runner: console gone mid-ramp → ${runner.mode()} after ${ms.toFixed(0)} ms (${runner.modes.at(-1)!.cause})`,
    );
    expect(runner.mode()).toBe('holding');
    expect(runner.modes.at(-1)!.cause).toMatch(/lease released/);
    expect(ms).toBeLessThan(500);
  }, 30_000);

  it('prepare refused with the reason when the robot is not upright (IMU): bounded time and memory; upright again (negative control) it ramps', async () => {
    await plant.set({ quat: [Math.cos(0.3), Math.sin(0.3), 0, 0] }); // 0.6 rad about x
    await sleep(50);
    const client = console_();
    const lease = await client.acquire('g1r-tilted');
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const err = await lease.run({ clip, binding, seed: 0 }).then(
      () => null,
      (e: Error) => e,
    );
    const ms = performance.now() - t0;
    const rssMiB = (process.memoryUsage().rss - rss0) / 2 ** 20;
    await lease.release();
    console.log(
      `g1-runner: prepare refused (tilted) in ${ms.toFixed(1)} ms, RSS +${rssMiB.toFixed(1)} MiB: ${err?.message}`,
    );
    expect(err?.message).toMatch(/tilted 0\.60 rad from upright/);
    expect(ms).toBeLessThan(1000);
    expect(rssMiB).toBeLessThan(50);
    expect(runner.mode()).not.toBe('ramping');
    await plant.set({ quat: [1, 0, 0, 0] });
    await sleep(50);
    const lease2 = await client.acquire('g1r-upright');
    const run2 = lease2.run({ clip: clipOf(0.5), binding, seed: 0 });
    run2.catch(() => {});
    await until(() => runner.mode() === 'ramping', 5000, 'ramping when upright');
    await lease2.stop('aborted_by_operator', 'enough');
    await run2.catch(() => {});
    await lease2.release();
  }, 30_000);

  it('wireless remote L2 + B → damp on the wire, episode estop; L2 alone (negative control) does nothing', async () => {
    const { client, done } = await tracking('g1r-estop', 10);
    await plant.set({ remoteKeys: REMOTE_KEY_L2 });
    await sleep(200);
    expect(runner.mode()).toBe('tracking');
    const t0 = await plant.set({ remoteKeys: REMOTE_KEY_L2 | REMOTE_KEY_B });
    await until(() => plant.dampAfter(t0) !== null, 1000, 'damping LowCmd');
    const dampMs = plant.dampAfter(t0)!;
    await plant.set({ remoteKeys: 0 });
    const end = await done;
    await client.close();
    console.log(`g1-runner: remote L2+B → damping LowCmd on the wire after ${dampMs.toFixed(1)} ms`);
    expect(end.outcome).toBe('estop');
    expect(dampMs).toBeLessThan(20);
  }, 30_000);

  it('non-finite state → damp on the wire, episode hard_failure', async () => {
    const { client, done } = await tracking('g1r-nan', 10);
    const t0 = await plant.set({ nanQ0: true });
    await until(() => plant.dampAfter(t0) !== null, 1000, 'damping LowCmd');
    const dampMs = plant.dampAfter(t0)!;
    await plant.set({ nanQ0: false });
    const end = await done;
    await client.close();
    console.log(`g1-runner: non-finite q → damping LowCmd on the wire after ${dampMs.toFixed(1)} ms`);
    expect(end.outcome).toBe('hard_failure');
    expect(dampMs).toBeLessThan(20);
  }, 30_000);

  it('console silent: hold after 1 s, damp after 3 s (traced), while the runner keeps sending', async () => {
    // A ramp that ends holding, then the console goes away without a word.
    const { client, done } = await tracking('g1r-silent', 10);
    const tGone = unixNow();
    // The console's process stops: no ping, no command (a closed socket says the same).
    await client.close();
    const end = await done.catch((e: Error) => ({ outcome: 'rejected', reason: e.message }) as unknown as EpisodeEnd);
    await until(() => runner.mode() === 'damping', 5000, 'damping after console silence');
    await until(() => plant.dampAfter(tGone) !== null, 1000, 'the damping LowCmd at the plant');
    const dampMs = plant.dampAfter(tGone)!;
    console.log(`g1-runner: console gone → end ${end.outcome}; damping LowCmd after ${dampMs.toFixed(0)} ms`);
    expect(traces.some((l) => /console silent \d+ ms \(limit 3000 ms\): damping/.test(l))).toBe(true);
    expect(dampMs).toBeGreaterThan(2900);
    expect(dampMs).toBeLessThan(3300);
    expect(runner.modes.some((m) => m.mode === 'holding' && performance.timeOrigin + m.atMs >= tGone)).toBe(true);
  }, 30_000);

  it.each([
    ['an uncaught exception: damping is the last LowCmd', 'crash', true],
    ['SIGKILL (negative control): nothing can be sent, the last LowCmd holds', 'kill', false],
  ])(
    'runner process dies by %s',
    async (_name, how, damped) => {
      // The suite's runner stops first: the plant then hears only the child.
      const child = spawn(process.execPath, [...nodeArgsFor(CRASH_CHILD), String(DOMAIN)], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      try {
        const url = await new Promise<string>((resolve, reject) => {
          createInterface({ input: child.stdout! }).once('line', resolve);
          child.once('exit', (code) => reject(new Error(`child exited ${code}`)));
        });
        await runner.close();
        const client = connectRobot({ url, reconnectInitialDelayMs: 50 });
        clients.push(client);
        const lease = await client.acquire(`g1r-${how}`);
        const done = lease.run({ clip: clipOf(10), binding, seed: 0 });
        // The run ends when the child dies; until then its state names why the child may not hold.
        let run = 'still running';
        done.then(
          (r) => (run = `ended ${JSON.stringify(r).slice(0, 300)}`),
          (e: unknown) => (run = `failed: ${String(e)}`),
        );
        const t0 = unixNow();
        await until(
          () => plant.cmds.some((c) => c.atMs > t0 + 3500 && !c.damped),
          15_000,
          () =>
            `the child runner holding (its run: ${run}; ${plant.cmds.filter((c) => c.atMs > t0).length} LowCmd since)`,
        );
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        const tDie = unixNow();
        if (how === 'crash') child.stdin!.write('crash\n');
        else child.kill('SIGKILL');
        await exited;
        await sleep(300);
        const after = plant.cmds.filter((c) => c.atMs >= tDie);
        const last = plant.cmds.at(-1)!;
        console.log(
          `g1-runner process ${how}: ${after.length} LowCmd after the fault, last damped ${last.damped}, at ${(last.atMs - tDie).toFixed(1)} ms from it`,
        );
        expect(last.damped).toBe(damped);
      } finally {
        child.kill('SIGKILL');
      }
    },
    40_000,
  );
});
