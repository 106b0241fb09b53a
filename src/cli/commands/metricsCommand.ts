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
import { loadClipFile } from '../../services/motion/loadClipFile';
import { loadRobotProfile } from '../../services/robot/loadRobotProfile';
import { fpsOption, parse, printJson, UsageError, type Command } from '../cliSupport';

const usage = `usage: motionbench metrics --ref <file> --exec <file> [--model <mjcf>] [--fps N] [--exec-fps N]
                           [--exec-no-global-root] [--json]
  Readings of metric contract mb-metrics/1 (docs/METRICS.md) for an executed motion against its
  reference. Both are resampled to 50 Hz on the common timeline (K frames over the shorter
  duration); body positions come from forward kinematics on --model (default: our G1 in assets/).
  --fps N              frame rate of the reference (CSV files do not state one)
  --exec-fps N         frame rate of the executed motion
  --exec-no-global-root  the executed motion has no global root position or heading (a robot
                       without motion capture): readings that need them are reported unavailable
  --json fields: contract, K, failed, failure {frame, condition, body} (null if none),
    progress_soft, mpjpe_l_mm, joint_pos_rmse (rad), joint_vel_rmse (rad/s), joint_acc_rms,
    joint_acc_p95 (rad/s²), joint_jerk_rms, joint_jerk_p95 (rad/s³); a reading that cannot be
    computed is null, with its reason under "unavailable".`;

/** Reloads with the executed file's option name in the reason (the loaders speak of --fps). */
function loadExec(file: string, fps: number | undefined, limits: Parameters<typeof loadClipFile>[1]): MotionClip {
  try {
    return loadClipFile(file, { ...limits, ...(fps !== undefined ? { fps } : {}) });
  } catch (err) {
    if (err instanceof InputError) throw new InputError(err.location, err.reason.replace(/--fps\b/g, '--exec-fps'));
    throw err;
  }
}

export const metricsCommand: Command = {
  name: 'metrics',
  summary: 'tracking readings (mb-metrics/1) of an executed motion against its reference',
  usage,
  async run(argv, io) {
    const { values } = parse(
      argv,
      {
        ref: { type: 'string' },
        exec: { type: 'string' },
        model: { type: 'string' },
        fps: { type: 'string' },
        'exec-fps': { type: 'string' },
        'exec-no-global-root': { type: 'boolean' },
        json: { type: 'boolean' },
      },
      usage,
    );
    if (values.ref === undefined) throw new UsageError(`--ref is required\n${usage}`);
    if (values.exec === undefined) throw new UsageError(`--exec is required\n${usage}`);
    const fps = fpsOption(values.fps);
    const execFps = fpsOption(values['exec-fps'], 'exec-fps');
    const profile = loadRobotProfile(values.model);
    const evaluator = new ClipPairEvaluator(MB_METRICS_1, profile);
    const limits = { jointLimitsRad: profile.joints.map((j) => j.rangeRad) };
    const ref = loadClipFile(values.ref, { ...limits, ...(fps !== undefined ? { fps } : {}) });
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
    if (values.json) printJson(io, episodeMetricsJson(metrics));
    else io.stdout(humanReport(metrics, ref, exec, profile.modelName));
    return 0;
  },
};

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
