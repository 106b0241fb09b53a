// Runs every policy of a folder for the open-tracker table (src/domain/metrics/policyTable.ts):
// the folder's entries are found (an .onnx file; a policy folder; a folder of several .onnx
// exports, each one a policy), each is read as `sim` reads it (planPolicy: its family, adapter,
// physics profile and a trial inference), its motions are the ones qualification pairs it with
// (policyMotions: the motion baked into it, named by its configuration or shipped in its folder
// for a single-motion family; the clip library of a general tracker), and one simulated episode
// per clip runs from the clip's first frame placed on the floor, as `motionbench sim` runs it.
// A policy the console refuses is a row with the loader's reason; a unitree_rl_lab velocity
// policy (the console reads it as the standing controller) is listed as not a tracker.

import fs from 'node:fs';
import path from 'node:path';
import { describeFailure } from '../sim/simEngine';
import {
  groupRows,
  type PolicyTableEntry,
  type PolicyTableEpisode,
  type PolicyTableGroup,
  type PolicyTableStatus,
} from '../../domain/metrics/policyTable';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { clipHead } from '../../domain/sim/clipWindow';
import { EmbeddedSimulator } from '../sim/embeddedSimulator';
import { runSimEpisode } from '../sim/runSimEpisode';
import { measurableGroup, policyMotions } from '../workload/policyWorkload';
import { planPolicy, type PolicyPlan } from '../wbc/policyRun';
import { VELOCITY_POLICY_ADAPTER } from '../../domain/wbc/velocityPolicy';
import { loadStandingPolicy } from '../wbc/standingPolicy';

/**
 * The policies in `folder`, as paths: every .onnx file directly in it; every sub-folder that
 * holds at most one .onnx directly (a policy folder: deploy layout, wbc-mjlab, a single export);
 * every .onnx of a sub-folder that holds several (a collection of exports, e.g. BeyondMimic's).
 * Sorted by name; other files are not policies.
 */
export function policiesInFolder(folder: string): string[] {
  const out: string[] = [];
  const entries = fs.readdirSync(folder, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    const full = path.join(folder, e.name);
    const isDir = e.isDirectory() || (e.isSymbolicLink() && fs.statSync(full).isDirectory());
    if (!isDir) {
      if (/\.onnx$/i.test(e.name)) out.push(full);
      continue;
    }
    const onnx = fs
      .readdirSync(full)
      .filter((f) => /\.onnx$/i.test(f))
      .sort();
    if (onnx.length >= 2) out.push(...onnx.map((f) => path.join(full, f)));
    else out.push(full);
  }
  return out;
}

export interface PolicyTableOptions {
  folder: string;
  profile: RobotProfile;
  /** Simulate at most the first N seconds of every clip (default: whole clips). */
  seconds?: number;
  /** Simulator workers (default: the simulator's default). */
  workers?: number;
  /** One line per finished episode or policy not run. */
  onProgress?: (line: string) => void;
}

