import { presetIdOf } from '../../domain/wbc/policyPresets';
import { clipToDto } from '../../api/clipDto';
import type { PolicyCheckDto, PolicyInfoDto } from '../../api/policyContract';
import { POLICY_ID_RE } from '../../api/policyContract';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import { resolveBindingSpec } from '../sim/bindingSpec';
import type { OffThreadFiles } from './offThread';
import type { PolicyPlan } from '../wbc/policyRun';
import { ApiFailure } from './apiFailure';
import type { ClipCache } from './clipCache';
import { SerializedResult } from './serializedResult';

// The policies this console's services opened (policies.open), by `policy-<hash16>`: the
// renderer names them by that id in bindings, so it never sends a path to run. Opening the same
// files again gives the same id. The files are read, bounded and planned in the console's file
// worker (offThread.ts), never on the event loop that carries STOP. The baked motion of a policy goes into the clip cache, so it can
// be shown and run like any clip.

/** The id the console names an opened policy by: the same files give the same id. */
export const policyIdOf = (plan: PolicyPlan): string => `policy-${plan.loaded.contentHash.slice(0, 16)}`;

/** What policies.open answers for a planned policy. */
export function policyInfoDto(plan: PolicyPlan): PolicyInfoDto {
  const s = plan.loaded.spec;
  return {
    policyId: policyIdOf(plan),
    path: plan.loaded.policyPath,
    family: s.family,
    adapter: s.adapter,
    bindingId: plan.binding.id,
    bindingVersion: plan.binding.version,
    preset: plan.loaded.preset,
    files: plan.loaded.files,
    inputs: plan.loaded.info.inputs,
    outputs: plan.loaded.info.outputs,
    jointOrder: s.jointOrder.label,
    observation: s.observation.map((t) => ({ term: t.name, size: t.size, history: t.history })),
    observationSize: s.observationSize,
    controlRateHz: s.controlRateHz,
    physicsId: s.physics.id,
    timestepS: s.physics.timestepS,
    decimation: s.physics.decimation,
    actionMode: s.action.mode,
    anchorBody: s.anchorBody,
    needs: [...s.needs],
    notes: [...s.notes],
    motion: plan.baked
      ? {
          frames: plan.baked.clip.frameCount,
          fps: plan.baked.clip.fps,
          clipId: plan.baked.clip.id,
          fkResidualMaxM: plan.baked.fkResidualM?.max ?? null,
        }
      : null,
    bakedClip: plan.baked ? clipToDto(plan.baked.clip) : null,
    configuredMotion: s.configuredMotion
      ? { file: s.configuredMotion.file, fps: s.configuredMotion.fps, source: s.configuredMotion.source }
      : null,
  };
}

export class PolicyRegistry {
  private readonly plans = new Map<string, PolicyPlan>();

  constructor(
    private readonly o: {
      clips: ClipCache;
      /** The file worker that reads, checks and plans a policy, and runs its check, off the event loop. */
      files: Pick<OffThreadFiles, 'openPolicy' | 'checkPolicy'>;
      /** The robot model (MJCF) the policies are planned on. */
      modelFile: string;
    },
  ) {}

  /**
   * Reads the policy in the file worker (InputError naming the file on bad input), under the
   * declared preset `presetId` when one is given, and registers it; the answer's JSON was made
   * there too. The same file under another preset hashes apart, so it gets another id.
   */
  async open(policyPath: string, presetId: string | null = null): Promise<SerializedResult<PolicyInfoDto>> {
    const { plan, dtoJson } = await this.o.files.openPolicy(policyPath, this.o.modelFile, presetId);
    this.plans.set(policyIdOf(plan), plan);
    if (plan.baked) this.o.clips.put(plan.baked.clip);
    return new SerializedResult(dtoJson, () => policyInfoDto(plan));
  }

  /**
   * policies.check: the opened policy's check in the file worker, on its own motion or on the
   * clip `clipId` names (a clip the services hold).
   */
  async check(policyId: string, clipId: string | undefined, seconds: number | undefined): Promise<PolicyCheckDto> {
    const plan = this.plans.get(policyId);
    if (!plan)
      throw new ApiFailure(
        'not_found',
        `policy ${policyId} is not open in the console services: open it again (policies.open)`,
        'params.policyId',
      );
    let clip: MotionClip | null = null;
    if (clipId !== undefined) {
      clip = this.o.clips.get(clipId) ?? this.bakedClip(clipId) ?? null;
      if (!clip)
        throw new ApiFailure('not_found', `clip ${clipId} is not held by the console services`, 'params.clipId');
    }
    if (!this.o.files.checkPolicy)
      throw new ApiFailure('internal', 'this console services build cannot check policies');
    return this.o.files.checkPolicy({
      policyPath: plan.loaded.policyPath,
      contentHash: plan.loaded.contentHash,
      preset: presetIdOf(plan.loaded.preset),
      modelFile: this.o.modelFile,
      clip,
      seconds,
    });
  }

  get(policyId: string): PolicyPlan | undefined {
    return this.plans.get(policyId);
  }

  /** The baked motion (a clip) of an opened policy, by clip id. */
  bakedClip(clipId: string): MotionClip | undefined {
    for (const p of this.plans.values()) if (p.baked?.clip.id === clipId) return p.baked.clip;
    return undefined;
  }

  /** A console binding spec: an opened policy's id, or builtin…; `field` names the parameter in errors. */
  async resolve(spec: string, field: string): Promise<WbcBinding> {
    if (POLICY_ID_RE.test(spec)) {
      const plan = this.plans.get(spec);
      if (!plan)
        throw new ApiFailure(
          'not_found',
          `policy ${spec} is not open in the console services: open it again (policies.open)`,
          field,
        );
      return plan.binding;
    }
    return resolveBindingSpec(spec);
  }
}
