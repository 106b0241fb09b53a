import type { MotionClip } from '../../domain/motion/motionClip';
import { clipContentSha256 } from '../../domain/trace/parentTrace';
import { presetIdOf } from '../../domain/wbc/policyPresets';
import type { ParentTraceRecord } from '../../domain/trace/records';
import type { LoadedWorkload } from '../../domain/workload/snapshot';
import type { CampaignStore } from '../trace';
import { loadRobotProfile } from '../robot/loadRobotProfile';
import { planPolicy } from '../wbc/policyRun';
import { loadWorkload } from '../workload';
import { POLICIES_WORKLOAD_ID, policyMotionsWorkload } from '../workload/policyWorkload';
import { listAdmittedPairs, resolvePair, type AdmittedPair } from './admittedPairs';

// The clip of a qualification pair, from the workload it was decided on: the built-in snapshot is
// regenerated, the `policies` workload is read again from the pair's policy, a folder workload
// must be given. The clip's content must hash to the pair's
// reference (a changed clip is a different experiment and needs qualifying again).

export class PairClipError extends Error {
  override readonly name = 'PairClipError';
}

export function clipForPair(
  store: CampaignStore,
  pair: AdmittedPair,
  qual: ParentTraceRecord,
  workload?: LoadedWorkload,
): MotionClip {
  return pairWorkload(store, pair, qual, workload).clip;
}

/**
 * The pair's clip with the workload it came from. Loading the built-in snapshot regenerates it
 * (≈ 0.6 s of synchronous work): callers with a live robot or interlock link do this before
 * opening them, so the heartbeats never wait for it.
 */
export function pairWorkload(
  store: CampaignStore,
  pair: AdmittedPair,
  qual: ParentTraceRecord,
  workload?: LoadedWorkload,
): { clip: MotionClip; workload: LoadedWorkload } {
  let w = workload;
  if (!w) {
    const snap = pair.snapshotHash ? store.getWorkloadSnapshot(pair.snapshotHash) : null;
    if (snap && snap.source === 'builtin') w = loadWorkload(snap.id);
    else if (snap && snap.id === POLICIES_WORKLOAD_ID) {
      // The motions of the campaign's policies, read again from the policies (checked by content below).
      const profile = loadRobotProfile();
      // Each under the declared preset its binding was read with (the baked clip's id depends on it).
      const policies = new Map<string, { path: string; preset: string | null }>();
      for (const r of store.listBindings())
        if (r.binding.kind === 'onnx' && r.binding.family !== undefined) {
          const preset = presetIdOf(r.binding.preset);
          policies.set(`${r.binding.policyPath}\0${preset ?? ''}`, { path: r.binding.policyPath, preset });
        }
      w = policyMotionsWorkload(
        [...policies.values()].map((p) => planPolicy(p.path, profile, p.preset)),
        profile,
      );
    } else
      throw new PairClipError(
        `the clip of pair ${pair.pairId} (${pair.clipName}) comes from ${snap ? `the folder workload ${snap.id}` : 'an unknown workload'}: give the workload it was qualified on (--workload <dir>)`,
      );
  }
  const clip = w.clips.find((c) => c.id === qual.identity.clipId);
  if (!clip)
    throw new PairClipError(
      `workload ${w.snapshot.id} has no clip ${qual.identity.clipId} (${pair.clipName}) of pair ${pair.pairId}`,
    );
  if (clipContentSha256(clip) !== qual.identity.referenceSha256) {
    throw new PairClipError(
      `clip ${clip.name} (${clip.id}) differs from the one pair ${pair.pairId} was qualified with (content hash changed): qualify it again`,
    );
  }
  return { clip, workload: w };
}

export function clipForPairId(
  store: CampaignStore,
  pairId: string,
  workload?: LoadedWorkload,
): { pair: AdmittedPair; clip: MotionClip; workload: LoadedWorkload } {
  const pair = resolvePair(listAdmittedPairs(store), pairId);
  return { pair, ...pairWorkload(store, pair, store.getParentTrace(pair.pairId)!, workload) };
}
