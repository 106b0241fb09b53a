import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/problems';
import type { OnnxModelInfo } from '../../src/domain/wbc/onnxModelInfo';
import { runQualification } from '../../src/services/qualification';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode } from '../../src/services/sim/runSimEpisode';
import { openCampaign } from '../../src/services/trace';
import { listAdmittedPairs } from '../../src/services/trial';
import { readOnnxFile } from '../../src/services/wbc/onnxModelReader';
import { planPolicy, type PolicyPlan } from '../../src/services/wbc/policyRun';
import { createTrackingPolicyController } from '../../src/services/wbc/trackingPolicyController';
import { policyMotionsWorkload } from '../../src/services/workload/policyWorkload';
import { encodeBakedPolicy, type OnnxInitializer, type OnnxNode } from '../helpers/onnxBuilder';
import { motionbench } from '../helpers/runCli';
import { sharedData } from '../helpers/sharedData';

// The last bad input: a released-family policy whose action is NaN is refused
// with the file and the reason, at load time where possible, and nothing is recorded as a valid
// episode. The policies are synthetic BeyondMimic exports written here (os.tmpdir()): the real
// Jump_wose export's metadata verbatim (joint names, gains, default pose, bodies, observation
// names) and its baked reference tables as initializers gathered by time_step, with an action
// path of our own:
//   zero     actions = obs · 0                      positive control: loads and runs
//   nanLoad  actions = obs · 0 + b, b[3] = NaN       NaN for every input, so the load-time trial
//                                                    inference (zero observation) sees it
//   nanRun   actions = √(obs · W), W = −1 from the two diagonal entries R00, R11 of the
//            motion_anchor_ori_b term to every action: 0 for the zero observation of the trial
//            inference (√0 = 0), ≈ √−2 = NaN at the first real step, where the robot anchor and
//            the yaw-aligned reference anchor nearly agree (R ≈ I) from any start, perturbed or not.

const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
const JUMP = sharedData('policies/beyondmimic/Jump_wose.onnx');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-policy-nan-'));
const A = 29;
const NAN_JOINT = 3;

let real: OnnxModelInfo;
let realPlan: PolicyPlan;
let D: number;
const files = { zero: '', nanLoad: '', nanRun: '' };
let sim: EmbeddedSimulator;

/** Writes a BeyondMimic-shaped .onnx with Jump_wose's metadata and reference and the given action path. */
function writePolicy(name: string, actionNodes: OnnxNode[], actionInitializers: OnnxInitializer[]): string {
  const baked = Object.fromEntries(
    Object.entries(real.timeIndexed).map(([k, c]) => [k, { dims: c.dims, data: c.data }]),
  );
  const file = path.join(root, `${name}.onnx`);
  fs.writeFileSync(
    file,
    encodeBakedPolicy({ metadata: real.metadata, obsDim: D, baked, actionNodes, actionInitializers }),
  );
  return file;
}

/** Offset of the first term of `kind` in the policy's observation. */
function offsetOf(plan: PolicyPlan, kind: string): number {
  let off = 0;
  for (const t of plan.loaded.spec.observation) {
    if (t.kind === kind) return off;
    off += t.size * t.history;
  }
  throw new Error(`no ${kind} term`);
}

