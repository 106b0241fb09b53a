import { InputError } from '../problems';
import { G1_JOINT_NAMES } from '../robot/g1Joints';
import { describeValue } from '../text/printable';
import type { PolicyFamily } from './trackingPolicy';

// Declared presets: the interface a policy family would otherwise read from the file, for
// exports that do not carry it, transcribed from the named preset of the family's own runner.
// A preset is named `<project>/<name>` as the project's CLI names it; it supplies only what the
// file lacks (observation layout, rates, action mapping, default pose, anchor, physics); what the
// file carries (joint names, gains) is read from the file, and the family's adapter checks the
// preset against the graph (widths, joint names, outputs) before anything runs.
//
// Bump a preset's version whenever a value in it changes: a binding run under a preset records
// `<id>@<version>` in its identity, so results under different presets never mix.

/** One actor observation term as the preset source lists it. */
export interface HolosomaPresetTerm {
  /** holosoma's term name (the family's term table gives its meaning). */
  name: string;
  /** Values it contributes per step (obs_dims). */
  size: number;
  /** Multiplier applied before concatenation (obs_scales). */
  scale: number;
  /** ± clip of the term, or null. */
  clip: number | null;
}

/**
 * What holosoma's whole-body-tracking adapter reads from `experiment_config`, stated directly:
 * the same fields the adapter takes from the training configuration.
 */
export interface HolosomaInterface {
  /** Actor observation terms as listed by the source (the adapter concatenates them in sorted name order). */
  terms: readonly HolosomaPresetTerm[];
  /** Steps of history of the actor group (1: the current step only). */
  historyLength: number;
  /** Physics rate of the trainer's simulator, Hz. */
  simFps: number;
  /** Physics steps per policy step. */
  controlDecimation: number;
  /** target = default + actionScale · clip(action) (P control, default offset). */
  actionScale: number;
  /** ± clip applied to the raw action, or null. */
  actionClip: number | null;
  /** Default joint angle per joint name, rad. */
  defaultJointAnglesRad: Readonly<Record<string, number>>;
  /** Effort limit per joint, N·m, in `jointNames` order. */
  effortLimitNm: readonly number[];
  /** The joint order the runner drives (the action and dof_pos/dof_vel order). */
  jointNames: readonly string[];
  /** The body whose pose anchors the reference (motion body_name_ref). */
  anchorBody: string;
}

export interface PolicyPreset {
  /** `<project>/<name>`, as given to --preset. */
  id: string;
  /** Bumped when a value changes. */
  version: number;
  /** The console family whose adapter reads a file under this preset. */
  family: PolicyFamily;
  /** One line for lists and the Policy panel. */
  summary: string;
  /** The peer files (repository, commit, path, symbol) every value is transcribed from. */
  sources: readonly string[];
  holosoma: HolosomaInterface;
}

const HOLOSOMA_COMMIT = 'fc600e7db2de580509eedaa656ca6c601bd3af9b';
const HOLOSOMA_INFERENCE = `amazon-far/holosoma@${HOLOSOMA_COMMIT.slice(0, 7)} src/holosoma_inference/holosoma_inference`;
const HOLOSOMA_TRAINING = `amazon-far/holosoma@${HOLOSOMA_COMMIT.slice(0, 7)} src/holosoma/holosoma`;

/**
 * holosoma's G1 29-DoF joint order (holosoma_inference config_values/robot.py g1_29dof.dof_names):
 * that list is the canonical G1 order, name for name.
 */
const HOLOSOMA_G1_DOF_NAMES: readonly string[] = G1_JOINT_NAMES;

/** g1_29dof.default_dof_angles, in HOLOSOMA_G1_DOF_NAMES order (the same values as training's init_state.default_joint_angles). */
const HOLOSOMA_G1_DEFAULT_RAD = [
  -0.312, 0, 0, 0.669, -0.363, 0, -0.312, 0, 0, 0.669, -0.363, 0, 0, 0, 0, 0.2, 0.2, 0, 0.6, 0, 0, 0, 0.2, -0.2, 0, 0.6,
  0, 0, 0,
];

