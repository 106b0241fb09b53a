import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../src/domain/wbc/controller';
import type { PolicyBinding, WbcBinding } from '../../src/domain/wbc/wbcBinding';
import { DEFAULT_ROBOT_EMULATOR_PROFILE } from '../../src/domain/robotEmulator';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { RobotEmulatorCore } from '../../src/services/robotEmulator';
import { LOAD_NICE, OnboardComputer } from '../../src/services/robotEmulator/onboardComputer';
import {
  raiseThreadPriority,
  RUNNER_RT_PRIORITY,
  setThisThreadNice,
  thisThreadNice,
} from '../../src/services/os/threadPriority';
import { threadPolicy } from '../helpers/threadPolicies';
import { createController } from '../../src/services/sim/controllerFactory';
import { planPolicy } from '../../src/services/wbc/policyRun';
import { sharedData } from '../helpers/sharedData';

// The robot emulator's onboard computer (a worker thread running the policy; onboardComputer.ts):
// a real released policy run through it gives the same robot, step for step, as the same policy
// run on the emulator's own thread; what it loads is what it runs; a load that fails says why.

const profile = loadRobotProfile();
const jump = planPolicy(sharedData('policies/beyondmimic/Jump_wose.onnx'), profile);
const wbcMjlab = planPolicy(sharedData('policies/wbc_mjlab'), profile);

let onboard: OnboardComputer;
beforeAll(async () => {
  onboard = new OnboardComputer();
  await onboard.whenReady();
}, 60_000);
afterAll(async () => {
  await onboard?.close();
});

/** The executed joints (every 10th 500 Hz step) of the first `seconds` of `clip` under `controller`, on the emulated G1. */
async function episodeJoints(
  binding: WbcBinding,
  clip: MotionClip,
  controller: Controller,
  seconds: number,
): Promise<Float64Array[]> {
  const core = await RobotEmulatorCore.create({ profile: DEFAULT_ROBOT_EMULATOR_PROFILE, seed: 3 });
  try {
    core.humanReset();
    core.stepMany(250);
    core.beginEpisode({ runId: 'onboard', clip, binding, controller });
    const out: Float64Array[] = [];
    for (let i = 0; i < seconds / core.dtS; i++) {
      const r = core.step();
      if (i % 10 === 0) out.push(r.trueFrame.jointPosRad.slice());
      if (r.episodeEnd) {
        if (r.episodeEnd.outcome === 'infrastructure_error') throw new Error(`episode ended: ${r.episodeEnd.reason}`);
        break; // a fall (hard_failure) is a robot's answer too
      }
    }
    return out;
  } finally {
    core.dispose();
  }
}

/** Largest |Δq| over the frames both have (`sameLength`: and they must have as many). */
const maxAbsDiff = (a: Float64Array[], b: Float64Array[], sameLength = true): number => {
  if (sameLength) expect(b).toHaveLength(a.length);
  let m = 0;
  for (let k = 0; k < Math.min(a.length, b.length); k++)
    for (let j = 0; j < a[k].length; j++) m = Math.max(m, Math.abs(a[k][j] - b[k][j]));
  return m;
};

