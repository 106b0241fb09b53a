import path from 'node:path';
import {
  customPolicy,
  formatDuration,
  MB_ADMISSION_1,
  progressLine,
  progressRates,
  summarizeNotPaired,
  type AdmissionPolicy,
} from '../../domain/qualification';
import { BUILTIN_LABEL } from '../../domain/sim/builtinBinding';
import { presetIds } from '../../domain/wbc/policyPresets';
import { bindingKey, type WbcBinding } from '../../domain/wbc/wbcBinding';
import {
  QualificationRequestError,
  runQualification,
  type QualificationProgress,
  type QualificationSummary,
} from '../../services/qualification';
import { loadRobotProfile } from '../../services/robot/loadRobotProfile';
import { otherWriterOf, TraceStoreError } from '../../services/trace';
import { BindingSpecError, resolveBindingSpec } from '../../services/sim/bindingSpec';
import { loadWorkload } from '../../services/workload';
import { ownMotionsOf, POLICIES_WORKLOAD_ID, policyMotionsWorkload } from '../../services/workload/policyWorkload';
import { isPolicySpec } from '../../services/wbc/loadPolicy';
import { planPolicy, type PolicyPlan } from '../../services/wbc/policyRun';
import { defineCommand, integerOption, numberOption, workersOption } from '../cliOptions';
import { exitNow, onSignal, printJson, processIo, UsageError, type CliIo } from '../cliSupport';

const usage = `usage: motionbench qualify [--workload <core-v1|policies|dir>] --binding <spec> [--binding <spec> …] --campaign <dir>
                           [--preset <family>/<name>] [--limit N] [--clip <name|id> …] [--workers N] [--rollouts N]
                           [--model <mjcf>] [--json]
  MotionBench qualification in the embedded MuJoCo simulator: every binding × clip of the workload
  snapshot, N seeded rollouts per pair from slightly perturbed starts, each recorded as an episode
  of the campaign (episodes/<run_id>.mcap + campaign.sqlite), and one admission decision per pair
  under policy mb-admission/1 with every reason for a rejection (docs/QUALIFICATION.md).
  Re-running on the same campaign skips pairs already decided under the same versions and resumes
  an interrupted run (Ctrl-C cancels cleanly; run the command again to finish).
  --workload core-v1|<dir>     the built-in snapshot, or a folder with a workload.json
  --workload policies          the --binding policies' own motions (baked references, a wbc-mjlab
                               clip library, a deploy folder's motion files); the default when
                               every --binding is a released policy; other bindings (builtin, a
                               binding file) take every one of those clips
  --binding <spec>             builtin (reference tracker, not a policy), builtin:assist=<N/m>, or a
                               binding file (kind builtin or onnx), or a released policy (.onnx or
                               policy folder); repeat for several bindings. A single-motion policy
                               (its family trains one motion: BeyondMimic, holosoma WBT, the
                               unitree_rl_lab / unitree_rl_mjlab mimic folders) is paired only with
                               its own motion; the other clips are listed as not paired, with why,
                               and with another --workload its own motion runs after it in the same
                               campaign (snapshot policies; JSON own_motions, the same fields)
  --preset <family>/<name>     with exactly one released-policy --binding: read that .onnx export,
                               which does not carry its own interface, under a declared preset
                               (${presetIds().join(', ')}; docs/POLICIES.md); the binding's id and
                               version record it, so its decisions never mix with another preset's
  --campaign <dir>             the campaign folder (created when missing)
  --limit N                    only the first N clips of the snapshot (after --clip)
  --clip <name|id>             only this clip; repeat for several
  --workers N                  simulator worker threads (default: $MOTIONBENCH_SIM_WORKERS, else the cores,
                               capped by available memory at ~256 MiB per worker)
  --rollouts N                 rollouts per pair (default 3; another value is policy mb-admission/1+custom-…)
  --model <mjcf>               a scene with a floor (default: our G1 in assets/)
  Progress goes to stderr: rollouts and pairs done/total, clip-seconds per second and the time
  left (a bar on a terminal; otherwise a line at most every second and one per decided pair).
  --json: one document: campaign, snapshot, policy, contract, counts, and every pair with its
    status (decided | skipped | pending), admitted and reasons.
  Exit status 0 when the run finished (whatever the decisions), 1 on bad input or a failure,
  2 on bad usage, 130 when cancelled.`;

