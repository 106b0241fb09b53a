import path from 'node:path';
import { cloneStateFrame } from '../src/domain/robot/stateFrame';
import type { MotionClip } from '../src/domain/motion/motionClip';
import type { RobotProfile } from '../src/domain/robot/robotProfile';
import { makeBuiltinBinding } from '../src/domain/sim/builtinBinding';
import { BuiltinTracker } from '../src/domain/sim/builtinTracker';
import { clipHead } from '../src/domain/sim/clipWindow';
import { initialStateFromClipFrame } from '../src/domain/sim/initialState';
import { createControlCommand, withStep, type ControlObservation, type Controller } from '../src/domain/wbc/controller';
import type { WbcBinding } from '../src/domain/wbc/wbcBinding';
import { loadClipFile } from '../src/services/motion/loadClipFile';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../src/services/robot/loadRobotProfile';
import { SimEngine, type EngineSink } from '../src/services/sim/simEngine';
import { planPolicy, type PolicyPlan } from '../src/services/wbc/policyRun';
import {
  createTrackingPolicyController,
  type TrackingPolicyController,
} from '../src/services/wbc/trackingPolicyController';
import { compareRates, type RateResult } from './benchSupport';

// Released tracking policies in the simulator, on the default G1
// (assets/g1), in-thread (SimEngine, no worker), measured in one run:
//   (a) inference cost per control step — controller.step() (FK of the anchor, observation,
//       one onnxruntime inference, action → targets) of BeyondMimic's Violin.onnx (160 obs) and
//       the unitree_rl_mjlab deploy folder, on the observations of a 5 s rollout of each (every
//       control step kept, fed back in order). Baselines in the same rounds: the builtin
//       tracker's step on the same observations, and one control interval of physics on the
//       policies' profile (4 physics steps of 5 ms from the recorded states, with the policy's
//       targets and gains). Candidates interleaved over 5 rounds (compareRates), medians. The
//       ratio inference / physics interval is the share of a control step the network adds.
//       No target; only a sanity check (finite, positive).
//   (b) real-time factor of a policy rollout — Violin on its baked clip through SimEngine.run
//       (its profile: 5 ms × 4 at 50 Hz) beside the builtin tracker (makeBuiltinBinding(), the
//       model's own physics) on the same clip and model; a warm-up each, then 3 interleaved
//       runs, medians. Target: policy RTF / builtin RTF ≥ 0.5.
export const POLICY_RTF_RATIO_TARGET = 0.5;
const STEP_CAPTURE_S = 5;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const discard: EngineSink = { emit: () => {}, stopRequested: () => 0 };

/** One control step of a rollout: what the controller observed, the physics state then, and its command. */
interface Captured {
  obs: ControlObservation;
  qpos: Float64Array;
  qvel: Float64Array;
  target: Float64Array;
  kp: Float64Array | null;
  kd: Float64Array | null;
}

/** Runs `controller` on `clip` in the engine, keeping a deep copy of every control step. */
function captureRollout(
  engine: SimEngine,
  binding: WbcBinding,
  controller: Controller,
  clip: MotionClip,
): { steps: Captured[]; outcome: string } {
  const steps: Captured[] = [];
  const recorder = withStep(controller, (obs, cmd) => {
    controller.step(obs, cmd);
    const { qpos, qvel } = engine.liveQposQvel();
    steps.push({
      obs: {
        ...obs,
        state: cloneStateFrame(obs.state),
        rootLinVelMps: obs.rootLinVelMps ? obs.rootLinVelMps.slice() : null,
      },
      qpos: qpos.slice(),
      qvel: qvel.slice(),
      target: cmd.jointTargetRad.slice(),
      kp: cmd.kp ? cmd.kp.slice() : null,
      kd: cmd.kd ? cmd.kd.slice() : null,
    });
  });
  const end = engine.run(
    { clip, binding, controller: recorder, seed: 1, initial: initialStateFromClipFrame(clip) },
    discard,
  );
  return { steps, outcome: end.outcome };
}

interface PolicyCase {
  label: string;
  plan: PolicyPlan;
  controller: TrackingPolicyController;
  clip: MotionClip;
}

function openPolicy(policyPath: string, profile: RobotProfile, clipFor: (plan: PolicyPlan) => MotionClip): PolicyCase {
  const plan = planPolicy(policyPath, profile);
  const controller = createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded });
  const spec = plan.loaded.spec;
  return {
    label: `${plan.loaded.name} (${spec.family}, ${spec.observationSize} obs)`,
    plan,
    controller,
    clip: clipFor(plan),
  };
}

