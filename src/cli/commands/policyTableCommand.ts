import fs from 'node:fs';
import {
  formatPolicyTableMarkdown,
  formatPolicyTableText,
  type PolicyTableEntry,
} from '../../domain/metrics/policyTable';
import type { Reading } from '../../domain/metrics/readings';
import { loadRobotProfile } from '../../services/robot/loadRobotProfile';
import { runPolicyTable, type PolicyTableResult } from '../../services/policyCheck/policyTableRun';
import { checkOutputFiles, defineCommand, numberOption, workersOption } from '../cliOptions';
import { printJson, UsageError } from '../cliSupport';

const usage = `usage: motionbench policy table <folder> [--seconds N] [--workers N] [--model <mjcf>] [--md <file>] [--force] [--json]
  The open-tracker table: every policy in <folder> (each .onnx, each policy folder, each .onnx of a
  folder holding several) run in the embedded simulator, as 'motionbench sim' runs it, on the motions
  qualification pairs it with — a single-motion policy (BeyondMimic, holosoma WBT, the
  unitree_rl_lab / unitree_rl_mjlab mimic folders) on its own motion, a general tracker (wbc-mjlab)
  on its clip library — one episode per clip, from the clip's first frame placed on the floor. Per
  policy and capability group (measured from the whole motion: root travel > 1 m locomotion,
  pelvis below 0.5 m low_posture; else "own motion" for a single-motion policy, "unclassified"
  for a library clip): SR, progress-soft and MPJPE-l (cm) under mb-metrics/1, with the family
  and physics profile it ran on.
  A policy the console refuses is a row with the refusal; a velocity policy is listed as not a
  tracker; a single-motion policy whose motion is not declared is listed as such (docs/POLICIES.md).
  --seconds N      simulate at most the first N seconds of every clip (default: whole clips)
  --workers N      simulator worker threads (default: $MOTIONBENCH_SIM_WORKERS, else the cores,
                   capped by available memory at ~256 MiB per worker)
  --model <mjcf>   a scene with a floor (default: our G1 in assets/)
  --md <file>      also write the table as Markdown (refused if it exists, unless --force)
  --json           one document: folder, seconds_cap, workers, wall_seconds, and per policy its
                   status, family, adapter, physics, motions, why, groups [{group, clips,
                   success_rate, progress_soft, mpjpe_l_mm}] and episodes [{clip, clip_id, group,
                   seconds, outcome, failure, reference_lift_m, progress_soft, mpjpe_l_mm, wall_seconds}]
  Exit status 0 when the table was made (whatever the outcomes), 1 on bad input, 2 on bad usage.`;

const value = (r: Reading<number>): number | null => (r.available ? r.value : null);

function entryJson(e: PolicyTableEntry): Record<string, unknown> {
  return {
    policy: e.policy,
    status: e.status,
    family: e.family,
    adapter: e.adapter,
    physics: e.physics,
    motions: e.motions,
    why: e.why,
    wall_seconds: e.wallSeconds,
    groups: e.groups.map((g) => ({
      group: g.group,
      clips: g.clips,
      success_rate: value(g.successRate),
      progress_soft: value(g.progressSoft),
      mpjpe_l_mm: value(g.mpjpeLMm),
    })),
    episodes: e.episodes.map((ep) => ({
      clip: ep.clip,
      clip_id: ep.clipId,
      group: ep.group,
      seconds: ep.seconds,
      outcome: ep.outcome,
      failure: ep.failure,
      reference_lift_m: ep.referenceLiftM,
      progress_soft: value(ep.metrics.progressSoft),
      mpjpe_l_mm: value(ep.metrics.mpjpeLMm),
      wall_seconds: ep.wallSeconds,
    })),
  };
}

export function policyTableJson(r: PolicyTableResult): Record<string, unknown> {
  return {
    folder: r.folder,
    contract: 'mb-metrics/1',
    seconds_cap: r.secondsCap,
    workers: r.workers,
    wall_seconds: r.wallSeconds,
    policies: r.entries.map(entryJson),
  };
}

export const policyTableCommand = defineCommand({
  name: 'policy table',
  summary: 'run every policy of a folder on its own motion (or clip library): SR, progress-soft, MPJPE-l by group',
  usage,
  strings: ['seconds', 'workers', 'model', 'md'],
  flags: ['force', 'json'],
  positionals: 1,
  async run(values, io, { positionals }) {
    if (positionals.length !== 1)
      throw new UsageError(`policy table takes one folder, got ${positionals.length}\n${usage}`);
    const folder = positionals[0];
    if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory())
      throw new UsageError(`${folder}: not a folder (policy table runs every policy of a folder)`);
    const seconds = numberOption(values.seconds, 'seconds', (v) => Number.isFinite(v) && v > 0, 'a number > 0');
    const workers = workersOption(values.workers);
    checkOutputFiles([{ option: 'md', file: values.md }], [], values.force === true);
    const profile = loadRobotProfile(values.model);
    const result = await runPolicyTable({
      folder,
      profile,
      ...(seconds !== undefined ? { seconds } : {}),
      ...(workers !== undefined ? { workers } : {}),
      onProgress: (line) => io.stderr(`policy table: ${line}\n`),
    });
    if (values.md)
      fs.writeFileSync(values.md, formatPolicyTableMarkdown(result.entries), { flag: values.force ? 'w' : 'wx' });
    if (values.json) printJson(io, policyTableJson(result));
    else {
      const episodes = result.entries.reduce((n, e) => n + e.episodes.length, 0);
      io.stdout(
        `${formatPolicyTableText(result.entries)}\n${result.entries.length} policies, ${episodes} episodes${result.secondsCap !== null ? ` (first ${result.secondsCap} s of each clip)` : ' (whole clips)'} in ${result.wallSeconds.toFixed(1)} s on ${result.workers} simulator worker(s); contract mb-metrics/1\n`,
      );
    }
    return 0;
  },
});
