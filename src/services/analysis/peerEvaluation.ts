import { MB_METRICS_1 } from '../../domain/metrics/metricContract';
import {
  HOLOMOTION_EVAL_ID,
  holomotionAggregate,
  holomotionEpisode,
  SONIC_EVAL_ID,
  sonicAggregate,
  sonicEpisode,
  type PeerEpisodeFrames,
} from '../../domain/metrics/peerContracts';
import type { TimedFrames } from '../../domain/motion/resample';
import { commonTimelineFrameCount, resampleFrames } from '../../domain/motion/resample';
import { ForwardKinematics } from '../../domain/robot/forwardKinematics';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { toContractTimeline } from '../episode/contractTimeline';
import type { EpisodeFile } from '../episode/episodeReader';
import { readEpisodeFile } from '../episode/episodeReader';
import type { ExecutedMessage } from '../episode/episodeSchemas';
import type { CampaignStore } from '../trace';

// The peers' metric contracts (sonic-eval/1, holomotion-eval/1) computed from the frames an
// episode recorded — the same frames mb-metrics/1 was computed from: the episode's /reference
// (on the 50 Hz contract timeline) and its /executed/state brought onto that timeline the way
// the gap review does (toContractTimeline), bodies by forward kinematics on the robot model.
// Both peers score world-frame body positions, so an episode without a measured root (a robot
// without motion capture) is not scored; the reason is returned, never a number.

export const PEER_CONTRACT_IDS = [SONIC_EVAL_ID, HOLOMOTION_EVAL_ID] as const;
export type PeerContractId = (typeof PEER_CONTRACT_IDS)[number];

export function isPeerContractId(s: string): s is PeerContractId {
  return (PEER_CONTRACT_IDS as readonly string[]).includes(s);
}

export type PeerEpisodeOutcome =
  { available: true; frames: number; success: boolean; result: object } | { available: false; reason: string };

/** FK of both trajectories on K common frames: positions and orientations of every body. */
export function peerFrames(profile: RobotProfile, ref: TimedFrames, exec: TimedFrames): PeerEpisodeFrames {
  const rate = MB_METRICS_1.rateHz;
  const K = commonTimelineFrameCount(rate, ref, exec);
  const R = resampleFrames(ref, rate, K);
  const E = resampleFrames(exec, rate, K);
  const fk = new ForwardKinematics(profile);
  const B = fk.bodyCount;
  const J = fk.jointCount;
  const fill = (f: typeof R) => {
    const pos = new Float64Array(K * B * 3);
    const quat = new Float64Array(K * B * 4);
    const p = new Float64Array(3 * B);
    const q = new Float64Array(4 * B);
    for (let k = 0; k < K; k++) {
      fk.compute(f.rootPosM, f.rootQuatWxyz, f.jointPosRad, p, q, 3 * k, 4 * k, J * k);
      pos.set(p, k * B * 3);
      quat.set(q, k * B * 4);
    }
    return { pos, quat };
  };
  const r = fill(R);
  const e = fill(E);
  return {
    K,
    bodyNames: profile.bodies.map((b) => b.name),
    rootBodyIndex: profile.rootBodyIndex,
    refBodyPosM: r.pos,
    execBodyPosM: e.pos,
    refBodyQuatWxyz: r.quat,
    execBodyQuatWxyz: e.quat,
    refJointPosRad: R.jointPosRad.slice(0, K * J),
    execJointPosRad: E.jointPosRad.slice(0, K * J),
  };
}

/** The episode's reference and executed trajectory as the peers score them, or why not. */
export function episodeTrajectories(
  ep: EpisodeFile,
  profile: RobotProfile,
): { ref: TimedFrames; exec: TimedFrames } | { reason: string } {
  const J = profile.joints.length;
  if (ep.reference.length < 2) return { reason: 'the episode recorded no reference (/reference)' };
  if (ep.executed.length < 2) return { reason: 'the episode recorded fewer than 2 executed frames' };
  const tl = toContractTimeline(ep.executed as readonly ExecutedMessage[], MB_METRICS_1.rateHz, J);
  if (tl.rootPosM === null || tl.rootQuatWxyz === null)
    return {
      reason:
        'the executed trajectory has no measured root pose (no motion capture): both peers score world-frame body positions',
    };
  const rate = MB_METRICS_1.rateHz;
  return {
    ref: {
      fps: rate,
      frameCount: ep.reference.length,
      rootPosM: Float64Array.from(ep.reference.flatMap((m) => m.rootPosM)),
      rootQuatWxyz: Float64Array.from(ep.reference.flatMap((m) => m.rootQuatWxyz)),
      jointPosRad: Float64Array.from(ep.reference.flatMap((m) => m.jointPosRad)),
    },
    exec: {
      fps: rate,
      frameCount: tl.frames,
      rootPosM: Float64Array.from(tl.rootPosM),
      rootQuatWxyz: Float64Array.from(tl.rootQuatWxyz),
      jointPosRad: Float64Array.from(tl.jointPosRad),
    },
  };
}