/** g1_29dof.motor_effort_limit (inference) = robot.g1_29dof.dof_effort_limit_list (training), N·m. */
const HOLOSOMA_G1_EFFORT_NM = [
  88, 139, 88, 139, 50, 50, 88, 139, 88, 139, 50, 50, 88, 50, 50, 25, 25, 25, 25, 25, 5, 5, 25, 25, 25, 25, 25, 5, 5,
];

/** The presets, declared once. */
export const POLICY_PRESETS: readonly PolicyPreset[] = [
  {
    id: 'holosoma/g1-29dof-wbt',
    version: 1,
    family: 'holosoma-wbt',
    summary:
      'holosoma G1 29-DoF whole-body tracking (inference:g1-29dof-wbt, observation wbt): 154-wide obs, 50 Hz, action scale 1, clip ±100',
    sources: [
      `${HOLOSOMA_INFERENCE}/config/config_values/inference.py g1_29dof_wbt (robot g1_29dof, observation wbt, task wbt)`,
      `${HOLOSOMA_INFERENCE}/config/config_values/observation.py wbt (obs_dict actor_obs, obs_dims, obs_scales, history_length_dict)`,
      `${HOLOSOMA_INFERENCE}/config/config_values/robot.py g1_29dof (dof_names, default_dof_angles, motor_effort_limit, motion.body_name_ref)`,
      `${HOLOSOMA_INFERENCE}/config/config_values/task.py wbt (rl_rate 50, policy_action_scale 1.0)`,
      `${HOLOSOMA_INFERENCE}/policies/base.py BasePolicy (obs terms sorted by name; np.clip(action, -100, 100) · policy_action_scale; dof_pos − default_dof_angles)`,
      `${HOLOSOMA_TRAINING}/config_values/wbt/g1/experiment.py g1_29dof_wbt (simulator isaacsim, robot control action_scale 1.0)`,
      `${HOLOSOMA_TRAINING}/config_values/simulator.py isaacsim (fps 200, control_decimation 4)`,
      `${HOLOSOMA_TRAINING}/config_values/robot.py g1_29dof (control clip_actions, action_clip_value 100, dof_effort_limit_list)`,
    ],
    holosoma: {
      // observation.py wbt: obs_dict.actor_obs with obs_dims and obs_scales (all 1.0), history 1.
      terms: [
        { name: 'motion_command', size: 58, scale: 1, clip: null },
        { name: 'motion_ref_ori_b', size: 6, scale: 1, clip: null },
        { name: 'base_ang_vel', size: 3, scale: 1, clip: null },
        { name: 'dof_pos', size: 29, scale: 1, clip: null },
        { name: 'dof_vel', size: 29, scale: 1, clip: null },
        { name: 'actions', size: 29, scale: 1, clip: null },
      ],
      historyLength: 1,
      simFps: 200,
      controlDecimation: 4,
      actionScale: 1,
      actionClip: 100,
      defaultJointAnglesRad: Object.fromEntries(HOLOSOMA_G1_DOF_NAMES.map((n, i) => [n, HOLOSOMA_G1_DEFAULT_RAD[i]])),
      effortLimitNm: HOLOSOMA_G1_EFFORT_NM,
      jointNames: HOLOSOMA_G1_DOF_NAMES,
      anchorBody: 'torso_link',
    },
  },
];

/** `<id>@<version>`: what a binding records. */
export const presetKey = (p: PolicyPreset): string => `${p.id}@${p.version}`;

/** The preset id of a recorded `<id>@<version>` key (null for none). */
export const presetIdOf = (key: string | null | undefined): string | null =>
  key === null || key === undefined ? null : key.includes('@') ? key.slice(0, key.lastIndexOf('@')) : key;

/** The preset ids, for usage texts and refusals. */
export const presetIds = (): string[] => POLICY_PRESETS.map((p) => p.id);

/**
 * The preset named `id` (`<project>/<name>`) for the policy at `file`; an unknown name is refused
 * with the list of declared presets.
 */
export function findPreset(id: string, file: string): PolicyPreset {
  const p = POLICY_PRESETS.find((x) => x.id === id);
  if (!p)
    throw new InputError(
      { file, key: 'preset' },
      `unknown preset ${describeValue(id.slice(0, 200))}; the declared presets are: ${presetIds().join(', ')}`,
    );
  return p;
}
