import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { InputError } from '../../domain/problems';
import { G1_NUM_JOINTS } from '../../domain/robot/g1Joints';
import { mjlabG1Physics, type PhysicsProfile } from '../../domain/robot/physicsProfile';
import {
  VELOCITY_POLICY_ADAPTER,
  VelocityObservation,
  velocityPolicySpec,
  type VelocityPolicyFault,
  type VelocityPolicySpec,
  type VelocityRobotState,
} from '../../domain/wbc/velocityPolicy';
import { readBoundedFile } from '../files/boundedRead';
import { located, readPolicyYaml } from './loadPolicy';
import type { OnnxSession } from './onnxPolicySession';
import { openPolicySession } from './trackingPolicyController';

// The standing controller after a clip: unitree_rl_lab's velocity policy at zero command, read
// from its own folder (params/deploy.yaml + exported/policy.onnx, the layout State_RLBase reads:
// policy_dir/params/deploy.yaml, policy_dir/exported/policy.onnx) by the pure adapter
// src/domain/wbc/velocityPolicy.ts, run with onnxruntime-node (input `obs`, output `actions`:
// the names isaaclab::OrtRunner feeds and fetches) at step_dt.

export class StandingPolicyError extends Error {
  override readonly name = 'StandingPolicyError';
}

export interface StandingPolicyIdentity {
  /** `unitree_rl_lab-velocity/<folder name>`. */
  id: string;
  /** `<adapter>+<hash12>`. */
  version: string;
  policyPath: string;
  modelFile: string;
  /** sha256 over policy.onnx then deploy.yaml (name, length, bytes of each). */
  checkpointHash: string;
  controlRateHz: number;
}

export interface LoadedStandingPolicy {
  identity: StandingPolicyIdentity;
  spec: VelocityPolicySpec;
  configFile: string;
}

/** Reads the folder's deploy.yaml and hashes its files; InputError naming the file and key. */
export function loadStandingPolicy(policyPath: string): LoadedStandingPolicy {
  const dir = path.resolve(policyPath);
  const configFile = path.join(dir, 'params', 'deploy.yaml');
  const modelFile = path.join(dir, 'exported', 'policy.onnx');
  for (const f of [configFile, modelFile])
    if (!fs.existsSync(f))
      throw new InputError(
        { file: policyPath },
        `not a unitree_rl_lab policy folder: ${path.relative(dir, f)} is missing (State_RLBase reads params/deploy.yaml and exported/policy.onnx)`,
      );
  const cfg = readPolicyYaml(configFile);
  const spec = located(cfg, () => velocityPolicySpec(cfg));
  const rate = 1 / spec.stepDtS;
  if (Math.abs(rate - Math.round(rate)) > 1e-6)
    throw new InputError({ file: configFile, key: 'step_dt' }, `step_dt ${spec.stepDtS} s is not a whole rate in Hz`);
  const h = createHash('sha256');
  for (const f of [modelFile, configFile]) {
    const b = readBoundedFile(f, 'onnxModel');
    h.update(`${path.basename(f)}\0${b.length}\0`);
    h.update(b);
  }
  const checkpointHash = h.digest('hex');
  return {
    identity: {
      id: `unitree_rl_lab-velocity/${path.basename(dir)}`,
      version: `${VELOCITY_POLICY_ADAPTER}+${checkpointHash.slice(0, 12)}`,
      policyPath,
      modelFile,
      checkpointHash,
      controlRateHz: Math.round(rate),
    },
    spec,
    configFile,
  };
}

export interface StandingControllerOptions {
  /** The velocity command, [vx m/s, vy m/s, wz rad/s]; the standing controller runs at zero. */
  command?: readonly [number, number, number];
  /** Deliberate misreading for negative controls in tests (never in production paths). */
  fault?: VelocityPolicyFault;
}

/** The velocity policy as a controller: reset from the measured state, then one step per step_dt. */
export class StandingPolicyController {
  readonly identity: StandingPolicyIdentity;
  readonly spec: VelocityPolicySpec;
  /**
   * The physics it runs on in a simulator: unitree_rl_lab's velocity task steps 5 ms with
   * decimation 4 (velocity_env_cfg.py: sim.dt 0.005, decimation 4 = step_dt 0.02); the G1's
   * armature and effort limits are the mjlab G1 constants (the same Unitree motor figures).
   */
  readonly physics: PhysicsProfile;
  /** PD gains, canonical (SDK) order: deploy.yaml stiffness / damping. */
  readonly kp: Float64Array;
  readonly kd: Float64Array;
  readonly observation: VelocityObservation;
  private readonly session: OnnxSession;
  private readonly feeds: Record<string, import('onnxruntime-node').Tensor>;
  private readonly fetch: readonly string[];
  private released = false;

  constructor(loaded: LoadedStandingPolicy, options: StandingControllerOptions = {}) {
    this.identity = loaded.identity;
    this.spec = loaded.spec;
    this.physics = mjlabG1Physics(0.005, Math.round(loaded.spec.stepDtS / 0.005));
    this.kp = Float64Array.from(loaded.spec.kp);
    this.kd = Float64Array.from(loaded.spec.kd);
    this.observation = new VelocityObservation(loaded.spec, options.command ?? [0, 0, 0], options.fault ?? null);
    const s = openPolicySession(
      loaded.identity.modelFile,
      {
        obsInput: 'obs',
        timeInput: null,
        actionOutput: 'actions',
        observationSize: loaded.spec.observationSize,
        recurrent: [],
        stepCounter: null,
      },
      this.observation.vector,
      G1_NUM_JOINTS,
    );
    this.session = s.session;
    this.feeds = s.feeds;
    this.fetch = s.fetch;
  }

  /** env->reset(): zero last action, every history filled from `state`. */
  reset(state: VelocityRobotState): void {
    this.observation.reset(state);
  }

  /** One policy step: the observation from `state`, one inference, targets (canonical order). */
  step(state: VelocityRobotState, targetRad: Float64Array): void {
    if (this.released) throw new StandingPolicyError(`${this.identity.id}: the session was released`);
    this.observation.update(state);
    const a = this.session.runMany(this.feeds, this.fetch)['actions'].data as Float32Array;
    for (let i = 0; i < G1_NUM_JOINTS; i++)
      if (!Number.isFinite(a[i]))
        throw new StandingPolicyError(
          `${this.identity.id}: the policy gave a non-finite action (policy joint ${i}: ${a[i]})`,
        );
    this.observation.applyAction(a, targetRad);
  }

  dispose(): void {
    if (this.released) return;
    this.released = true;
    this.session.release();
  }
}

/** Loads the folder and opens its session (with a trial inference); InputError names the problem. */
export function createStandingPolicyController(
  policyPath: string,
  options: StandingControllerOptions = {},
): StandingPolicyController {
  return new StandingPolicyController(loadStandingPolicy(policyPath), options);
}