/** One episode's readings under a peer contract. */
export function evaluatePeer(contract: PeerContractId, frames: PeerEpisodeFrames): PeerEpisodeOutcome {
  if (frames.K < 3) return { available: false, reason: `only ${frames.K} common frames (the peers need at least 3)` };
  const r = contract === SONIC_EVAL_ID ? sonicEpisode(frames) : holomotionEpisode(frames);
  return { available: true, frames: r.frames, success: r.success, result: r };
}

export interface PeerCampaignRow {
  runId: string;
  bindingId: string;
  bindingVersion: string;
  clipId: string;
  domain: string;
  outcome: PeerEpisodeOutcome;
  /** Already stored before this call. */
  stored: boolean;
}

/**
 * Scores every finished episode of the campaign under `contract` and stores each result beside
 * its mb-metrics/1 row (putPeerMetrics); episodes already scored are read back, not recomputed.
 */
export async function evaluateCampaignPeers(
  store: CampaignStore,
  contract: PeerContractId,
  profile: RobotProfile,
  progress: (done: number, total: number, runId: string) => void = () => {},
): Promise<PeerCampaignRow[]> {
  const rows = store.episodeResults({ status: 'finished' });
  const have = store.peerMetrics(contract);
  const out: PeerCampaignRow[] = [];
  for (const [i, r] of rows.entries()) {
    progress(i, rows.length, r.runId);
    const base = {
      runId: r.runId,
      bindingId: r.bindingId,
      bindingVersion: r.bindingVersion,
      clipId: r.clipId,
      domain: r.executionDomain,
    };
    const stored = have.get(r.runId) as { success: boolean; frames: number } | undefined;
    if (stored) {
      out.push({
        ...base,
        outcome: { available: true, frames: stored.frames, success: stored.success, result: stored },
        stored: true,
      });
      continue;
    }
    let ep: EpisodeFile;
    try {
      ep = await readEpisodeFile(store.episodeFile(r.runId));
    } catch (e) {
      out.push({
        ...base,
        outcome: { available: false, reason: `episode file unreadable (${(e as Error).message})` },
        stored: false,
      });
      continue;
    }
    const t = episodeTrajectories(ep, profile);
    const outcome: PeerEpisodeOutcome =
      'reason' in t
        ? { available: false, reason: t.reason }
        : evaluatePeer(contract, peerFrames(profile, t.ref, t.exec));
    if (outcome.available) store.putPeerMetrics(r.runId, contract, outcome.frames, outcome.success, outcome.result);
    out.push({ ...base, outcome, stored: false });
  }
  progress(rows.length, rows.length, '');
  return out;
}

/** The stored results only (nothing is computed): what a read-only report shows. */
export function storedPeerRows(store: CampaignStore, contract: PeerContractId): PeerCampaignRow[] {
  const have = store.peerMetrics(contract);
  return store.episodeResults({ status: 'finished' }).map((r) => {
    const stored = have.get(r.runId) as { success: boolean; frames: number } | undefined;
    return {
      runId: r.runId,
      bindingId: r.bindingId,
      bindingVersion: r.bindingVersion,
      clipId: r.clipId,
      domain: r.executionDomain,
      outcome: stored
        ? { available: true, frames: stored.frames, success: stored.success, result: stored }
        : {
            available: false,
            reason: `not scored under ${contract} yet (motionbench metrics --campaign <dir> --contract ${contract.split('/')[0]})`,
          },
      stored: stored !== undefined,
    };
  });
}

export interface PeerGroupSummary {
  bindingId: string;
  bindingVersion: string;
  domain: string;
  /** Episodes scored, and those that could not be (with the first reason). */
  episodes: number;
  unscored: number;
  unscoredReason: string | null;
  aggregate: object | null;
}

/** Per binding × execution domain, the peer's own aggregate over the scored episodes. */
export function summarizePeerRows(contract: PeerContractId, rows: readonly PeerCampaignRow[]): PeerGroupSummary[] {
  const groups = new Map<string, PeerCampaignRow[]>();
  for (const r of rows) {
    const k = `${r.bindingId}\0${r.bindingVersion}\0${r.domain}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  return [...groups.values()].map((g) => {
    const scored = g.filter((r) => r.outcome.available);
    const results = scored.map((r) => (r.outcome as { result: object }).result);
    const first = g.find((r) => !r.outcome.available);
    return {
      bindingId: g[0].bindingId,
      bindingVersion: g[0].bindingVersion,
      domain: g[0].domain,
      episodes: scored.length,
      unscored: g.length - scored.length,
      unscoredReason: first && !first.outcome.available ? first.outcome.reason : null,
      aggregate:
        results.length === 0
          ? null
          : contract === SONIC_EVAL_ID
            ? sonicAggregate(results as Parameters<typeof sonicAggregate>[0])
            : holomotionAggregate(results as Parameters<typeof holomotionAggregate>[0]),
    };
  });
}
