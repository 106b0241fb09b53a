import { describe, expect, it } from 'vitest';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { humanoidverseSpec, trainingConfigFamily } from '../../src/domain/wbc/humanoidverseFamily';
import type { OnnxModelInfo } from '../../src/domain/wbc/onnxModelInfo';
import type { ConfigSource } from '../../src/domain/wbc/policyFamilies';
import { TrackingObservationBuilder, type TrackingRobotState } from '../../src/domain/wbc/trackingObservation';
import type { TrackingReference } from '../../src/domain/wbc/trackingReference';
import { readPolicyYaml } from '../../src/services/wbc/loadPolicy';
import { sharedData } from '../helpers/sharedData';

// The humanoidverse adapter on PBHC's released config.yaml (read as data) with a stand-in graph
// description: what it reads, what it refuses (naming the field), and the observation it builds
// (HumanoidVerse's history: previous steps, newest first, zeros after reset; the phase term).

const CONFIG = sharedData('policies', 'pbhc_horse_stance_pose', 'config.yaml');
const real = readPolicyYaml(CONFIG);
/** The config as data, loosely typed so a test can edit any key. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;
const src = (edit?: (d: Loose) => void): ConfigSource => {
  const data = structuredClone(real.data) as Loose;
  edit?.(data);
  return { file: CONFIG, data };
};
const graph = (obsWidth = 380, actionWidth = 23): OnnxModelInfo => ({
  file: 'model.onnx',
  producer: 'pytorch',
  opset: 11,
  inputs: [{ name: 'actor_obs', shape: [1, obsWidth], dtype: 'float32' }],
  outputs: [{ name: 'action', shape: [1, actionWidth], dtype: 'float32' }],
  metadata: {},
  externalData: [],
  timeIndexed: {},
});
const refused = (run: () => unknown): string => {
  try {
    run();
  } catch (e) {
    return (e as Error).message;
  }
  return 'read';
};

describe('humanoidverse adapter', () => {
  it('tells HumanoidVerse configs from HoloMotion ones by their keys', () => {
    expect(trainingConfigFamily(real.data)).toBe('humanoidverse');
    expect(trainingConfigFamily({ ...(real.data as object), modules: { actor: { obs_schema: {} } } })).toBe(
      'holomotion',
    );
    expect(trainingConfigFamily({ obs: { obs_dict: {} } })).toBe(null);
  });

  it('reads the released config: 380 values in sorted order, 23 driven joints, gains by name part', () => {
    const s = humanoidverseSpec(graph(), src(), null);
    expect(s.observationSize).toBe(380);
    expect(s.observation.map((t) => t.name)).toEqual([...s.observation.map((t) => t.name)].sort());
    expect(s.jointOrder.policyNames).toHaveLength(23);
    expect(s.jointOrder.held).toEqual(G1_JOINT_NAMES.filter((n) => n.includes('wrist')));
    expect(s.controlRateHz).toBe(50);
    expect(s.physics.armatureKgM2.every((a) => a === 0.001)).toBe(true);
    const at = (n: string) => G1_JOINT_NAMES.indexOf(n as (typeof G1_JOINT_NAMES)[number]);
    expect(s.physics.effortLimitNm[at('left_knee_joint')]).toBe(139);
    expect(s.kd[at('left_knee_joint')]).toBe(4);
  });

  it('refuses mismatched widths, unknown joints and missing gains, naming the field', () => {
    expect(refused(() => humanoidverseSpec(graph(376), src(), null))).toMatch(
      /^model\.onnx \[inputs\.actor_obs\]: has width 376 .* builds 380/,
    );
    expect(refused(() => humanoidverseSpec(graph(380, 29), src(), null))).toMatch(
      /^model\.onnx \[outputs\.action\]: has shape \[1, 29\]; .* robot\.dof_names lists 23 joints/,
    );
    expect(
      refused(() =>
        humanoidverseSpec(
          graph(),
          src((d) => {
            d.obs.obs_dims[0] = { base_lin_vel: 3 };
            d.obs.obs_dims[1] = { base_ang_vel: 4 };
          }),
          null,
        ),
      ),
    ).toMatch(/\[obs\.obs_dims\[1\]\.base_ang_vel\]: is 4, but base_ang_vel \(base_ang_vel_b\) has 3/);
    expect(
      refused(() =>
        humanoidverseSpec(
          graph(),
          src((d) => {
            d.robot.dof_names[3] = 'left_knee';
          }),
          null,
        ),
      ),
    ).toMatch(/\[robot\.dof_names\]: joint names do not match .*"left_knee"/);
    expect(
      refused(() =>
        humanoidverseSpec(
          graph(),
          src((d) => {
            delete d.robot.control.stiffness.elbow;
          }),
          null,
        ),
      ),
    ).toMatch(/\[robot\.control\.stiffness\]: no key is part of the joint name "left_elbow_joint"/);
    expect(
      refused(() =>
        humanoidverseSpec(
          graph(),
          src((d) => {
            d.simulator.config.sim.fps = 300;
          }),
          null,
        ),
      ),
    ).toMatch(/\[simulator\.config\.sim\.control_decimation\]: the control period 4\/300 s is not a whole number/);
  });

  it('builds the history from the previous steps, newest first, zeros after reset; the phase runs 0 → 1', () => {
    const s = humanoidverseSpec(graph(), src(), null);
    const b = new TrackingObservationBuilder(s);
    const J = 29;
    const frames = 11;
    const ref: TrackingReference = {
      frames,
      rateHz: 50,
      jointPosRad: new Float64Array(frames * J),
      jointVelRadS: new Float64Array(frames * J),
      rootPosM: new Float64Array(frames * 3),
      rootQuatWxyz: new Float64Array(frames * 4).map((_, i) => (i % 4 === 0 ? 1 : 0)),
      anchorPosM: new Float64Array(frames * 3),
      anchorQuatWxyz: new Float64Array(frames * 4).map((_, i) => (i % 4 === 0 ? 1 : 0)),
      anchorLinVelMps: new Float64Array(frames * 3),
      anchorAngVelRadS: new Float64Array(frames * 3),
    };
    const state = (k: number): TrackingRobotState => ({
      jointPosRad: new Float64Array(J),
      jointVelRadS: Float64Array.from({ length: J }, () => k + 1), // dof_vel = k + 1 at step k
      rootQuatWxyz: [1, 0, 0, 0],
      rootPosM: [0, 0, 0.8],
      rootLinVelMps: null,
      gyroRadS: [0, 0, 0],
      anchorPosM: [0, 0, 0.8],
      anchorQuatWxyz: [1, 0, 0, 0],
    });
    const offsetOf = (name: string) => {
      let o = 0;
      for (const t of s.observation) {
        if (t.name === name) return o;
        o += t.size * t.history;
      }
      throw new Error(name);
    };
    const hist = offsetOf('history_actor.dof_vel');
    const phaseHist = offsetOf('history_actor.ref_motion_phase');
    const zero = new Float32Array(23);
    let obs = b.build(state(0), ref, 0, zero);
    expect(Array.from(obs.slice(hist, hist + 92)).every((v) => v === 0)).toBe(true);
    for (let k = 1; k <= 2; k++) obs = b.build(state(k), ref, k, zero);
    // at step 2: [v(1), v(0), 0, 0] × 0.05 (dof_vel's scale), each 23 wide
    const first = (i: number) => obs[hist + 23 * i];
    expect([first(0), first(1), first(2), first(3)].map((v) => +v.toFixed(4))).toEqual([0.1, 0.05, 0, 0]);
    expect(obs[offsetOf('dof_vel')]).toBeCloseTo(0.15, 6);
    expect(obs[offsetOf('ref_motion_phase')]).toBeCloseTo(0.2, 6);
    expect(Array.from(obs.slice(phaseHist, phaseHist + 4)).map((v) => +v.toFixed(4))).toEqual([0.1, 0, 0, 0]);
    b.reset();
    obs = b.build(state(5), ref, 10, zero);
    expect(Array.from(obs.slice(hist, hist + 92)).every((v) => v === 0)).toBe(true);
    expect(obs[offsetOf('ref_motion_phase')]).toBe(1);
  });
});
