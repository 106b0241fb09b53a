import { G1_JOINT_NAMES } from '../../domain/robot/g1Joints';
import { presetIds } from '../../domain/wbc/policyPresets';
import { describeTerms } from '../../domain/wbc/trackingPolicy';
import { loadRobotProfile } from '../../services/robot/loadRobotProfile';
import { planPolicy, type PolicyPlan } from '../../services/wbc/policyRun';
import { defineCommand } from '../cliOptions';
import { printJson, UsageError } from '../cliSupport';

const usage = `usage: motionbench policy info <file.onnx|folder> [--preset <family>/<name>] [--model <mjcf>] [--json]
  Reads a released tracking policy as it is — a BeyondMimic/whole_body_tracking or holosoma .onnx,
  a unitree_rl_mjlab deploy folder (exported/policy.onnx + params/deploy.yaml), a wbc-mjlab
  folder (policy.onnx + config.yaml), a HoloMotion or HumanoidVerse (PBHC, ASAP) run folder
  (config.yaml + exported/<checkpoint>.onnx, told apart by the config's keys) or a SONIC deploy folder (model_encoder.onnx, model_decoder.onnx,
  observation_config.yaml) — and prints what the console will run (docs/POLICIES.md):
  family, id, version (content hash), graph inputs/outputs, joint order and names, the
  observation term by term, control rate, physics, PD gains, default pose and action mapping
  (canonical joint order), the baked reference motion and what the policy needs from a backend.
  --model <mjcf>   the robot model the baked motion's FK is checked on (default: our G1)
  --preset <family>/<name>
                   read an .onnx export that does not carry its own interface under a declared
                   preset (${presetIds().join(', ')}); the preset is checked against the
                   graph (widths, joint names, outputs) and refused when it does not fit
  --json fields: family, id, version, adapter, preset (<id>@<version> or null), files, inputs,
    outputs [{name, shape, dtype}], joint_order, joint_names, driven_joints (the joints the action
    drives, in action order), held_joints (model joints the policy does not drive, held at the
    default pose by the robot side),
    observation [{term, kind, size, history, history_layout, frame_offsets, checked_against}],
    recurrent [{input, output, dims}], step_counter ({input, reset_at} or null), ignored_outputs,
    encoder ({file, input, output, observation [...], observation_size, token_size, mode} or null),
    observation_size, control_rate_hz, sim_dt_s, decimation, physics, gains {kp, kd},
    default_joint_pos, action {mode, scale, offset, clip}, anchor_body, alignment,
    motion ({frames, fps, clip_id, fk_residual_m} or null), configured_motion ({file, fps, source}
    or null: the motion the robot's FSM configuration names, unitree_rl_lab; a HumanoidVerse
    policy's own .pkl beside its config.yaml), needs, metadata_keys,
    notes.
  Exit status 0 when the policy was read, 1 when it is refused (the reason names the file and field).`;

export function policyInfo(plan: PolicyPlan): Record<string, unknown> {
  const { loaded, binding, baked } = plan;
  const s = loaded.spec;
  const arr = (a: ArrayLike<number>) => Array.from(a);
  return {
    family: s.family,
    id: binding.id,
    version: binding.version,
    adapter: s.adapter,
    preset: loaded.preset,
    files: loaded.files,
    inputs: loaded.info.inputs,
    outputs: loaded.info.outputs,
    joint_order: s.jointOrder.label,
    joint_names: s.jointOrder.policyNames,
    driven_joints: s.jointOrder.policyNames,
    held_joints: s.jointOrder.held ?? [],
    canonical_joint_names: G1_JOINT_NAMES,
    observation: s.observation.map((t) => ({
      term: t.name,
      kind: t.kind,
      size: t.size,
      history: t.history,
      history_layout: t.history > 1 ? (t.historyLayout ?? 'current_oldest_first') : null,
      frame_offsets: t.frameOffsets ?? null,
      checked_against: t.checkedAgainst,
    })),
    recurrent: s.recurrent.map((r) => ({ input: r.input, output: r.output, dims: r.dims })),
    step_counter: s.stepCounter ? { input: s.stepCounter.input, reset_at: s.stepCounter.resetAt } : null,
    ignored_outputs: s.ignoredOutputs,
    encoder: s.encoder
      ? {
          file: s.encoder.modelFile,
          input: s.encoder.input,
          output: s.encoder.output,
          observation: s.encoder.observation.map((t) => ({
            term: t.name,
            kind: t.kind,
            size: t.size,
            frame_offsets: t.frameOffsets ?? null,
            checked_against: t.checkedAgainst,
          })),
          observation_size: s.encoder.observationSize,
          token_size: s.encoder.tokenSize,
          mode: s.encoder.mode,
        }
      : null,
    observation_size: s.observationSize,
    control_rate_hz: s.controlRateHz,
    sim_dt_s: s.physics.timestepS,
    decimation: s.physics.decimation,
    physics: s.physics,
    gains: { kp: arr(s.kp), kd: arr(s.kd) },
    default_joint_pos: arr(s.defaultJointPosRad),
    action: { mode: s.action.mode, scale: arr(s.action.scale), offset: arr(s.action.offset), clip: s.action.clip },
    anchor_body: s.anchorBody,
    alignment: s.alignment,
    motion: baked
      ? { frames: baked.clip.frameCount, fps: baked.clip.fps, clip_id: baked.clip.id, fk_residual_m: baked.fkResidualM }
      : null,
    configured_motion: s.configuredMotion ?? null,
    needs: s.needs,
    metadata_keys: Object.keys(loaded.info.metadata),
    notes: s.notes,
  };
}

