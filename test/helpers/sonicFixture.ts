import fs from 'node:fs';
import path from 'node:path';
import { encodeOnnxModel } from './onnxBuilder';

// A SONIC deploy folder (NVlabs/GR00T-WholeBodyControl gear_sonic_deploy/policy/<variant>/):
// observation_config.yaml with the term lists of the shipped configs (release:
// policy/release/observation_config.yaml; low-latency: observation_config_low_latency.yaml;
// v1.1: policy/sonic_v1_1/observation_config.yaml), and model_encoder.onnx / model_decoder.onnx
// with the exporter's I/O (gear_sonic/utils/inference_helpers.py: obs_dict → encoded_tokens
// [1, 64]; obs_dict [1, 994] → action [1, 29], opset 13). The graphs are probes: each output
// copies one chosen input entry (the deploy reads only the names and shapes, never the ops).

export type SonicVariantName = 'release' | 'low_latency' | 'v1_1';

const DECODER = [
  'token_state',
  'his_base_angular_velocity_10frame_step1',
  'his_body_joint_positions_10frame_step1',
  'his_body_joint_velocities_10frame_step1',
  'his_last_actions_10frame_step1',
  'his_gravity_dir_10frame_step1',
];

const ENCODER: Record<SonicVariantName, { terms: string[]; g1: string[]; teleop: string[]; smpl: string[] }> = {
  release: {
    terms: [
      'encoder_mode_4',
      'motion_joint_positions_10frame_step5',
      'motion_joint_velocities_10frame_step5',
      'motion_root_z_position_10frame_step5',
      'motion_root_z_position',
      'motion_anchor_orientation',
      'motion_anchor_orientation_10frame_step5',
      'motion_joint_positions_lowerbody_10frame_step5',
      'motion_joint_velocities_lowerbody_10frame_step5',
      'vr_3point_local_target',
      'vr_3point_local_orn_target',
      'smpl_joints_10frame_step1',
      'smpl_anchor_orientation_10frame_step1',
      'motion_joint_positions_wrists_10frame_step1',
    ],
    g1: [
      'encoder_mode_4',
      'motion_joint_positions_10frame_step5',
      'motion_joint_velocities_10frame_step5',
      'motion_anchor_orientation_10frame_step5',
    ],
    teleop: [
      'encoder_mode_4',
      'motion_joint_positions_lowerbody_10frame_step5',
      'motion_joint_velocities_lowerbody_10frame_step5',
      'vr_3point_local_target',
      'vr_3point_local_orn_target',
      'motion_anchor_orientation',
    ],
    smpl: [
      'encoder_mode_4',
      'smpl_joints_10frame_step1',
      'smpl_anchor_orientation_10frame_step1',
      'motion_joint_positions_wrists_10frame_step1',
    ],
  },
  low_latency: {
    terms: [
      'encoder_mode_4',
      'motion_joint_positions_10frame_step1',
      'motion_joint_velocities_10frame_step1',
      'motion_anchor_orientation_10frame_step1',
      'motion_anchor_orientation',
      'motion_joint_positions_lowerbody_10frame_step1',
      'motion_joint_velocities_lowerbody_10frame_step1',
      'vr_3point_local_target',
      'vr_3point_local_orn_target',
      'smpl_joints_4frame_step1',
      'smpl_anchor_orientation_4frame_step1',
      'motion_joint_positions_wrists_4frame_step1',
    ],
    g1: [
      'encoder_mode_4',
      'motion_joint_positions_10frame_step1',
      'motion_joint_velocities_10frame_step1',
      'motion_anchor_orientation_10frame_step1',
    ],
    teleop: [
      'encoder_mode_4',
      'motion_joint_positions_lowerbody_10frame_step1',
      'motion_joint_velocities_lowerbody_10frame_step1',
      'vr_3point_local_target',
      'vr_3point_local_orn_target',
      'motion_anchor_orientation',
    ],
    smpl: [
      'encoder_mode_4',
      'smpl_joints_4frame_step1',
      'smpl_anchor_orientation_4frame_step1',
      'motion_joint_positions_wrists_4frame_step1',
    ],
  },
  v1_1: {
    terms: [
      'encoder_mode_4',
      'motion_joint_positions_10frame_step5',
      'motion_joint_velocities_10frame_step5',
      'motion_anchor_orientation_heading_10frame_step5',
      'motion_anchor_orientation_heading',
      'motion_joint_positions_lowerbody_10frame_step5',
      'motion_joint_velocities_lowerbody_10frame_step5',
      'vr_3point_local_target',
      'vr_3point_local_orn_target',
      'smpl_joints_10frame_step1',
      'smpl_anchor_orientation_heading_10frame_step1',
      'motion_joint_positions_wrists_10frame_step1',
    ],
    g1: [
      'encoder_mode_4',
      'motion_joint_positions_10frame_step5',
      'motion_joint_velocities_10frame_step5',
      'motion_anchor_orientation_heading_10frame_step5',
    ],
    teleop: [
      'encoder_mode_4',
      'motion_joint_positions_lowerbody_10frame_step5',
      'motion_joint_velocities_lowerbody_10frame_step5',
      'vr_3point_local_target',
      'vr_3point_local_orn_target',
      'motion_anchor_orientation_heading',
    ],
    smpl: [
      'encoder_mode_4',
      'smpl_joints_10frame_step1',
      'smpl_anchor_orientation_heading_10frame_step1',
      'motion_joint_positions_wrists_10frame_step1',
    ],
  },
};

