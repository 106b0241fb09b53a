import { ClipPairEvaluator } from '../../domain/metrics/clipPairMetrics';
import { MB_METRICS_1 } from '../../domain/metrics/metricContract';
import {
  episodeMetricsJson,
  FULL_STATE,
  NO_MOTION_CAPTURE,
  NUMERIC_READINGS,
  READING_INFO,
  type EpisodeMetrics,
  type Reading,
} from '../../domain/metrics/readings';
import type { MotionClip } from '../../domain/motion/motionClip';
import { InputError } from '../../domain/problems';
import { placedClip } from '../../domain/sim/referencePlacement';
import { HOLOMOTION_EVAL_ID, SONIC_EVAL_ID } from '../../domain/metrics/peerContracts';
import {
  evaluateCampaignPeers,
  evaluatePeer,
  peerFrames,
  PEER_CONTRACT_IDS,
  type PeerContractId,
} from '../../services/analysis/peerEvaluation';
import { loadClipFile } from '../../services/motion/loadClipFile';
import { comparisonJson, comparisonMarkdown, contractComparison } from '../../services/analysis/contractComparison';
import { openCampaign } from '../../services/trace';
import { loadRobotProfile } from '../../services/robot/loadRobotProfile';
import { defineCommand, fpsOption, numberOption } from '../cliOptions';
import { printJson, UsageError } from '../cliSupport';

const usage = `usage: motionbench metrics --ref <file> --exec <file> [--contract <id>] [--model <mjcf>] [--fps N]
                           [--exec-fps N] [--exec-no-global-root] [--reference-lift M] [--json]
       motionbench metrics --campaign <dir> --contract sonic-eval|holomotion-eval|all [--model <mjcf>] [--json]
  Readings of a metric contract (docs/METRICS.md) for an executed motion against its reference:
  mb-metrics/1 (the default), or a peer's declared contract: sonic-eval (SONIC's use of SMPLSim
  compute_metrics_lite) or holomotion-eval (HoloMotion's metrics.py); all = the three.
  With --campaign: scores every finished episode of the campaign under the peer contract(s) from
  the frames it recorded, stores each result beside its mb-metrics/1 row (an episode scored before
  is read back), and prints the three contracts side by side per binding and domain; progress on
  stderr. Both are resampled to 50 Hz on the common timeline (K frames over the shorter
  duration); body positions come from forward kinematics on --model (default: our G1 in assets/).
  --fps N              frame rate of the reference (CSV files do not state one)
  --exec-fps N         frame rate of the executed motion
  --exec-no-global-root  the executed motion has no global root position or heading (a robot
                       without motion capture): readings that need them are reported unavailable
  --reference-lift M   judge against the reference as placed for a simulated run: its root raised
                       by M metres every frame (the run's reference_lift_m; docs/METRICS.md)
  --json fields: contract, K, failed, failure {frame, condition, body} (null if none),
    progress_soft, mpjpe_l_mm, joint_pos_rmse (rad), joint_vel_rmse (rad/s), joint_acc_rms,
    joint_acc_p95 (rad/s²), joint_jerk_rms, joint_jerk_p95 (rad/s³); a reading that cannot be
    computed is null, with its reason under "unavailable".`;

/** --contract: mb-metrics/1 (default), sonic-eval, holomotion-eval (with or without /1), or all. */
function contractsOption(v: string | undefined): string[] {
  if (v === undefined) return [MB_METRICS_1.id];
  if (v === 'all') return [MB_METRICS_1.id, ...PEER_CONTRACT_IDS];
  const id = v === 'sonic-eval' ? SONIC_EVAL_ID : v === 'holomotion-eval' ? HOLOMOTION_EVAL_ID : v;
  if (id !== MB_METRICS_1.id && !(PEER_CONTRACT_IDS as readonly string[]).includes(id))
    throw new UsageError(`--contract must be mb-metrics/1, sonic-eval, holomotion-eval or all, got "${v}"`);
  return [id];
}

/** Reloads with the executed file's option name in the reason (the loaders speak of --fps). */
function loadExec(file: string, fps: number | undefined, limits: Parameters<typeof loadClipFile>[1]): MotionClip {
  try {
    return loadClipFile(file, { ...limits, ...(fps !== undefined ? { fps } : {}) });
  } catch (err) {
    if (err instanceof InputError) throw new InputError(err.location, err.reason.replace(/--fps\b/g, '--exec-fps'));
    throw err;
  }
}

