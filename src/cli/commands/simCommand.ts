import fs from 'node:fs';
import { MB_METRICS_1, episodeMetricsJson, type EpisodeMetrics } from '../../domain/metrics';
import { TRAJECTORY_HASH_LAYOUT } from '../../domain/sim/trajectoryHash';
import { BUILTIN_LABEL } from '../../domain/sim/builtinBinding';
import { bindingKey, type WbcBinding } from '../../domain/wbc/wbcBinding';
import { loadClipFile } from '../../services/motion/loadClipFile';
import { modelFileReferences } from '../../services/robot/loadRobotProfile';
import { loadRobotProfile } from '../../services/robot/loadRobotProfile';
import { BindingSpecError, resolveBindingSpec } from '../../services/sim/bindingSpec';
import { EmbeddedSimulator } from '../../services/sim/embeddedSimulator';
import { runSimEpisode } from '../../services/sim/runSimEpisode';
import { isPolicySpec } from '../../services/wbc/loadPolicy';
import { checkClipMatchesBaked, planPolicy, type PolicyPlan } from '../../services/wbc/policyRun';
import { policyInfo } from './policyInfoCommand';
import { presetIds } from '../../domain/wbc/policyPresets';
import type { MotionClip } from '../../domain/motion/motionClip';
import { describeFailure } from '../../services/sim/simEngine';
import { checkOutputFiles, defineCommand, fpsOption, nonNegativeIntegerOption } from '../cliOptions';
import { printJson, UsageError, type CliIo } from '../cliSupport';

const usage = `usage: motionbench sim [--clip <file>] [--binding builtin[:assist=<N/m>]|<binding.json>|<policy.onnx|folder>] [--model <mjcf>]
                       [--preset <family>/<name>] [--fps N] [--seed N] [--out <episode.mcap>] [--exec-out <exec.json>]
                       [--force] [--json]
  Runs the clip in the embedded MuJoCo simulator (physics at the model timestep, control and
  recording at 50 Hz) from the clip's first frame placed on the floor, and reports the
  mb-metrics/1 readings of the executed motion against the clip (docs/SIMULATOR.md).
  --binding builtin            reference tracker (joint PD through the position servos, the
                               model's gains), no root assist — not a policy (default)
  --binding builtin:assist=N   the same plus a root-assist spring-damper of N N/m on the pelvis
  --binding <file.json>        a binding file (kind "builtin" or "onnx")
  --binding <policy.onnx|dir>  a released tracking policy as it is (BeyondMimic, unitree_rl_lab or
                               unitree_rl_mjlab deploy folder, wbc-mjlab folder, holosoma export;
                               docs/POLICIES.md), on its family's physics; --clip may be omitted for
                               a policy that carries its reference motion (a --clip must then be
                               that motion) or whose robot FSM configuration names one (motion_file
                               and fps of unitree_rl_lab's config/config.yaml)
  --preset <family>/<name>     with a policy --binding: read an .onnx export that does not carry
                               its own interface under a declared preset (${presetIds().join(', ')};
                               docs/POLICIES.md), checked against the graph; the binding's id and
                               version record it
  --model <mjcf>               a scene with a floor (default: our G1 in assets/; for MuJoCo
                               Menagerie's G1 use its scene.xml)
  --fps N                      frame rate of a CSV clip (CSV files do not state one)
  --seed N                     recorded with the episode (the builtin simulation is deterministic)
  --out <episode.mcap>         write the episode (reference, executed state, commands, events,
                               metrics) as an MCAP file Foxglove opens
  --exec-out <exec.json>       write the executed motion as a motionbench-clip/1 JSON (50 fps),
                               e.g. for 'motionbench metrics --ref <clip> --exec <exec.json>'
  --force                      overwrite an existing --out / --exec-out file (without it an
                               existing file is refused); an input (the clip, the model, a mesh,
                               the binding or its ONNX file) is never written over, even with --force
  --json fields: the fields of 'motionbench metrics --json' (contract, K, failed, failure,
    progress_soft, mpjpe_l_mm, joint_pos_rmse, …) + outcome, reason, sim_seconds, wall_seconds,
    real_time_factor, trajectory_sha256, binding {kind, family, id, version, label,
    root_assist_n_per_m, …}, clip, model, seed; for a policy also policy {adapter, physics,
    alignment, needs, baked_fk_residual_m, preset, notes}.
  Exit status 0 when the episode ran (completed or hard_failure), 1 on an infrastructure error
  or bad input, 2 on bad usage.`;