export interface PolicyTableResult {
  folder: string;
  entries: PolicyTableEntry[];
  wallSeconds: number;
  secondsCap: number | null;
  workers: number;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function notRun(
  policy: string,
  status: Exclude<PolicyTableStatus, 'run'>,
  why: string,
  plan: PolicyPlan | null,
): PolicyTableEntry {
  const s = plan?.loaded.spec;
  return {
    policy,
    status,
    family: s?.family ?? null,
    adapter: s?.adapter ?? null,
    physics: s?.physics.id ?? null,
    motions: s ? (s.motionScope === 'own' ? 'own motion' : 'clip library') : null,
    why,
    episodes: [],
    groups: [],
    wallSeconds: 0,
  };
}

/** Reads one policy of the folder; returns its plan and clips, or the row saying why it is not run. */
function readPolicy(
  file: string,
  name: string,
  profile: RobotProfile,
): { plan: PolicyPlan; clips: MotionClip[] } | PolicyTableEntry {
  let plan: PolicyPlan;
  try {
    plan = planPolicy(file, profile);
  } catch (err) {
    // A velocity policy is read by its own adapter (the standing controller), not as a tracker.
    try {
      const v = loadStandingPolicy(file);
      return {
        ...notRun(
          name,
          'not_a_tracker',
          `a velocity (locomotion) policy read by ${VELOCITY_POLICY_ADAPTER} (the standing controller): it follows a velocity command and tracks no motion`,
          null,
        ),
        family: v.identity.id.split('/')[0],
        adapter: VELOCITY_POLICY_ADAPTER,
      };
    } catch {
      return notRun(name, 'refused', message(err), null);
    }
  }
  let clips: MotionClip[];
  try {
    clips = policyMotions(plan, profile).clips;
  } catch (err) {
    return notRun(name, 'no_motion', message(err), plan);
  }
  if (clips.length === 0) {
    const s = plan.loaded.spec;
    const note = s.notes.find((n) => /motion/i.test(n));
    return notRun(
      name,
      'no_motion',
      `no motion is declared for it: none is baked in and no configuration beside it names one with its frame rate${note ? ` (${note})` : ''}`,
      plan,
    );
  }
  return { plan, clips };
}

export async function runPolicyTable(o: PolicyTableOptions): Promise<PolicyTableResult> {
  const t0 = performance.now();
  const entries: PolicyTableEntry[] = [];
  const jobs: { entry: PolicyTableEntry; plan: PolicyPlan; clip: MotionClip; group: PolicyTableGroup }[] = [];
  for (const file of policiesInFolder(o.folder)) {
    const name = path.relative(o.folder, file) || path.basename(file);
    const read = readPolicy(file, name, o.profile);
    if (!('plan' in read)) {
      entries.push(read);
      o.onProgress?.(`${name}: ${read.status.replace(/_/g, ' ')} — ${read.why}`);
      continue;
    }
    const { plan, clips } = read;
    const s = plan.loaded.spec;
    const entry: PolicyTableEntry = {
      policy: name,
      status: 'run',
      family: s.family,
      adapter: s.adapter,
      physics: s.physics.id,
      motions: s.motionScope === 'own' ? 'own motion' : 'clip library',
      why: null,
      episodes: [],
      groups: [],
      wallSeconds: 0,
    };
    entries.push(entry);
    for (const full of clips) {
      // The group is measured on the whole motion (a --seconds window is not the motion).
      const group = measurableGroup(full) ?? (s.motionScope === 'own' ? 'own motion' : 'unclassified');
      const clip = o.seconds !== undefined ? clipHead(full, o.seconds) : full;
      jobs.push({ entry, plan, clip, group });
    }
  }
  const sim = new EmbeddedSimulator({
    modelFile: o.profile.sourceFile,
    ...(o.workers !== undefined ? { workers: o.workers } : {}),
  });
  let failure: unknown = null;
  try {
    await sim.ready();
    const order = [...jobs];
    const worker = async () => {
      while (order.length > 0 && failure === null) {
        const { entry, plan, clip, group } = order.shift()!;
        try {
          const r = await runSimEpisode(sim, { clip, binding: plan.binding, profile: o.profile, keepFrames: false });
          const ep: PolicyTableEpisode = {
            clip: clip.name,
            clipId: clip.id,
            group,
            seconds: (clip.frameCount - 1) / clip.fps,
            outcome: r.end.outcome,
            failure: r.end.failure
              ? `${describeFailure(r.end.failure)} at t = ${r.end.failure.timeS.toFixed(2)} s`
              : r.end.outcome === 'completed' || r.end.outcome === 'hard_failure'
                ? null
                : r.end.reason,
            referenceLiftM: r.end.referenceLiftM,
            metrics: r.metrics,
            wallSeconds: r.end.wallSeconds,
          };
          entry.episodes.push(ep);
          entry.wallSeconds += r.end.wallSeconds;
          o.onProgress?.(
            `${entry.policy} × ${clip.name}: ${r.end.outcome}${ep.failure ? ` (${ep.failure})` : ''}, ${r.end.simSeconds.toFixed(1)} s in ${r.end.wallSeconds.toFixed(1)} s`,
          );
        } catch (err) {
          failure ??= err;
        }
      }
    };
    await Promise.all(Array.from({ length: sim.workerCount }, () => worker()));
  } finally {
    await sim.close();
  }
  if (failure !== null) throw failure;
  for (const e of entries) {
    // Episodes in clip order (workers finish out of order).
    const rank = new Map(jobs.filter((j) => j.entry === e).map((j, i) => [j.clip.id, i]));
    e.episodes.sort((a, b) => (rank.get(a.clipId) ?? 0) - (rank.get(b.clipId) ?? 0));
    e.groups = groupRows(e.episodes);
  }
  return {
    folder: o.folder,
    entries,
    wallSeconds: (performance.now() - t0) / 1000,
    secondsCap: o.seconds ?? null,
    workers: sim.workerCount,
  };
}
