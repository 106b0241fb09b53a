// The `policies` workload: the motions released policies were trained to track, taken from the
// policies themselves, so a campaign can qualify them on their own motions:
//   a baked reference (BeyondMimic, holosoma)           that clip (clip id from its content)
//   wbc-mjlab                                           the clips its clips/manifest.yaml lists
//                                                       that exist in clips/ (missing ones are
//                                                       skipped, as the shipped folder lists 9 of
//                                                       which 4 are present)
//   unitree_rl_mjlab deploy folder                      the .csv/.npz motion files in the folder
// Capability groups are measured, not guessed from names: root travel > 1 m → locomotion;
// pelvis below 0.5 m at some frame → low_posture; otherwise dynamic (every such clip here is a
// whole-body dance, jump or kick). A policy whose family declares it tracks only its own motion
// (FAMILY_MOTION_SCOPE) is paired only with that motion (ownMotionsOf → runQualification).

import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { CapabilityGroup, MotionClip } from '../../domain/motion/motionClip';
import { InputError } from '../../domain/problems';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { buildSnapshot, type LoadedWorkload } from '../../domain/workload/snapshot';
import { readBoundedText } from '../files/boundedRead';
import { loadClipFile } from '../motion/loadClipFile';
import type { PolicyPlan } from '../wbc/policyRun';
import type { OwnMotion } from '../../domain/qualification/pairing';
import { FAMILY_MOTION_SCOPE } from '../../domain/wbc/trackingPolicy';
import { bindingKey } from '../../domain/wbc/wbcBinding';

export const POLICIES_WORKLOAD_ID = 'policies';

/** The capability group of a clip by what it does (see the header). */
export function measuredGroup(clip: Pick<MotionClip, 'frameCount' | 'rootPosM'>): CapabilityGroup {
  return measurableGroup(clip) ?? 'dynamic';
}

/** locomotion or low_posture when the clip's root shows it (see the header), else null (not measured). */
export function measurableGroup(clip: Pick<MotionClip, 'frameCount' | 'rootPosM'>): CapabilityGroup | null {
  const p = clip.rootPosM;
  let travel = 0;
  let lowest = Infinity;
  for (let f = 0; f < clip.frameCount; f++) {
    travel = Math.max(travel, Math.hypot(p[3 * f] - p[0], p[3 * f + 1] - p[1]));
    lowest = Math.min(lowest, p[3 * f + 2]);
  }
  if (travel > 1) return 'locomotion';
  if (lowest < 0.5) return 'low_posture';
  return null;
}

function folderMotions(plan: PolicyPlan, profile: RobotProfile): MotionClip[] {
  const s = plan.loaded.spec;
  const limits = { jointLimitsRad: profile.joints.map((j) => j.rangeRad) };
  // The motion the robot's FSM configuration names for it (unitree_rl_lab), at its configured fps.
  if (s.configuredMotion) return [loadClipFile(s.configuredMotion.file, { ...limits, fps: s.configuredMotion.fps })];
  if (s.family === 'wbc-mjlab') {
    const dir = path.join(path.dirname(plan.loaded.modelFile), 'clips');
    const manifest = path.join(dir, 'manifest.yaml');
    if (!fs.existsSync(manifest))
      throw new InputError(
        { file: manifest },
        'the wbc-mjlab folder has no clips/manifest.yaml: its clip library cannot be read',
      );
    const doc = parseYaml(readBoundedText(manifest, 'json')) as { clips?: { name?: unknown; file?: unknown }[] } | null;
    if (!doc || !Array.isArray(doc.clips))
      throw new InputError({ file: manifest, key: 'clips' }, 'expected a list of {name, file}');
    return doc.clips
      .filter((c) => typeof c.file === 'string' && fs.existsSync(path.join(dir, c.file as string)))
      .map((c) => {
        const clip = loadClipFile(path.join(dir, c.file as string), limits);
        if (typeof c.name === 'string') clip.name = c.name;
        return clip;
      });
  }
  if (s.family === 'mjlab-deploy') {
    const dir = path.dirname(path.dirname(plan.loaded.modelFile));
    return fs
      .readdirSync(dir)
      .filter((f) => /\.(csv|npz)$/i.test(f))
      .sort()
      .map((f) => loadClipFile(path.join(dir, f), limits));
  }
  return [];
}

/** Where a policy's own motion comes from, in words (for the pairing report). */
function ownMotionSource(plan: PolicyPlan, clips: readonly MotionClip[]): string {
  const s = plan.loaded.spec;
  const file = path.basename(plan.loaded.modelFile);
  if (plan.baked) return `the motion baked into ${file} (${plan.baked.clip.name})`;
  if (s.configuredMotion)
    return `${path.basename(s.configuredMotion.file)} at ${s.configuredMotion.fps} fps, the motion ${s.configuredMotion.source} names`;
  if (clips.length > 0) return `the motion file of its deploy folder (${clips.map((c) => c.name).join(', ')})`;
  return 'its own motion, which neither the file nor its folder holds';
}

/**
 * A policy's motions (its baked or configured motion, its folder's motion files or its clip
 * library) and, for a family that declares it tracks only its own motion, the pairing
 * declaration (src/domain/qualification/pairing.ts); `own` is null for general trackers.
 */
export function policyMotions(plan: PolicyPlan, profile: RobotProfile): { clips: MotionClip[]; own: OwnMotion | null } {
  const clips = plan.baked ? [plan.baked.clip] : folderMotions(plan, profile);
  const scope = FAMILY_MOTION_SCOPE[plan.loaded.spec.family];
  if (plan.loaded.spec.motionScope !== 'own') return { clips, own: null };
  return { clips, own: { clipIds: clips.map((c) => c.id), source: ownMotionSource(plan, clips), basis: scope.basis } };
}

/** The single-motion policies among `plans`, by binding key (for runQualification's ownMotions). */
export function ownMotionsOf(plans: readonly PolicyPlan[], profile: RobotProfile): Map<string, OwnMotion> {
  const out = new Map<string, OwnMotion>();
  for (const plan of plans) {
    const { own } = policyMotions(plan, profile);
    if (own) out.set(bindingKey(plan.binding), own);
  }
  return out;
}

/** The policies' own motions as one workload snapshot (clips deduplicated by content id). */
export function policyMotionsWorkload(plans: readonly PolicyPlan[], profile: RobotProfile): LoadedWorkload {
  const clips: MotionClip[] = [];
  const seen = new Set<string>();
  for (const plan of plans) {
    const own = policyMotions(plan, profile).clips;
    if (own.length === 0)
      throw new InputError(
        { file: plan.loaded.policyPath },
        'the policy carries no motion and its folder holds none: give a --workload with the clips it should track',
      );
    for (const c of own) {
      if (seen.has(c.id)) continue;
      seen.add(c.id);
      c.capabilityGroup = measuredGroup(c);
      clips.push(c);
    }
  }
  const names = new Set<string>();
  for (const c of clips) {
    let n = c.name;
    for (let i = 2; names.has(n); i++) n = `${c.name}-${i}`;
    c.name = n;
    names.add(n);
  }
  return { snapshot: buildSnapshot(POLICIES_WORKLOAD_ID, '1', 'folder', clips), clips };
}