function progressPrinter(io: CliIo): (sim: number, planned: number) => void {
  const t0 = performance.now();
  let last = -Infinity;
  return (sim, planned) => {
    const now = performance.now();
    if (now - last < 1000 && sim < planned) return;
    last = now;
    const wall = (now - t0) / 1000;
    const rtf = wall > 0 ? sim / wall : 0;
    io.stderr(`sim: ${sim.toFixed(1)} / ${planned.toFixed(1)} s simulated (${rtf.toFixed(1)}x real time)\n`);
  };
}

function execClipJson(
  name: string,
  exec: { frameCount: number; rootPosM: Float64Array; rootQuatWxyz: Float64Array; jointPosRad: Float64Array },
  jointNames: string[],
): string {
  const rows = (a: Float64Array, w: number) =>
    Array.from({ length: exec.frameCount }, (_, k) => Array.from(a.subarray(w * k, w * k + w)));
  return JSON.stringify({
    format: 'motionbench-clip/1',
    name,
    fps: MB_METRICS_1.rateHz,
    joint_order: jointNames,
    frames: {
      root_pos_m: rows(exec.rootPosM, 3),
      root_quat_wxyz: rows(exec.rootQuatWxyz, 4),
      joint_pos_rad: rows(exec.jointPosRad, jointNames.length),
    },
  });
}

export function bindingSummary(b: WbcBinding): Record<string, unknown> {
  return {
    id: b.id,
    version: b.version,
    key: bindingKey(b),
    kind: b.kind,
    label: b.label,
    control_rate_hz: b.controlRateHz,
    ...(b.kind === 'builtin' ? { gains: b.gains ?? 'model', root_assist: b.rootAssist } : {}),
    ...(b.kind === 'onnx' ? { checkpoint_hash: b.checkpointHash } : {}),
    family: b.kind === 'onnx' ? (b.family ?? 'declared') : null,
    ...(b.kind === 'onnx' && b.family !== undefined && b.preset !== undefined ? { preset: b.preset } : {}),
    root_assist_n_per_m: b.kind === 'builtin' ? (b.rootAssist?.kpNPerM ?? 0) : 0,
  };
}

/** What `policy info` says of the policy, minus the per-joint tables (they are there). */
function policySummary(plan: PolicyPlan): Record<string, unknown> {
  const info = policyInfo(plan);
  return {
    adapter: info.adapter,
    policy_path: plan.loaded.policyPath,
    preset: info.preset,
    files: info.files,
    physics: info.physics,
    alignment: info.alignment,
    needs: info.needs,
    baked_clip_id: plan.baked?.clip.id ?? null,
    baked_fk_residual_m: plan.baked?.fkResidualM ?? null,
    start:
      'reference frame 0 placed on the floor (the families reset to a reference frame in training); the reference is aligned to the robot by the family rule above',
    notes: info.notes,
  };
}

