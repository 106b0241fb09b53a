// console (connectRobot) → g1-runner --after-clip standing_policy → real Cyclone DDS (loopback) →
// `motionbench emulate-robot --dds` (the MuJoCo G1: it hangs on the emulator's gantry only while
// prepare ramps it, and is put down standing on the floor, off the gantry, right before start, so
// it stands free for the clip and after): the builtin tracker runs a clip, the episode ends `completed` at the clip end, the runner switches
// to the standing controller (unitree_rl_lab's velocity policy at zero command, loaded at prepare on
// the onboard computer), and 10 s after the clip the robot is still up (pelvis height from the
// emulator, tilt from the lowstate IMU as the runner measures it). Negative controls: a joint hold
// after the clip (what `gantry` does) on the same free-standing robot falls (with no declaration at
// all, start is refused: test/unit/g1RunnerSafety.test.ts).
//
// Slow on purpose (a whole-system run): the robot must still stand 10 s after the clip (AFTER_S),
// at real time, on a MuJoCo G1 in a process of its own; the negative control watches only until the
// robot is down.
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWireClip } from '../../src/domain/bridge';
import type { AfterClip } from '../../src/domain/g1Runner/g1RunnerSafety';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { standingArmRaiseClip } from '../../src/domain/robotEmulator/standingClip';
import { makeBuiltinBinding } from '../../src/domain/sim/builtinBinding';
import { connectRobot } from '../../src/services/bridge/bridgeClientBackend';
import { startG1Runner, type G1Runner } from '../../src/services/g1Runner/g1Runner';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { setAutogroupNice } from '../../src/services/os/threadPriority';
import { sendEmulatorControl } from '../../src/services/robotEmulator/emulatorControlClient';
import { startDdsG1Emulator, type DdsG1EmulatorProcess } from '../helpers/ddsG1EmulatorProcess';
import { sharedData } from '../helpers/sharedData';
import { claimDdsDomains } from '../helpers/ddsDomain';

const DOMAIN = claimDdsDomains();
const STANDING_POLICY = sharedData('policies/unitree_rl_lab_g1_velocity_v0');
/** unitree_rl_lab FixStand's pose (fsm_config.yaml qs[1]) = the velocity policy's default pose, SDK order. */
const FIX_STAND = [
  -0.1, 0, 0, 0.3, -0.2, 0, -0.1, 0, 0, 0.3, -0.2, 0, 0, 0, 0, 0, 0.25, 0, 0.97, 0.15, 0, 0, 0, -0.25, 0, 0.97, -0.15,
  0, 0,
];
const AFTER_S = 10;
/** Short: the builtin tracker is a joint PD, which does not balance a free-standing humanoid for long. */
const CLIP_S = 0.5;
/** A pelvis below this after the clip: the robot fell. */
const FALLEN_BELOW_M = 0.5;

let emu: DdsG1EmulatorProcess;

function clipOf(seconds: number): MotionClip {
  const d = decodeWireClip(standingArmRaiseClip({ rootPosM: [0, 0, 0.79], jointPosRad: FIX_STAND, seconds }));
  if (!d.ok) throw new Error(d.reason);
  return d.value;
}

async function status(): Promise<{ rootHeightM: number; onGantry: boolean }> {
  const r = await sendEmulatorControl(emu.controlUrl, { action: 'status' } as never, { timeoutMs: 10_000 });
  return JSON.parse(r.message) as { rootHeightM: number; onGantry: boolean };
}

interface AfterClipRun {
  outcome: string;
  reason: string;
  modes: string[];
  heightAtEndM: number;
  onGantryAtEnd: boolean;
  minHeightAfterM: number;
  heightAfterM: number;
  tiltsRad: number[];
  /** wbc_status as the console last heard it (state, and the runner's motor mode). */
  wbcState: string | null;
  runnerMode: string | null;
  traces: string[];
}

/**
 * Runs the clip, then watches the robot for AFTER_S; `fallenBelowM` ends the watch as soon as the
 * pelvis is below it (a negative control: what it asserts has happened, the rest of the window
 * adds nothing).
 */