describe('the robot emulator’s onboard computer (the policy in a worker thread)', () => {
  it('runs a released policy bit for bit as on the emulator’s own thread; another policy gives another robot', async () => {
    const clip = jump.baked!.clip;
    const local = await createController(jump.binding, profile);
    let inThread: Float64Array[];
    try {
      inThread = await episodeJoints(jump.binding, clip, local, 1.5);
    } finally {
      await local.dispose?.();
    }
    const remote = await onboard.load(jump.binding, profile);
    expect(remote.loadMs).toBeGreaterThan(0);
    expect(remote.physics).toEqual(local.physics);
    expect([...remote.needs]).toEqual([...local.needs]);
    const onWorker = await episodeJoints(jump.binding, clip, remote, 1.5);
    const d = maxAbsDiff(inThread, onWorker);
    console.log(
      `onboard computer vs in-thread, Jump_wose 1.5 s: max |Δq| ${d} rad over ${onWorker.length} frames; load ${remote.loadMs.toFixed(1)} ms`,
    );
    expect(d).toBe(0);
    // A second episode with the same loaded policy (reset in between) is the same robot again.
    expect(maxAbsDiff(inThread, await episodeJoints(jump.binding, clip, remote, 1.5))).toBe(0);

    // Control: another policy, loaded on the same computer, on the same clip and start, moves the
    // robot differently (what is loaded is what runs), and the first one is released.
    const other = await onboard.load(wbcMjlab.binding, profile);
    const withOther = await episodeJoints(wbcMjlab.binding, clip, other, 1.5);
    expect(maxAbsDiff(inThread, withOther, false)).toBeGreaterThan(0.05);
    expect(() => remote.reset()).toThrow(/was unloaded/);
  }, 120_000);

  it('a policy that cannot be loaded is refused with the loader’s reason, and the computer goes on', async () => {
    const missing: WbcBinding = {
      ...(jump.binding as PolicyBinding),
      policyPath: '/nonexistent/policy.onnx',
      modelFile: '/nonexistent/policy.onnx',
    };
    await expect(onboard.load(missing, profile)).rejects.toThrow(/nonexistent\/policy\.onnx/);
    const again = await onboard.load(jump.binding, profile);
    again.reset();
  }, 60_000);

  // The g1-runner's real-time thread (nice −10) creates the onboard computer, and a Linux thread
  // starts at its creator's nice: loading must not run at the timekeepers' priority (it starved
  // the interlock's box at a matched pair's prepare, docs/G1_RUNNER.md), stepping must (the
  // creator's 500 Hz loop waits for each step).
  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)(
    'created by a thread at nice −10, it loads at normal priority and steps at its creator’s nice; created at normal priority, both stay normal (control)',
    async () => {
      const mine = thisThreadNice()!;
      expect(raiseThreadPriority(-10)).toBe(true);
      let raisedComputer: OnboardComputer | null = null;
      try {
        raisedComputer = new OnboardComputer();
        await raisedComputer.whenReady();
      } finally {
        setThisThreadNice(mine); // back to this thread's own nice, before anything else runs here
      }
      try {
        const c = await raisedComputer.load(jump.binding, profile);
        expect(c.nice).toEqual({ load: LOAD_NICE, step: -10, stepRtPriority: null });
        c.reset(); // it still answers at the raised priority
        // A second load leaves the raised priority for the load and returns to it for the steps.
        const c2 = await raisedComputer.load(wbcMjlab.binding, profile);
        expect(c2.nice).toEqual({ load: LOAD_NICE, step: -10, stepRtPriority: null });
      } finally {
        await raisedComputer.close();
      }
      // Control: the computer of beforeAll, created by this thread at its own nice.
      const plain = await onboard.load(jump.binding, profile);
      expect(plain.nice).toEqual({ load: mine, step: mine, stepRtPriority: null });
    },
    120_000,
  );

  // Under a SCHED_FIFO creator (the g1-runner's thread) a nice does not bound how long a woken
  // step waits for a CPU: given stepRtPriority, the thread steps SCHED_FIFO and loads SCHED_OTHER.
  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)(
    'given a step real-time priority, it steps under SCHED_FIFO at it, and a new load is ordinary work again; without one it stays SCHED_OTHER (control)',
    async () => {
      const rt = new OnboardComputer({ stepRtPriority: RUNNER_RT_PRIORITY - 1 });
      try {
        await rt.whenReady();
        const c = await rt.load(jump.binding, profile);
        expect(c.nice.stepRtPriority).toBe(RUNNER_RT_PRIORITY - 1);
        expect(c.tid).not.toBeNull();
        expect(threadPolicy(process.pid, c.tid!)).toEqual({ policy: 'fifo', rtPriority: RUNNER_RT_PRIORITY - 1 });
        c.reset(); // it answers under SCHED_FIFO
        // While a second policy loads, the thread is SCHED_OTHER (sampled during the load).
        const during: string[] = [];
        const sampler = setInterval(() => during.push(threadPolicy(process.pid, c.tid!).policy), 2);
        const c2 = await rt.load(wbcMjlab.binding, profile).finally(() => clearInterval(sampler));
        expect(during).toContain('other');
        expect(c2.nice.stepRtPriority).toBe(RUNNER_RT_PRIORITY - 1);
        expect(threadPolicy(process.pid, c2.tid!).policy).toBe('fifo');
      } finally {
        await rt.close();
      }
      // Control: the computer of beforeAll, given none.
      const plain = await onboard.load(jump.binding, profile);
      expect(plain.nice.stepRtPriority).toBeNull();
      expect(threadPolicy(process.pid, plain.tid!)).toEqual({ policy: 'other', rtPriority: 0 });
    },
    120_000,
  );
});