beforeAll(async () => {
  real = readOnnxFile(JUMP).info;
  realPlan = planPolicy(JUMP, profile);
  D = realPlan.loaded.spec.observationSize;
  const zeroW: OnnxInitializer = { name: 'W', dims: [D, A], type: 'float32', values: new Float32Array(D * A) };
  files.zero = writePolicy('zero_action', [{ opType: 'MatMul', inputs: ['obs', 'W'], outputs: ['actions'] }], [zeroW]);
  const b = new Float32Array(A);
  b[NAN_JOINT] = NaN;
  files.nanLoad = writePolicy(
    'nan_at_load',
    [
      { opType: 'MatMul', inputs: ['obs', 'W'], outputs: ['pre'] },
      { opType: 'Add', inputs: ['pre', 'b'], outputs: ['actions'] },
    ],
    [zeroW, { name: 'b', dims: [A], type: 'float32', values: b }],
  );
  // motion_anchor_ori_b = columns 0, 1 of R, row-major: [R00, R01, R10, R11, R20, R21].
  const ori = offsetOf(realPlan, 'ref_anchor_ori_b');
  const W = new Float32Array(D * A);
  for (let a = 0; a < A; a++) {
    W[ori * A + a] = -1;
    W[(ori + 3) * A + a] = -1;
  }
  files.nanRun = writePolicy(
    'nan_at_run',
    [
      { opType: 'MatMul', inputs: ['obs', 'W'], outputs: ['pre'] },
      { opType: 'Sqrt', inputs: ['pre'], outputs: ['actions'] },
    ],
    [{ name: 'W', dims: [D, A], type: 'float32', values: W }],
  );
  sim = new EmbeddedSimulator({ modelFile: DEFAULT_MODEL_FILE, workers: 1 });
  await sim.ready();
}, 60_000);

afterAll(async () => {
  await sim?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('the synthetic exports read as BeyondMimic policies (positive control)', () => {
  it('each file is a beyondmimic policy carrying the Jump_wose reference, and the finite one runs an episode', async () => {
    for (const f of [files.zero, files.nanRun]) {
      const plan = planPolicy(f, profile);
      expect(plan.loaded.spec.family).toBe('beyondmimic');
      expect(plan.loaded.modelFile).toBe(f);
      expect(plan.loaded.spec.observationSize).toBe(D);
      // the same baked motion as the real export (the clip id is the content's)
      expect(plan.baked!.clip.id).toBe(realPlan.baked!.clip.id);
      expect(plan.baked!.clip.frameCount).toBe(realPlan.baked!.clip.frameCount);
    }
    const plan = planPolicy(files.zero, profile);
    createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded }).dispose();
    // Zero actions hold the default pose while the reference jumps: it may fall, but it runs.
    const r = await runSimEpisode(sim, { clip: plan.baked!.clip, binding: plan.binding, profile, keepFrames: false });
    console.log(
      `zero-action control: ${r.end.outcome} (${r.end.reason}), ${r.end.frames}/${r.end.plannedFrames} frames`,
    );
    expect(['completed', 'hard_failure']).toContain(r.end.outcome);
    expect(r.end.frames).toBeGreaterThan(1);
  }, 60_000);
});

describe('(a) an action that is NaN for any input: refused at load', () => {
  it('reading the policy runs a trial inference and refuses it with an InputError naming the .onnx and the non-finite action', () => {
    let err: unknown;
    try {
      planPolicy(files.nanLoad, profile);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    const e = err as InputError;
    expect(e.location.file).toBe(files.nanLoad);
    expect(e.reason).toMatch(new RegExp(`trial inference gave a non-finite action \\(joint ${NAN_JOINT}: NaN\\)`));
    expect(e.message.startsWith(`${files.nanLoad}: `)).toBe(true);
  });

  it('`motionbench policy info <file>` exits 1 with the file and reason', async () => {
    const r = await motionbench('policy', 'info', files.nanLoad);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      `motionbench: ${files.nanLoad}: a trial inference gave a non-finite action (joint ${NAN_JOINT}: NaN)`,
    );
  }, 120_000);

  it('`motionbench sim --binding <file>` exits 1 with the file and reason and writes no episode', async () => {
    const out = path.join(root, 'cli_nan_at_load.mcap');
    const r = await motionbench('sim', '--binding', files.nanLoad, '--out', out, '--json');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      `motionbench: ${files.nanLoad}: a trial inference gave a non-finite action (joint ${NAN_JOINT}: NaN)`,
    );
    expect(r.stdout).toBe('');
    expect(fs.existsSync(out)).toBe(false);
  }, 120_000);

  it('`motionbench qualify --binding <file>` is refused before a campaign is touched', async () => {
    const dir = path.join(root, 'campaign-nan-at-load');
    const r = await motionbench('qualify', '--binding', files.nanLoad, '--campaign', dir, '--rollouts', '1');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`${files.nanLoad}: a trial inference gave a non-finite action`);
    expect(fs.existsSync(path.join(dir, 'campaign.sqlite'))).toBe(false);
  }, 120_000);
});