export async function benchPolicies(
  repo: string,
  modelFile = DEFAULT_MODEL_FILE,
  label = 'our G1 (assets/g1)',
): Promise<{ pass: boolean; lines: string[] }> {
  const policies = path.resolve(repo, '../shared/data/policies');
  const lafan = path.resolve(repo, '../shared/data/motions/lafan1_g1_csv');
  const profile = loadRobotProfile(modelFile);
  const limits = { jointLimitsRad: profile.joints.map((j) => j.rangeRad) };
  const J = profile.joints.length;
  const engine = await SimEngine.load(modelFile);
  const cases: PolicyCase[] = [];
  const lines: string[] = [];
  let pass = true;
  try {
    const violin = openPolicy(path.join(policies, 'beyondmimic/Violin.onnx'), profile, (p) => p.baked!.clip);
    cases.push(violin);
    // The unitree_rl_mjlab folder carries no reference: it was trained on LAFAN1 dance1_subject2.
    cases.push(
      openPolicy(path.join(policies, 'unitree_rl_mjlab_mimic_dance1_subject2'), profile, () =>
        loadClipFile(path.join(lafan, 'dance1_subject2.csv'), limits),
      ),
    );
    const builtinBinding = makeBuiltinBinding();
    const builtin = new BuiltinTracker(builtinBinding, J);
    const physics = violin.controller.physics;
    const modelDtMs = engine.timestepS * 1000;
    const builtinSteps = Math.round(1 / (builtinBinding.controlRateHz * engine.timestepS));

    // (a) step cost on recorded observations, beside the builtin tracker and one physics interval.
    const captures = cases.map((c) =>
      captureRollout(engine, c.plan.binding, c.controller, clipHead(c.clip, STEP_CAPTURE_S)),
    );
    const cmd = createControlCommand(J);
    const cycle = (steps: Captured[], fn: (s: Captured) => void) => {
      let i = 0;
      return (n: number) => {
        for (let k = 0; k < n; k++) {
          fn(steps[i]);
          i = i + 1 === steps.length ? 0 : i + 1;
        }
      };
    };
    const vSteps = captures[0].steps;
    engine.applyInitialState(initialStateFromClipFrame(violin.clip));
    const restore = engine.applyPhysics(physics);
    let rates: RateResult[];
    try {
      const interval = (s: Captured) => {
        const live = engine.liveQposQvel();
        live.qpos.set(s.qpos);
        live.qvel.set(s.qvel);
        engine.liveActuate(s.target, s.kp, s.kd);
        for (let p = 0; p < physics.decimation; p++) {
          engine.liveStep1();
          engine.liveStep2();
        }
      };
      rates = compareRates([
        ...cases.map((c, k) => ({
          label: c.label,
          batch: 20,
          op: cycle(captures[k].steps, (s) => c.controller.step(s.obs, cmd)),
        })),
        { label: 'builtin', batch: 2000, op: cycle(vSteps, (s) => builtin.step(s.obs, cmd)) },
        { label: 'physics', batch: 10, op: cycle(vSteps, interval) },
      ]);
    } finally {
      restore();
    }
    const us = (r: { perSecond: number }) => 1e6 / r.perSecond;
    const builtinUs = us(rates[cases.length]);
    const physicsUs = us(rates[cases.length + 1]);
    const sane = (v: number) => Number.isFinite(v) && v > 0;
    cases.forEach((c, k) => {
      const v = us(rates[k]);
      const ok = sane(v);
      pass &&= ok;
      const r = rates[k].rounds.map((x) => (1e6 / x).toFixed(1)).join('/');
      lines.push(
        `policy ${label}: step cost of ${c.label}: ${v.toFixed(1)} µs/step (rounds ${r}; ${captures[k].steps.length} observations of a ${STEP_CAPTURE_S} s rollout, ${captures[k].outcome}); ` +
          `inference/physics interval ${(v / physicsUs).toFixed(2)}, ${(v / builtinUs).toFixed(0)}x the builtin tracker's step ${ok ? 'OK' : 'NOT FINITE'}`,
      );
    });
    pass &&= sane(builtinUs) && sane(physicsUs);
    lines.push(
      `policy ${label}: baselines, same rounds: builtin tracker step ${builtinUs.toFixed(2)} µs; one control interval of physics (${physics.decimation} × ${physics.timestepS * 1000} ms, ${physics.id}) ${physicsUs.toFixed(1)} µs [medians of 5 interleaved rounds]`,
    );

    // (b) real-time factor of the Violin rollout vs the builtin tracker on the same clip.
    const clip = violin.clip;
    const simS = (clip.frameCount - 1) / clip.fps;
    const rollout = (binding: WbcBinding, controller: Controller) => {
      const t0 = performance.now();
      const end = engine.run({ clip, binding, controller, seed: 1, initial: initialStateFromClipFrame(clip) }, discard);
      return { rtf: end.simSeconds / ((performance.now() - t0) / 1000), outcome: end.outcome };
    };
    rollout(violin.plan.binding, violin.controller);
    rollout(builtinBinding, builtin);
    const pol: number[] = [];
    const bui: number[] = [];
    let polOutcome = '';
    let buiOutcome = '';
    for (let r = 0; r < 3; r++) {
      // Alternate the order so a disturbance does not always hit the same candidate.
      const order = r % 2 === 0 ? ['p', 'b'] : ['b', 'p'];
      for (const w of order) {
        if (w === 'p') {
          const x = rollout(violin.plan.binding, violin.controller);
          pol.push(x.rtf);
          polOutcome = x.outcome;
        } else {
          const x = rollout(builtinBinding, builtin);
          bui.push(x.rtf);
          buiOutcome = x.outcome;
        }
      }
    }
    const p = median(pol);
    const b = median(bui);
    const ratio = p / b;
    const ok = Number.isFinite(ratio) && ratio >= POLICY_RTF_RATIO_TARGET;
    pass &&= ok;
    lines.push(
      `policy ${label}: in-thread rollout of ${violin.plan.loaded.name}'s baked clip (${simS.toFixed(1)} s): policy (${physics.decimation} × ${physics.timestepS * 1000} ms) ${p.toFixed(1)}x real time (runs ${pol.map((v) => v.toFixed(1)).join(', ')}; ${polOutcome}), ` +
        `builtin tracker (model physics ${builtinSteps} × ${modelDtMs} ms) ${b.toFixed(1)}x (runs ${bui.map((v) => v.toFixed(1)).join(', ')}; ${buiOutcome}); ` +
        `ratio policy/builtin ${ratio.toFixed(2)} (target >= ${POLICY_RTF_RATIO_TARGET}) ${ok ? 'PASS' : 'BELOW TARGET'} [medians of 3 interleaved runs after a warm-up]`,
    );
  } finally {
    for (const c of cases) c.controller.dispose();
    engine.dispose();
  }
  return { pass, lines };
}