/** Widths of the shipped encoder inputs (the deploy's registry dims summed in yaml order). */
export const SONIC_ENCODER_WIDTH: Record<SonicVariantName, number> = { release: 1762, low_latency: 1247, v1_1: 1751 };
export const SONIC_DECODER_WIDTH = 994;

export function sonicObservationConfig(
  variant: SonicVariantName,
  edit: (terms: string[]) => string[] = (t) => t,
): string {
  const e = ENCODER[variant];
  const list = (xs: string[], indent: string) =>
    xs.map((n) => `${indent}- name: "${n}"\n${indent}  enabled: true`).join('\n');
  const mode = (name: string, id: number, req: string[]) =>
    `    - name: "${name}"\n      mode_id: ${id}\n      required_observations:\n${req.map((r) => `        - ${r}`).join('\n')}`;
  return `# G1 Deploy - Observation Configuration
observations:
${list(DECODER, '  ')}

encoder:
  dimension: 64
  use_fp16: false
  encoder_observations:
${list(edit(e.terms), '    ')}
  encoder_modes:
${mode('g1', 0, e.g1)}
${mode('teleop', 1, e.teleop)}
${mode('smpl', 2, e.smpl)}
`;
}

/**
 * A graph whose output a is gain[a]·(input entry index[a]) + bias[a] (index −1 = 0; gain 1, bias 0
 * by default): Gather along the input's last axis, Mul, Add — small however wide the input.
 */
function probe(
  inDim: number,
  outDim: number,
  index: number[],
  inputName: string,
  outputName: string,
  gain?: number[],
  bias?: number[],
): Uint8Array {
  const pick = new Array<number>(outDim).fill(0);
  const g = new Float64Array(outDim);
  index.forEach((d, a) => {
    if (d < 0) return;
    pick[a] = d;
    g[a] = gain ? gain[a] : 1;
  });
  return encodeOnnxModel({
    nodes: [
      { opType: 'Gather', inputs: [inputName, 'pick'], outputs: ['picked'], attributes: [{ name: 'axis', i: 1 }] },
      { opType: 'Mul', inputs: ['picked', 'gain'], outputs: ['scaled'] },
      { opType: 'Add', inputs: ['scaled', 'b'], outputs: [outputName] },
    ],
    initializers: [
      { name: 'pick', dims: [outDim], type: 'int64', values: pick },
      { name: 'gain', dims: [outDim], type: 'float32', values: g },
      { name: 'b', dims: [outDim], type: 'float32', values: bias ?? new Float64Array(outDim) },
    ],
    inputs: [{ name: inputName, type: 'float32', dims: [1, inDim] }],
    outputs: [{ name: outputName, type: 'float32', dims: [1, outDim] }],
    opset: 13,
  });
}

/**
 * What the folder's graphs declare; each field defaults to the exporter's (inference_helpers.py):
 * encoder obs_dict [1, E] → encoded_tokens [1, 64], decoder obs_dict [1, 994] → action [1, 29].
 * A negative test changes one of them to check that a file that differs is refused at load.
 */
export interface SonicGraphIo {
  encoderInput?: string;
  encoderOutput?: string;
  encoderWidth?: number;
  tokenWidth?: number;
  decoderInput?: string;
  decoderOutput?: string;
  decoderWidth?: number;
}

/**
 * Writes model_encoder.onnx, model_decoder.onnx and observation_config.yaml; the encoder's token
 * entry t copies encoder input encIndex[t], the decoder's action a copies decoder input decIndex[a].
 */
export function writeSonicFolder(
  dir: string,
  variant: SonicVariantName,
  encIndex: number[],
  decIndex: number[],
  opts: { config?: string; decoderGain?: number[]; decoderBias?: number[] } & SonicGraphIo = {},
): string {
  fs.mkdirSync(dir, { recursive: true });
  const E = opts.encoderWidth ?? SONIC_ENCODER_WIDTH[variant];
  fs.writeFileSync(
    path.join(dir, 'model_encoder.onnx'),
    probe(E, opts.tokenWidth ?? 64, encIndex, opts.encoderInput ?? 'obs_dict', opts.encoderOutput ?? 'encoded_tokens'),
  );
  fs.writeFileSync(
    path.join(dir, 'model_decoder.onnx'),
    probe(
      opts.decoderWidth ?? SONIC_DECODER_WIDTH,
      29,
      decIndex,
      opts.decoderInput ?? 'obs_dict',
      opts.decoderOutput ?? 'action',
      opts.decoderGain,
      opts.decoderBias,
    ),
  );
  fs.writeFileSync(path.join(dir, 'observation_config.yaml'), opts.config ?? sonicObservationConfig(variant));
  return dir;
}