export const simCommand = defineCommand({
  name: 'sim',
  summary: 'run a clip in the embedded MuJoCo simulator under a WBC binding',
  usage,
  strings: ['clip', 'binding', 'model', 'fps', 'seed', 'out', 'exec-out', 'preset'],
  flags: ['force', 'json'],
  async run(values, io) {
    const policySpec = values.binding !== undefined && isPolicySpec(values.binding);
    if (values.preset !== undefined && !policySpec)
      throw new UsageError(`--preset applies to a released policy --binding (an .onnx file or folder)\n${usage}`);
    if (values.clip === undefined && !policySpec) throw new UsageError(`--clip is required\n${usage}`);
    const fps = fpsOption(values.fps);
    const seed = nonNegativeIntegerOption(values.seed, 'seed') ?? 0;
    const force = values.force === true;
    const outputs = [
      { option: 'out', file: values.out },
      { option: 'exec-out', file: values['exec-out'] },
    ];
    // Before anything is loaded (cheap usage errors first); again below with every input known.
    checkOutputFiles(
      outputs,
      [
        { what: 'the --clip file', file: values.clip },
        { what: 'the --model file', file: values.model },
      ],
      force,
    );
    const profile = loadRobotProfile(values.model);
    const { binding, plan } = await resolveSimBinding(values.binding, policySpec, profile, values.preset);
    const clip = resolveSimClip(values.clip, values.binding, fps, profile, plan);
    reportBakedResidual(io, profile, plan);
    for (const w of clip.warnings)
      if (w.code !== 'joint_limit') io.stderr(`motionbench: ${clip.provenance.file}: ${w.message}\n`);
    if (clip.frameCount < 2)
      throw new UsageError(`${values.clip}: the clip has ${clip.frameCount} frame; the simulator needs at least 2`);
    checkOutputFiles(outputs, simInputs(values, profile, binding, plan), force);

    const sim = new EmbeddedSimulator({ modelFile: profile.sourceFile, workers: 1 });
    try {
      const info = await sim.ready();
      io.stderr(
        `sim: ${profile.modelName} (${info.timestepS * 1000} ms physics step), ${clip.name} ${((clip.frameCount - 1) / clip.fps).toFixed(1)} s, binding ${bindingKey(binding)} — ${binding.label}\n`,
      );
      const result = await runSimEpisode(sim, {
        clip,
        binding,
        profile,
        seed,
        out: values.out ?? null,
        outExclusive: !force,
        keepFrames: false,
        onProgress: progressPrinter(io),
      });
      const { end, metrics } = result;
      if (values['exec-out'])
        fs.writeFileSync(
          values['exec-out'],
          execClipJson(
            `${clip.name} (executed)`,
            result.executed,
            profile.joints.map((j) => j.name),
          ),
          { flag: force ? 'w' : 'wx' },
        );
      const doc = simReportDoc(result, binding, plan, clip, profile, info.timestepS, seed);
      if (values.json) printJson(io, doc);
      else io.stdout(humanReport(doc, metrics, binding, end.failure ? describeFailure(end.failure) : null));
      return end.outcome === 'infrastructure_error' ? 1 : 0;
    } finally {
      await sim.close();
    }
  },
});

type Profile = ReturnType<typeof loadRobotProfile>;
type SimValues = { clip?: string; binding?: string; model?: string };

/** The WBC binding (and, for a released policy, its plan); a bad binding spec is a usage error. */
async function resolveSimBinding(
  spec: string | undefined,
  policySpec: boolean,
  profile: Profile,
  preset: string | undefined,
): Promise<{ binding: WbcBinding; plan: PolicyPlan | null }> {
  try {
    if (policySpec) {
      const plan = planPolicy(spec!, profile, preset ?? null);
      return { binding: plan.binding, plan };
    }
    return { binding: await resolveBindingSpec(spec ?? 'builtin'), plan: null };
  } catch (err) {
    if (err instanceof BindingSpecError) throw new UsageError(err.message);
    throw err;
  }
}

/** The clip to track: --clip, else the policy's baked motion, else the motion its FSM configuration names. */
function resolveSimClip(
  clipFile: string | undefined,
  bindingSpec: string | undefined,
  fps: number | undefined,
  profile: Profile,
  plan: PolicyPlan | null,
): MotionClip {
  if (clipFile !== undefined) {
    const clip = loadClipFile(clipFile, {
      ...(fps !== undefined ? { fps } : {}),
      jointLimitsRad: profile.joints.map((j) => j.rangeRad),
    });
    if (plan?.baked) checkClipMatchesBaked(clip, plan.baked.clip, plan.loaded.modelFile);
    return clip;
  }
  if (plan?.baked) return plan.baked.clip;
  if (plan?.loaded.spec.configuredMotion) {
    // The motion the robot's FSM configuration names for this policy, at its configured fps.
    const m = plan.loaded.spec.configuredMotion;
    if (fps !== undefined && fps !== m.fps)
      throw new UsageError(`--fps ${fps}: ${m.source} gives this policy's motion ${m.file} at ${m.fps} fps`);
    return loadClipFile(m.file, { fps: m.fps, jointLimitsRad: profile.joints.map((j) => j.rangeRad) });
  }
  throw new UsageError(
    `${bindingSpec}: this policy carries no reference motion; pass --clip <file> with the motion to track`,
  );
}

/** Reports how well the baked reference's FK matches the model; a warning above 2 cm. */
function reportBakedResidual(io: CliIo, profile: Profile, plan: PolicyPlan | null): void {
  if (!plan?.baked?.fkResidualM) return;
  const r = plan.baked.fkResidualM;
  const line = `sim: the baked reference's FK on ${profile.modelName}: body-position residual max ${(r.max * 1000).toFixed(1)} mm (${r.worstBody}, frame ${r.worstFrame}), mean ${(r.mean * 1000).toFixed(2)} mm over ${r.bodies} bodies\n`;
  io.stderr(r.max > 0.02 ? `motionbench: warning: ${line.slice(5)}` : line);
}