const PROGRESS_LINE_INTERVAL_MS = 1000;

/**
 * Progress on stderr (never on stdout, which --json keeps for its document): a redrawn bar on a
 * terminal; otherwise the plan, a progress line as rollouts settle (done/total rollouts and pairs,
 * clip-seconds, clip-seconds per second, time left) and a line per decided pair.
 */
export function progressReporter(
  io: CliIo,
  tty: boolean,
): { onProgress: (p: QualificationProgress) => void; finish: () => void } {
  let last = 0;
  let drawn = false;
  let lastLine = -Infinity;
  const bar = (p: QualificationProgress) => {
    const width = 24;
    const fill = Math.max(0, Math.min(width, Math.round(progressRates(p).fraction * width)));
    return `[${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${progressLine(p)} (${p.admitted} admitted, ${p.rejected} rejected)`;
  };
  const onProgress = (p: QualificationProgress) => {
    if (tty) {
      const now = performance.now();
      if (p.kind === 'tick' && now - last < 200) return;
      last = now;
      if (p.kind === 'pair' && p.pair && p.pair.admitted === false) {
        io.stderr(`\r\x1b[2K  rejected ${p.pair.binding} × ${p.pair.clipName}: ${p.pair.reasons[0] ?? ''}\n`);
      }
      io.stderr(`\r\x1b[2K${bar(p)}`);
      drawn = true;
      return;
    }
    if (p.kind === 'plan') {
      io.stderr(
        `qualify: ${p.pairsTotal} pairs, ${p.pairsSkipped} already decided, ${p.rolloutsPlanned} rollouts to run (${p.clipSecondsPlanned.toFixed(0)} clip-seconds)\n`,
      );
    } else if (p.kind === 'rollout') {
      // At most one line a second, and always the last rollout's.
      const now = performance.now();
      if (now - lastLine < PROGRESS_LINE_INTERVAL_MS && p.rolloutsDone < p.rolloutsPlanned) return;
      lastLine = now;
      io.stderr(`qualify: ${progressLine(p)}\n`);
    } else if (p.kind === 'pair' && p.pair) {
      const what = p.pair.admitted
        ? 'admitted'
        : `rejected (${p.pair.reasons.length} reason${p.pair.reasons.length === 1 ? '' : 's'}: ${p.pair.reasons.map((r) => r.split(':')[0]).join(', ')})`;
      io.stderr(
        `qualify: ${p.pairsDone}/${p.pairsTotal} ${p.pair.binding} × ${p.pair.clipName}: ${what} — ${formatDuration(p.etaS)} left\n`,
      );
    } else if (p.kind === 'retry' && p.rollout) {
      io.stderr(`qualify: rollout ${p.rollout.index} ended infrastructure_error (${p.rollout.reason}); retrying\n`);
    }
  };
  return { onProgress, finish: () => drawn && io.stderr('\n') };
}

export function summaryJson(s: QualificationSummary, bindings: readonly WbcBinding[]): Record<string, unknown> {
  return {
    campaign: { dir: s.campaignDir, id: s.campaignId },
    snapshot: s.snapshot,
    policy: s.policy,
    contract: s.contract,
    rollout_protocol: s.protocol,
    bindings: bindings.map((b) => ({
      key: bindingKey(b),
      id: b.id,
      version: b.version,
      kind: b.kind,
      label: b.label,
      note: b.kind === 'builtin' ? BUILTIN_LABEL : null,
    })),
    pairs_total: s.pairsTotal,
    pairs_skipped: s.pairsSkipped,
    pairs_decided: s.pairsDecided,
    pairs_pending: s.pairsPending,
    admitted: s.admitted,
    rejected: s.rejected,
    episodes_recorded: s.episodesRecorded,
    infrastructure_retries: s.infrastructureRetries,
    recovered_episodes: s.recoveredEpisodes,
    writer_lock_taken_over: s.writerLockTakenOver,
    sim_seconds: s.simSeconds,
    wall_seconds: s.wallSeconds,
    clip_seconds_per_wall_second: s.wallSeconds > 0 ? s.simSeconds / s.wallSeconds : null,
    cancelled: s.cancelled,
    pairs: s.pairs.map((p) => ({
      binding: p.binding,
      clip: p.clipName,
      clip_id: p.clipId,
      group: p.group,
      parent_trace_id: p.parentTraceId,
      status: p.status,
      admitted: p.admitted,
      reasons: p.reasons,
    })),
    not_paired: s.notPaired.map((p) => ({ binding: p.binding, clip: p.clipName, clip_id: p.clipId, why: p.why })),
  };
}