async function runAndWatch(afterClip: AfterClip, runId: string, fallenBelowM?: number): Promise<AfterClipRun> {
  // The operator's procedure: the robot hangs on the gantry while the runner ramps it to the start
  // pose, then is put down standing on the floor (the emulator's `place`, off the gantry) right
  // before start; from then on nothing holds it but its motors.
  await sendEmulatorControl(emu.controlUrl, { action: 'human_reset' } as never, { timeoutMs: 10_000 });
  await sendEmulatorControl(emu.controlUrl, { action: 'gantry', lift: true } as never, { timeoutMs: 10_000 });
  const traces: string[] = [];
  const runner: G1Runner = await startG1Runner({
    interfaceName: 'lo',
    domainId: DOMAIN,
    port: 0,
    afterClip,
    ...(afterClip === 'standing_policy' ? { standingPolicyPath: STANDING_POLICY } : {}),
    log: (l) => traces.push(l),
  });
  const client = connectRobot({ url: runner.url, reconnectInitialDelayMs: 50 });
  try {
    const lease = await client.acquire(runId);
    const place = {
      action: 'place',
      root_quat_wxyz: [1, 0, 0, 0],
      joint_pos_rad: Object.fromEntries(G1_JOINT_NAMES.map((n, j) => [n, FIX_STAND[j]])),
    };
    const end = await lease.run({
      clip: clipOf(CLIP_S),
      binding: makeBuiltinBinding({}),
      seed: 0,
      beforeStart: async () => {
        const r = await sendEmulatorControl(emu.controlUrl, place as never, { timeoutMs: 10_000 });
        return r.ok ? true : r.message;
      },
    });
    const onGantryAtEnd = (await status()).onGantry;
    const heightAtEndM = (await status()).rootHeightM;
    let minHeightAfterM = heightAtEndM;
    const t0 = performance.now();
    while (performance.now() - t0 < AFTER_S * 1000) {
      if (fallenBelowM !== undefined && minHeightAfterM < fallenBelowM) break;
      await new Promise((r) => setTimeout(r, 500));
      minHeightAfterM = Math.min(minHeightAfterM, (await status()).rootHeightM);
    }
    const heightAfterM = (await status()).rootHeightM;
    const wbc = client.wbcStatus;
    await lease.release();
    const tiltsRad = traces
      .map((l) => /standing: pelvis tilt ([0-9.]+) rad/.exec(l)?.[1])
      .filter((x): x is string => x !== undefined)
      .map(Number);
    return {
      outcome: end.outcome,
      reason: end.reason,
      modes: runner.modes.map((m) => m.mode),
      heightAtEndM,
      onGantryAtEnd,
      minHeightAfterM,
      heightAfterM,
      tiltsRad,
      wbcState: wbc?.state ?? null,
      runnerMode: wbc?.runner?.mode ?? null,
      traces,
    };
  } catch (e) {
    console.log(
      `[${runId}] failed: ${(e as Error).message}\n  ${traces.filter((l) => /motors:|standing|onboard/.test(l)).join('\n  ')}`,
    );
    throw e;
  } finally {
    await client.close();
    await runner.close();
  }
}

beforeAll(async () => {
  setAutogroupNice(-10);
  emu = await startDdsG1Emulator(DOMAIN); // no --gantry: the G1 stands on the floor
}, 120_000);

afterAll(async () => {
  await emu?.stop();
});

describe('g1-runner --after-clip standing_policy → DDS → emulate-robot --dds (free-standing G1, no gantry)', () => {
  it(`after the clip the standing controller keeps the robot up ${AFTER_S} s; the episode ends completed`, async () => {
    expect((await status()).onGantry).toBe(false);
    const r = await runAndWatch('standing_policy', 'stand-1');
    console.log(
      `[standing over DDS] ${JSON.stringify({ ...r, traces: undefined })}\n  ${r.traces.filter((l) => /standing|onboard/.test(l)).join('\n  ')}`,
    );
    expect(r.outcome).toBe('completed');
    expect(r.onGantryAtEnd).toBe(false);
    expect(r.modes.slice(-4)).toEqual(['ramping', 'holding', 'tracking', 'standing']);
    expect(r.traces.some((l) => /loaded the standing controller/.test(l))).toBe(true);
    expect(r.minHeightAfterM).toBeGreaterThan(0.65);
    expect(r.wbcState).toBe('standing');
    expect(r.runnerMode).toBe('standing');
    expect(r.tiltsRad.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...r.tiltsRad)).toBeLessThan(0.2);
  }, 180_000);

  it('a standing controller that cannot load: prepare refuses with the reason, nothing moves', async () => {
    const traces: string[] = [];
    const runner = await startG1Runner({
      interfaceName: 'lo',
      domainId: DOMAIN,
      port: 0,
      afterClip: 'standing_policy',
      standingPolicyPath: sharedData('policies/no_such_policy'),
      log: (l) => traces.push(l),
    });
    const client = connectRobot({ url: runner.url, reconnectInitialDelayMs: 50 });
    try {
      const lease = await client.acquire('stand-bad');
      const settled = await lease.run({ clip: clipOf(CLIP_S), binding: makeBuiltinBinding({}), seed: 0 }).then(
        (end) => `${end.outcome}: ${end.reason}`,
        (e: Error) => e.message,
      );
      console.log(`[standing controller missing] ${settled}`);
      expect(settled).toMatch(/standing controller: .*no_such_policy.*not a unitree_rl_lab policy folder/);
      await lease.release();
      expect(runner.modes.map((m) => m.mode)).not.toContain('ramping');
    } finally {
      await client.close();
      await runner.close();
    }
  }, 120_000);

  it('negative control: a joint hold after the clip (gantry declared, but no gantry) on the same robot', async () => {
    const r = await runAndWatch('gantry', 'hold-1', FALLEN_BELOW_M);
    console.log(`[joint hold over DDS] ${JSON.stringify({ ...r, traces: undefined })}`);
    expect(r.outcome).toBe('completed');
    // The joint hold after the clip (a damp may follow once the fallen robot's state is out of range).
    expect(r.modes.slice(r.modes.lastIndexOf('tracking'), r.modes.lastIndexOf('tracking') + 2)).toEqual([
      'tracking',
      'holding',
    ]);
    expect(r.minHeightAfterM).toBeLessThan(FALLEN_BELOW_M);
  }, 180_000);
});