describe('(b) an action that turns NaN only at run time', () => {
  it('passes the load-time trial; the episode ends as infrastructure_error naming the .onnx, before the motion ends', async () => {
    const plan = planPolicy(files.nanRun, profile);
    // The trial inference (zero observation) gives √0 = 0: accepted at load.
    createTrackingPolicyController(plan.binding, profile, { loaded: plan.loaded }).dispose();
    const clip = plan.baked!.clip;
    const r = await runSimEpisode(sim, { clip, binding: plan.binding, profile, keepFrames: false });
    console.log(
      `(b) runSimEpisode: ${r.end.outcome}: ${r.end.reason}; ${r.end.frames} frames (plannedFrames ${r.end.plannedFrames}, clip ${clip.frameCount} frames)`,
    );
    expect(r.end.outcome).toBe('infrastructure_error');
    expect(r.end.reason).toContain(files.nanRun);
    expect(r.end.reason).toMatch(/non-finite action \(NaN for \w+_joint\) at control step 0/);
    expect(r.end.frames).toBeLessThan(clip.frameCount);
    expect(r.end.failure).toBeNull();
  }, 60_000);

  it('`motionbench sim --binding <file>` exits 1 reporting infrastructure_error with the file and reason', async () => {
    const r = await motionbench('sim', '--binding', files.nanRun, '--json');
    expect(r.code, r.stderr).toBe(1);
    const doc = JSON.parse(r.stdout) as { outcome: string; reason: string; frames: number };
    expect(doc.outcome).toBe('infrastructure_error');
    expect(doc.reason).toContain(files.nanRun);
    expect(doc.reason).toMatch(/non-finite action/);
    expect(doc.frames).toBeLessThan(realPlan.baked!.clip.frameCount);
  }, 120_000);

  it('qualification records no valid episode of the pair and does not admit it; the infrastructure errors are listed', async () => {
    const plan = planPolicy(files.nanRun, profile);
    const dir = path.join(root, 'campaign-nan-at-run');
    const q = await runQualification({
      campaignDir: dir,
      workload: policyMotionsWorkload([plan], profile),
      bindings: [plan.binding],
      profile,
      simulator: sim,
    });
    const pair = q.pairs.find((p) => p.clipId === plan.baked!.clip.id)!;
    console.log(
      `(b) qualification: ${q.pairsTotal} pair(s), ${pair.status}, admitted ${pair.admitted}, ${q.episodesRecorded} episodes recorded, ${q.infrastructureRetries} infrastructure retries; reasons: ${pair.reasons.join(' | ')}`,
    );
    expect(q.pairsTotal).toBe(1);
    expect(pair.admitted).not.toBe(true);
    expect(q.admitted).toBe(0);
    expect(pair.reasons.join('\n')).toContain(files.nanRun);
    expect(pair.reasons.join('\n')).toMatch(/infrastructure_error.*non-finite action/);
    const store = await openCampaign(dir);
    try {
      const eps = store.findEpisodes({ parentTraceId: pair.parentTraceId });
      expect(eps.length).toBeGreaterThan(0);
      for (const e of eps) {
        expect(e.outcome).toBe('infrastructure_error');
        expect(e.reason).toContain(files.nanRun);
      }
      expect(store.findEpisodes({ outcome: 'completed' })).toHaveLength(0);
      expect(store.findEpisodes({ outcome: 'hard_failure' })).toHaveLength(0);
      const adm = store.listAdmissions({ parentTraceId: pair.parentTraceId });
      for (const a of adm) expect(a.admitted).toBe(false);
      expect(listAdmittedPairs(store).filter((p) => p.admitted)).toHaveLength(0);
      console.log(
        `(b) stored: ${eps.length} episodes (${[...new Set(eps.map((e) => `${e.status}/${e.outcome}`))].join(', ')}), ${adm.length} admission(s): ${adm.map((a) => `admitted ${a.admitted}`).join(', ')}`,
      );
    } finally {
      store.close();
    }
  }, 240_000);
});
