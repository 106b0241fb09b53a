import { loadRobotProfile } from '../../services/robot/loadRobotProfile';
import {
  POLICY_CHECK_DEFAULT_SECONDS,
  POLICY_CHECK_MAX_SECONDS,
  termJudgement,
  type PolicyCheckReport,
} from '../../domain/wbc/policyCheck';
import { runPolicyCheck } from '../../services/policyCheck/policyCheckRun';
import { defineCommand, fpsOption, numberOption } from '../cliOptions';
import { printJson, UsageError } from '../cliSupport';

const usage = `usage: motionbench policy check <file.onnx|folder> [--clip <file>] [--fps N] [--seconds S]
                             [--preset <family>/<name>] [--model <mjcf>] [--json]
  Evidence for a policy that falls early (docs/POLICIES.md, "When a policy falls"): runs the first
  S seconds of the policy's own motion in the embedded MuJoCo simulator (as 'motionbench sim'
  runs it: the family's physics, the clip's first frame placed on the floor) with the normal
  reading, then once per negative control — the same run with one reading deliberately wrong
  (joint order by position or mirrored left/right, the orientation quaternion handed over xyzw,
  history entries in reverse order for terms with history > 1) — and reports:
    - the first control step's joint targets against the reference pose at t = 0;
    - each observation term's min/max/mean over the normal run against the range the policy's
      files and the model imply (unit vectors, rotation entries, joint ranges, declared clips),
      or "no bound declared";
    - per reading: outcome, first hard failure, progress-soft, MPJPE-l; and a verdict line.
  --clip <file>    the motion to track (default: the motion baked into the policy, or the one its
                   deploy configuration names); a policy with a baked motion accepts only that motion
  --fps N          frame rate of a CSV clip
  --seconds S      simulated seconds per run (default ${POLICY_CHECK_DEFAULT_SECONDS}, at most ${POLICY_CHECK_MAX_SECONDS}; shorter if the clip is)
  --preset <family>/<name>  read an .onnx export that does not carry its own interface under a
                   declared preset (as policy info and sim do)
  --model <mjcf>   the robot model (default: our G1)
  --json fields: policy {path, family, adapter, jointOrder, controlRateHz}, clip {file, name, fps,
    frames, seconds}, seconds, firstAction {maxAbsRad, meanAbsRad, worst, perJoint}, terms [{term,
    kind, width, min, max, mean, bound, status, outOfRange, atClipFraction}], controls [{name,
    aspect, description, applicable, why}], runs [{reading, outcome, failure, progressSoft,
    mpjpeLMm, simSeconds, wallSeconds}], verdict {kind, line, better}, wallSeconds.
  Exit status 0 when the check ran (whatever it found), 1 when it is refused (the reason names the
  file), 2 on bad usage.`;

const num = (v: number | null, d: number, unit = '') => (v === null ? 'n/a' : `${v.toFixed(d)}${unit}`);

function humanReport(r: PolicyCheckReport): string {
  const fa = r.firstAction;
  const lines = [
    `${r.policy.path}: ${r.policy.family} (${r.policy.adapter}), joint order ${r.policy.jointOrder}, ${r.policy.controlRateHz} Hz`,
    `  clip           ${r.clip.file} (${r.clip.seconds.toFixed(2)} s at ${r.clip.fps} fps); first ${r.seconds.toFixed(2)} s run`,
    `  first action   targets − reference pose at t = 0: max ${fa.maxAbsRad.toFixed(3)} rad, mean ${fa.meanAbsRad.toFixed(3)} rad; worst ${fa.worst.map((w) => `${w.joint} ${w.deltaRad >= 0 ? '+' : ''}${w.deltaRad.toFixed(3)}`).join(', ')}`,
    '  observation terms (normal reading):',
    ...r.terms.map((t) => {
      const range = `[${t.min.toFixed(3)}, ${t.max.toFixed(3)}] mean ${t.mean.toFixed(3)}`;
      return `    ${`${t.term} (${t.width})`.padEnd(28)} ${range.padEnd(40)} ${termJudgement(t)}`;
    }),
    '  readings:',
    ...r.runs.map(
      (x) =>
        `    ${x.reading.padEnd(22)} ${x.outcome.padEnd(13)} first failure ${x.failure ? `${x.failure.timeS.toFixed(2)} s (${x.failure.condition} of ${x.failure.body})` : 'none'}, progress-soft ${num(x.progressSoft, 3)}, MPJPE-l ${num(x.mpjpeLMm, 1, ' mm')}`,
    ),
    ...r.controls.filter((c) => !c.applicable).map((c) => `    ${c.name.padEnd(22)} not applicable: ${c.why}`),
    `  verdict        ${r.verdict.line}`,
    `  wall time      ${r.wallSeconds.toFixed(1)} s`,
  ];
  return `${lines.join('\n')}\n`;
}

export const policyCheckCommand = defineCommand({
  name: 'policy check',
  summary: 'first action, observation ranges and negative-control runs of a released tracking policy',
  usage,
  strings: ['clip', 'fps', 'seconds', 'model', 'preset'],
  flags: ['json'],
  positionals: 1,
  async run(values, io, { positionals }) {
    if (positionals.length !== 1)
      throw new UsageError(`policy check takes one file or folder, got ${positionals.length}\n${usage}`);
    const fps = fpsOption(values.fps);
    const seconds =
      numberOption(
        values.seconds,
        'seconds',
        (v) => Number.isFinite(v) && v > 0 && v <= POLICY_CHECK_MAX_SECONDS,
        `a number in (0, ${POLICY_CHECK_MAX_SECONDS}]`,
      ) ?? POLICY_CHECK_DEFAULT_SECONDS;
    const profile = loadRobotProfile(values.model);
    const report = await runPolicyCheck({
      policyPath: positionals[0],
      ...(values.clip !== undefined ? { clipFile: values.clip } : {}),
      ...(fps !== undefined ? { fps } : {}),
      seconds,
      profile,
      preset: values.preset ?? null,
    });
    if (values.json) printJson(io, report);
    else io.stdout(humanReport(report));
    return 0;
  },
});