export const policyInfoCommand = defineCommand({
  name: 'policy info',
  summary: 'family, interface, observation, gains and baked motion of a released tracking policy',
  usage,
  strings: ['model', 'preset'],
  flags: ['json'],
  positionals: 1,
  async run(values, io, { positionals }) {
    if (positionals.length !== 1)
      throw new UsageError(`policy info takes one file or folder, got ${positionals.length}\n${usage}`);
    const profile = loadRobotProfile(values.model);
    const plan = planPolicy(positionals[0], profile, values.preset ?? null);
    const info = policyInfo(plan);
    if (values.json) {
      printJson(io, info);
      return 0;
    }
    const s = plan.loaded.spec;
    const m = plan.baked;
    const r = m?.fkResidualM;
    const lines = [
      `${plan.loaded.policyPath}`,
      `  family       ${s.family} (adapter ${s.adapter})`,
      `  binding      ${plan.binding.id}@${plan.binding.version}`,
      ...(plan.loaded.preset
        ? [`  preset       ${plan.loaded.preset} (the file carries no interface of its own)`]
        : []),
      `  files        ${plan.loaded.files.join(', ')}`,
      `  inputs       ${plan.loaded.info.inputs.map((v) => `${v.name} [${v.shape.join(', ')}] ${v.dtype}`).join(', ')}`,
      `  outputs      ${plan.loaded.info.outputs.map((v) => `${v.name} [${v.shape.join(', ')}]`).join(', ')}`,
      `  joint order  ${s.jointOrder.label} (remapped to the model's order by name)`,
      `  driven       ${s.jointOrder.policyNames.length} joints, in action order: ${s.jointOrder.policyNames.join(', ')}`,
      ...(s.jointOrder.held?.length
        ? [`  held         ${s.jointOrder.held.join(', ')} (not driven: held at the default pose by the robot side)`]
        : []),
      ...(s.encoder
        ? [
            `  encoder      ${s.encoder.modelFile}: ${s.encoder.observationSize} = ${describeTerms(s.encoder.observation)} → ${s.encoder.output} ${s.encoder.tokenSize} (mode ${s.encoder.mode.name} = ${s.encoder.mode.id})`,
          ]
        : []),
      `  observation  ${s.observationSize} = ${describeTerms(s.observation)}`,
      ...s.recurrent.map((r) => `  recurrent    ${r.output} → ${r.input} [${r.dims.join(', ')}], zeros at reset`),
      ...(s.stepCounter
        ? [`  step input   ${s.stepCounter.input} (int64), resets at ${s.stepCounter.resetAt ?? 'never'}`]
        : []),
      `  control      ${s.controlRateHz} Hz; physics ${s.physics.id} (${s.physics.timestepS * 1000} ms × ${s.physics.decimation})`,
      `  action       ${s.action.mode}${s.action.clip !== null ? `, clip ±${s.action.clip}` : ''}`,
      `  anchor       ${s.anchorBody}; alignment ${s.alignment.rotation} rotation, ${s.alignment.translation} translation`,
      `  motion       ${m ? `${m.clip.frameCount} frames at ${m.clip.fps} fps baked in (${m.clip.id})${r ? `; FK on ${profile.modelName}: residual max ${(r.max * 1000).toFixed(2)} mm, mean ${(r.mean * 1000).toFixed(3)} mm over ${r.bodies} bodies` : ''}` : s.configuredMotion ? `${s.configuredMotion.file} at ${s.configuredMotion.fps} fps (${s.configuredMotion.source})` : 'none baked in: run it with --clip'}`,
      `  needs        ${s.needs.length ? s.needs.join(', ') : 'nothing beyond joints and IMU'}`,
      ...s.notes.map((n) => `  note         ${n}`),
    ];
    io.stdout(`${lines.join('\n')}\n`);
    return 0;
  },
});