export const qualifyCommand = defineCommand({
  name: 'qualify',
  summary: 'qualify WBC bindings on a workload snapshot in simulation (admission with reasons)',
  usage,
  strings: ['workload', 'campaign', 'limit', 'workers', 'rollouts', 'model', 'preset'],
  flags: ['json'],
  lists: ['binding', 'clip'],
  async run(values, io) {
    if (!values.binding || values.binding.length === 0) throw new UsageError(`--binding is required\n${usage}`);
    if (values.preset !== undefined && values.binding.filter(isPolicySpec).length !== 1)
      throw new UsageError(
        `--preset names the interface of one released policy: give exactly one policy --binding with it (got ${values.binding.filter(isPolicySpec).length})\n${usage}`,
      );
    if (values.campaign === undefined || values.campaign === '')
      throw new UsageError(`--campaign is required\n${usage}`);
    const limit = numberOption(values.limit, 'limit', (v) => Number.isInteger(v) && v >= 1, 'an integer ≥ 1');
    const workers = workersOption(values.workers);
    const rollouts = integerOption(values.rollouts, 'rollouts', 1, 100);
    const policy: AdmissionPolicy =
      rollouts === undefined || rollouts === MB_ADMISSION_1.parameters.rollouts
        ? MB_ADMISSION_1
        : customPolicy({ rollouts });
    // A campaign another process is writing is refused before the model, the policies and the
    // workload are loaded (openCampaign makes the binding check when the run opens it).
    const campaignAbs = path.resolve(values.campaign);
    const otherWriter = otherWriterOf(campaignAbs);
    if (otherWriter) throw new TraceStoreError('busy', campaignAbs, otherWriter);
    const profile = loadRobotProfile(values.model);
    const bindings: WbcBinding[] = [];
    const plans: PolicyPlan[] = [];
    for (const spec of values.binding) {
      try {
        if (isPolicySpec(spec)) {
          const plan = planPolicy(spec, profile, values.preset ?? null);
          plans.push(plan);
          bindings.push(plan.binding);
        } else bindings.push(await resolveBindingSpec(spec, profile));
      } catch (err) {
        if (err instanceof BindingSpecError) throw new UsageError(err.message);
        throw err;
      }
    }
    const workloadSpec = values.workload ?? (plans.length === bindings.length ? POLICIES_WORKLOAD_ID : undefined);
    if (workloadSpec === undefined)
      throw new UsageError(
        `--workload is required (it may be omitted only when every --binding is a released policy: then it is "${POLICIES_WORKLOAD_ID}")\n${usage}`,
      );
    // The policies' own motions come from the released policies among the bindings; every other
    // binding (the builtin tracker, a binding file) takes every one of those clips, as on core-v1.
    if (workloadSpec === POLICIES_WORKLOAD_ID && plans.length === 0)
      throw new UsageError(
        `--workload ${POLICIES_WORKLOAD_ID} is made of the --binding policies' own motions; give at least one released policy`,
      );
    const keys = bindings.map(bindingKey);
    const dup = keys.find((k, i) => keys.indexOf(k) !== i);
    if (dup) throw new UsageError(`--binding: ${dup} is given twice`);
    const workload =
      workloadSpec === POLICIES_WORKLOAD_ID
        ? policyMotionsWorkload(plans, profile)
        : loadWorkload(workloadSpec, { profile });
    const controller = new AbortController();
    let interrupts = 0;
    const onSigint = () => {
      interrupts++;
      if (interrupts === 1) {
        io.stderr(
          '\nqualify: cancelling — the running rollouts finish, then the run stops; decisions are kept and the rest runs next time (Ctrl-C again to quit at once)\n',
        );
        controller.abort();
      } else exitNow(io, 130);
    };
    const offSigint = onSignal(io, 'SIGINT', onSigint);
    const tty = io === processIo && !!process.stderr.isTTY;
    const progress = progressReporter(io, tty);
    io.stderr(
      `qualify: ${workload.snapshot.id}@${workload.snapshot.version} (${workload.snapshot.clips.length} clips) × ${bindings.map((b) => `${bindingKey(b)}${b.kind === 'builtin' ? ` [${BUILTIN_LABEL}]` : ''}`).join(', ')} under ${policy.id}/${policy.version}, ${policy.parameters.rollouts} rollouts per pair → ${values.campaign}\n`,
    );
    const ownMotions = ownMotionsOf(plans, profile);
    // A single-motion policy asked onto another workload runs on its own motion too, in the same
    // campaign under the `policies` snapshot (its pairs there), after the requested workload.
    const inWorkload = new Set(workload.clips.map((c) => c.id));
    const ownPlans =
      workloadSpec === POLICIES_WORKLOAD_ID
        ? []
        : plans.filter((p) => ownMotions.get(bindingKey(p.binding))?.clipIds.some((id) => !inWorkload.has(id)));
    let summary: QualificationSummary;
    let ownSummary: QualificationSummary | null = null;
    try {
      summary = await runQualification({
        campaignDir: values.campaign,
        workload,
        bindings,
        profile,
        policy,
        ...(workers !== undefined ? { workers } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(values.clip && values.clip.length > 0 ? { clips: values.clip } : {}),
        signal: controller.signal,
        onProgress: progress.onProgress,
        onNotice: (line) => io.stderr(`qualify: ${line}\n`),
        ownMotions,
      });
      if (ownPlans.length > 0 && !controller.signal.aborted) {
        const own = policyMotionsWorkload(ownPlans, profile);
        io.stderr(
          `qualify: the single-motion policies on their own motions: ${own.snapshot.id}@${own.snapshot.version} (${own.snapshot.clips.length} clips) × ${ownPlans.map((p) => bindingKey(p.binding)).join(', ')}\n`,
        );
        ownSummary = await runQualification({
          campaignDir: values.campaign,
          workload: own,
          bindings: ownPlans.map((p) => p.binding),
          profile,
          policy,
          ...(workers !== undefined ? { workers } : {}),
          signal: controller.signal,
          onProgress: progress.onProgress,
          onNotice: (line) => io.stderr(`qualify: ${line}\n`),
          ownMotions,
        });
      }
    } catch (err) {
      if (err instanceof QualificationRequestError) throw new UsageError(err.message);
      throw err;
    } finally {
      progress.finish();
      offSigint();
    }
    const cancelled = summary.cancelled || (ownSummary?.cancelled ?? false);
    if (values.json)
      printJson(io, {
        ...summaryJson(summary, bindings),
        own_motions: ownSummary
          ? summaryJson(
              ownSummary,
              ownPlans.map((p) => p.binding),
            )
          : null,
      });
    else {
      const lines = [...summaryLines(summary)];
      if (ownSummary)
        lines.push('own motions of the single-motion policies:', ...summaryLines(ownSummary).map((l) => `  ${l}`));
      io.stdout(`${lines.join('\n')}\n`);
    }
    return cancelled ? 130 : 0;
  },
});

/** The text summary of one run. */
function summaryLines(summary: QualificationSummary): string[] {
  const rate = summary.wallSeconds > 0 ? summary.simSeconds / summary.wallSeconds : 0;
  return [
    `${summary.cancelled ? 'cancelled' : 'qualified'}: ${summary.pairsTotal} pairs — ${summary.admitted} admitted, ${summary.rejected} rejected${summary.pairsPending ? `, ${summary.pairsPending} pending` : ''} (${summary.pairsSkipped} already decided, skipped)`,
    `  policy ${summary.policy.key}, contract ${summary.contract}, snapshot ${summary.snapshot.id}@${summary.snapshot.version} (${summary.snapshot.hash.slice(0, 16)}…)`,
    `  ${summary.episodesRecorded} episodes recorded, ${summary.simSeconds.toFixed(1)} clip-seconds in ${summary.wallSeconds.toFixed(1)} s (${rate.toFixed(1)} clip-s per wall-s)${summary.infrastructureRetries ? `, ${summary.infrastructureRetries} infrastructure retries` : ''}${summary.recoveredEpisodes ? `, ${summary.recoveredEpisodes} interrupted episode(s) recovered` : ''}`,
    `  campaign ${summary.campaignDir} — see 'motionbench report --campaign ${summary.campaignDir}'`,
    ...summarizeNotPaired(summary.notPaired).map((l) => `  ${l}`),
  ];
}