/** Every input file of the run, none of which an output may overwrite. */
function simInputs(
  values: SimValues,
  profile: Profile,
  binding: WbcBinding,
  plan: PolicyPlan | null,
): { what: string; file: string | undefined }[] {
  return [
    ...(values.clip !== undefined ? [{ what: 'the --clip file', file: values.clip }] : []),
    { what: values.model !== undefined ? 'the --model file' : 'the model', file: profile.sourceFile },
    ...modelFileReferences(profile.sourceFile).map((r) => ({
      what: `${r.kind === 'include' ? 'a file included by' : `a ${r.kind} of`} the model`,
      file: r.file,
    })),
    ...(values.binding !== undefined && fs.existsSync(values.binding)
      ? [{ what: 'the --binding file', file: values.binding }]
      : []),
    ...(binding.kind === 'onnx' ? [{ what: "the binding's ONNX model", file: binding.modelFile }] : []),
    ...(plan ? plan.loaded.files.map((f) => ({ what: 'a file of the policy', file: f })) : []),
  ];
}

/** The --json document of a finished run (also the source of the human report). */
function simReportDoc(
  result: Awaited<ReturnType<typeof runSimEpisode>>,
  binding: WbcBinding,
  plan: PolicyPlan | null,
  clip: MotionClip,
  profile: Profile,
  modelTimestepS: number,
  seed: number,
) {
  const { end, metrics } = result;
  return {
    ...episodeMetricsJson(metrics),
    outcome: end.outcome,
    reason: end.reason,
    sim_seconds: end.simSeconds,
    wall_seconds: end.wallSeconds,
    real_time_factor: end.wallSeconds > 0 ? end.simSeconds / end.wallSeconds : null,
    trajectory_sha256: end.trajectorySha256,
    trajectory_hash_layout: TRAJECTORY_HASH_LAYOUT,
    frames: end.frames,
    planned_frames: end.plannedFrames,
    binding: bindingSummary(binding),
    ...(plan ? { policy: policySummary(plan) } : {}),
    clip: {
      file: clip.provenance.file,
      name: clip.name,
      id: clip.id,
      fps: clip.fps,
      frames: clip.frameCount,
      sha256: clip.provenance.fileSha256,
    },
    model: {
      file: profile.sourceFile,
      name: profile.modelName,
      timestep_s: plan ? plan.loaded.spec.physics.timestepS : modelTimestepS,
      ...(plan ? { model_timestep_s: modelTimestepS } : {}),
    },
    seed,
    initial_state: end.initialState
      ? {
          root_pos_m: end.initialState.rootPosM,
          root_quat_wxyz: end.initialState.rootQuatWxyz,
          floor_shift_m: end.initialState.floorShiftM,
          from: 'clip frame 0, placed on the floor',
        }
      : null,
    reference_lift_m: end.referenceLiftM,
    episode_file: result.episodeFile,
  };
}

function humanReport(doc: Record<string, unknown>, m: EpisodeMetrics, b: WbcBinding, failure: string | null): string {
  const r = (v: { available: boolean; value?: number }, d: number, unit: string, scale = 1) =>
    v.available ? `${((v.value ?? 0) * scale).toFixed(d)} ${unit}`.trimEnd() : 'unavailable';
  const lines = [
    `${String(doc.outcome)}: ${String(doc.reason)}`,
    `  binding        ${bindingKey(b)} — ${b.label}${b.kind === 'builtin' && !b.label.includes(BUILTIN_LABEL) ? ` (${BUILTIN_LABEL})` : ''}`,
    `  simulated      ${(doc.sim_seconds as number).toFixed(2)} s in ${(doc.wall_seconds as number).toFixed(2)} s (${((doc.real_time_factor as number) ?? 0).toFixed(1)}x real time)`,
    `  hard failure   ${failure ?? 'none'}`,
    `  progress-soft  ${r(m.progressSoft, 4, '')}`,
    `  MPJPE-l        ${r(m.mpjpeLMm, 1, 'cm', 0.1)}`,
    `  joint RMSE     ${r(m.jointPosRmseRad, 4, 'rad')}`,
    `  trajectory     sha256 ${String(doc.trajectory_sha256)}`,
  ];
  if (doc.episode_file) lines.push(`  episode file   ${String(doc.episode_file)}`);
  return `${lines.join('\n')}\n`;
}