export const metricsCommand = defineCommand({
  name: 'metrics',
  summary: 'tracking readings (mb-metrics/1) of an executed motion against its reference',
  usage,
  strings: ['ref', 'exec', 'model', 'fps', 'exec-fps', 'reference-lift', 'contract', 'campaign'],
  flags: ['exec-no-global-root', 'json'],
  async run(values, io) {
    const contracts = contractsOption(values.contract);
    if (values.campaign !== undefined) {
      if (values.ref !== undefined || values.exec !== undefined)
        throw new UsageError(`--campaign and --ref/--exec are two modes; give one\n${usage}`);
      const peers = contracts.filter((c): c is PeerContractId => c !== MB_METRICS_1.id);
      if (peers.length === 0)
        throw new UsageError(
          `--campaign needs --contract sonic-eval, holomotion-eval or all (mb-metrics/1 is stored when an episode ends)\n${usage}`,
        );
      const profile = loadRobotProfile(values.model);
      const store = await openCampaign(values.campaign);
      try {
        for (const c of peers) {
          const rows = await evaluateCampaignPeers(store, c, profile, (done, total) => {
            if (done === total || done % 10 === 0) io.stderr(`motionbench: ${c}: ${done}/${total} episodes\n`);
          });
          const fresh = rows.filter((r) => r.outcome.available && !r.stored).length;
          const skipped = rows.filter((r) => !r.outcome.available);
          io.stderr(
            `motionbench: ${c}: ${fresh} scored now, ${rows.length - fresh - skipped.length} scored before, ${skipped.length} not scored${skipped.length && !skipped[0].outcome.available ? ` (${skipped[0].runId}: ${skipped[0].outcome.reason})` : ''}\n`,
          );
        }
        const cmp = contractComparison(store, peers);
        if (values.json) printJson(io, comparisonJson(cmp));
        else io.stdout(comparisonMarkdown(cmp));
      } finally {
        store.close();
      }
      return 0;
    }
    if (values.ref === undefined) throw new UsageError(`--ref is required\n${usage}`);
    if (values.exec === undefined) throw new UsageError(`--exec is required\n${usage}`);
    const fps = fpsOption(values.fps);
    const execFps = fpsOption(values['exec-fps'], 'exec-fps');
    const profile = loadRobotProfile(values.model);
    const evaluator = new ClipPairEvaluator(MB_METRICS_1, profile);
    const limits = { jointLimitsRad: profile.joints.map((j) => j.rangeRad) };
    const lift = numberOption(values['reference-lift'], 'reference-lift', (v) => Number.isFinite(v), 'a finite number');
    const ref = placedClip(loadClipFile(values.ref, { ...limits, ...(fps !== undefined ? { fps } : {}) }), lift ?? 0);
    const exec = loadExec(values.exec, execFps, limits);
    for (const [what, clip] of [
      ['reference', ref],
      ['executed', exec],
    ] as const) {
      for (const w of clip.warnings) {
        if (w.code === 'joint_limit') continue;
        const message = what === 'executed' ? w.message.replace(/--fps\b/g, '--exec-fps') : w.message;
        io.stderr(`motionbench: ${what} ${clip.provenance.file}: ${message}\n`);
      }
    }
    const capabilities = values['exec-no-global-root'] ? NO_MOTION_CAPTURE : FULL_STATE;
    const { metrics } = evaluator.evaluate(ref, exec, capabilities);
    const peers = contracts.filter((c): c is PeerContractId => c !== MB_METRICS_1.id);
    const peerResults = peers.map((c) => {
      if (values['exec-no-global-root'])
        return {
          contract: c,
          unavailable: 'both peers score world-frame body positions; --exec-no-global-root has none',
        };
      const o = evaluatePeer(c, peerFrames(profile, ref, exec));
      return o.available ? { ...o.result, contract: c } : { contract: c, unavailable: o.reason };
    });
    const withMb = contracts.includes(MB_METRICS_1.id);
    if (values.json) {
      if (peers.length === 0) printJson(io, episodeMetricsJson(metrics));
      else
        printJson(io, {
          ...(withMb ? { [MB_METRICS_1.id]: episodeMetricsJson(metrics) } : {}),
          ...Object.fromEntries(peerResults.map((r) => [r.contract, r])),
        });
    } else {
      if (withMb) io.stdout(humanReport(metrics, ref, exec, profile.modelName));
      for (const r of peerResults) io.stdout(`${r.contract}: ${JSON.stringify(r, null, 2)}\n`);
    }
    return 0;
  },
});

function fmt(r: Reading<number>, digits: number, unit: string, scale = 1): string {
  return r.available ? `${(r.value * scale).toFixed(digits)} ${unit}`.trimEnd() : `unavailable: ${r.reason}`;
}

function humanReport(m: EpisodeMetrics, ref: MotionClip, exec: MotionClip, model: string): string {
  const rate = MB_METRICS_1.rateHz;
  const lines = [
    `metrics under ${m.contract}: K = ${m.K} frames at ${rate} Hz (${((m.K - 1) / rate).toFixed(2)} s), model ${model}`,
    `  reference  ${ref.provenance.file} (${ref.frameCount} frames at ${ref.fps} fps, ${((ref.frameCount - 1) / ref.fps).toFixed(2)} s)`,
    `  executed   ${exec.provenance.file} (${exec.frameCount} frames at ${exec.fps} fps, ${((exec.frameCount - 1) / exec.fps).toFixed(2)} s)`,
  ];
  const f = m.failure;
  let failure: string;
  if (!f.available) failure = `unavailable: ${f.reason}`;
  else if (f.value === null) failure = 'none';
  else {
    const v = f.value;
    const unit = v.condition === 'root_orientation' ? 'rad' : 'm';
    failure = `FAILED at frame ${v.frame} (t = ${v.timeS.toFixed(2)} s): ${v.condition} at ${v.body}, error ${v.error.toFixed(4)} ${unit} > ${v.threshold} ${unit}`;
  }
  lines.push(`  hard failure             ${failure}`);
  const stop =
    m.progressStop.available && m.progressStop.value
      ? ` (stopped at frame ${m.progressStop.value.frame}: ${m.progressStop.value.cause})`
      : '';
  lines.push(`  ${'progress-soft'.padEnd(24)} ${fmt(m.progressSoft, 4, '')}${stop}`);
  for (const key of NUMERIC_READINGS) {
    if (key === 'progressSoft') continue;
    const info = READING_INFO[key];
    const r = m[key];
    const shown =
      key === 'mpjpeLMm' && r.available ? `${fmt(r, 3, 'mm')} (${fmt(r, 4, 'cm', 0.1)})` : fmt(r, 4, info.unit);
    lines.push(`  ${info.label.padEnd(24)} ${shown}`);
  }
  return `${lines.join('\n')}\n`;
}
