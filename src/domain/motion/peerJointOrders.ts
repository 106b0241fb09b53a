import { InputError } from '../problems';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';

// The joint (and root body) orders of peers' motion formats that do not name their joints in
// the file. Each list is copied from the peer's published code or robot asset, cited by file and
// line at the commit read; a reader maps the file's columns to the canonical order BY NAME
// through these lists (reorderNamedColumns), never by position or width. Where a file does name
// its joints, the reader uses the file's names instead.

/**
 * ProtoMotions' G1: the dof order of a `.motion` file is the robot's `kinematic_info.dof_names`,
 * the hinge joints of the robot's MJCF in depth-first body order (protomotions/components/
 * pose_lib.py:395 `extract_kinematic_info`, :446 `_traverse`). The G1 robot config uses
 * `mjcf/g1_holo_compat.xml` (protomotions/robot_configs/g1.py:91) and the G1 CSV converter
 * `g1_bm_box_feet.xml` (data/scripts/convert_g1_csv_to_proto.py:261); both list these 29 hinges
 * in this order (g1_holo_compat.xml:59 left_hip_pitch_joint … :238 right_wrist_yaw_joint), which is
 * the canonical G1 order, name for name.
 * NVlabs/ProtoMotions @ 607ca7a0bb92e261120bcab8d9f97f28b3130ffc.
 */
export const PROTOMOTIONS_G1_DOF_NAMES: readonly string[] = [...G1_JOINT_NAMES];

/**
 * ProtoMotions' G1 bodies (`kinematic_info.body_names`): the bodies of g1_holo_compat.xml in
 * depth-first order (g1_holo_compat.xml:46 pelvis, :54 head, … :243 right_rubber_hand; the same
 * 33 in g1_bm.xml and g1_bm_box_feet.xml). Body 0 is the root: RobotState.root_pos / root_rot are
 * rigid_body_pos[:, 0] / rigid_body_rot[:, 0] (protomotions/simulator/base_simulator/
 * simulator_state.py:315-324).
 */
export const PROTOMOTIONS_G1_BODY_NAMES: readonly string[] = [
  'pelvis',
  'head',
  'left_hip_pitch_link',
  'left_hip_roll_link',
  'left_hip_yaw_link',
  'left_knee_link',
  'left_ankle_pitch_link',
  'left_ankle_roll_link',
  'right_hip_pitch_link',
  'right_hip_roll_link',
  'right_hip_yaw_link',
  'right_knee_link',
  'right_ankle_pitch_link',
  'right_ankle_roll_link',
  'waist_yaw_link',
  'waist_roll_link',
  'torso_link',
  'left_shoulder_pitch_link',
  'left_shoulder_roll_link',
  'left_shoulder_yaw_link',
  'left_elbow_link',
  'left_wrist_roll_link',
  'left_wrist_pitch_link',
  'left_wrist_yaw_link',
  'left_rubber_hand',
  'right_shoulder_pitch_link',
  'right_shoulder_roll_link',
  'right_shoulder_yaw_link',
  'right_elbow_link',
  'right_wrist_roll_link',
  'right_wrist_pitch_link',
  'right_wrist_yaw_link',
  'right_rubber_hand',
];

/**
 * HoloMotion's G1 29-DoF `robot.dof_names` (holomotion/config/robot/unitree/G1/29dof/
 * 29dof_training_isaaclab.yaml:36-65), the "URDF joint order" its NPZ spec gives for ref_dof_pos
 * (docs/holomotion_motion_file_spec.md:29); the deploy node takes its reference-motion joint
 * names from the same list (deployment/unitree_g1_ros2_29dof/src/humanoid_policy/
 * policy_node_29dof.py:790). HorizonRobotics/HoloMotion @ 71ab7e9.
 */
export const HOLOMOTION_G1_DOF_NAMES: readonly string[] = [...G1_JOINT_NAMES];

/**
 * HoloMotion's G1 `robot.body_names` (29dof_training_isaaclab.yaml:236-266, `num_bodies: 30` at
 * :8): the 30 MJCF bodies in depth-first order, pelvis first. The deploy code reads the root at
 * body 0 (offline_motion_reference.py:86 `root_body_idx: int = 0`).
 */
export const HOLOMOTION_G1_BODY_COUNT = 30;

/**
 * SONIC (GR00T-WholeBodyControl gear_sonic_deploy) `isaaclab_to_mujoco`: entry m is the column,
 * in the reference motion's joint arrays, of MuJoCo (canonical) joint m
 * (src/g1/g1_deploy_onnx_ref/include/policy_parameters.hpp:100-101). The deploy code reads a
 * reference folder's joint_pos.csv through it: `body_q_target[i] =
 * JointPositions(frame)[isaaclab_to_mujoco[i]]` (output_interface/output_interface.hpp:192, the
 * same remap as the robot's IsaacLab-ordered state at :184), so the CSV columns are in Isaac Lab
 * order. NVlabs/GR00T-WholeBodyControl @ 1983e88.
 */
export const SONIC_ISAACLAB_TO_MUJOCO: readonly number[] = [
  0, 3, 6, 9, 13, 17, 1, 4, 7, 10, 14, 18, 2, 5, 8, 11, 15, 19, 21, 23, 25, 27, 12, 16, 20, 22, 24, 26, 28,
];

/** The joint names of SONIC's reference CSV columns, from SONIC_ISAACLAB_TO_MUJOCO (column c → the name of the joint read there). */
export const SONIC_REFERENCE_JOINT_NAMES: readonly string[] = (() => {
  const names = new Array<string>(G1_NUM_JOINTS);
  SONIC_ISAACLAB_TO_MUJOCO.forEach((column, m) => (names[column] = G1_JOINT_NAMES[m]));
  return names;
})();

/**
 * HumanoidVerse/PBHC's 23-dof G1 (`g1_23dof_lock_wrist`): the `dof` columns of its motion .pkl.
 * The file names no joints. PBHC's converter builds them from a 29-joint G1 CSV row (the Unitree
 * order, G1_JOINT_NAMES) as `np.concatenate((dof[:, :19], dof[:, 22:26]), axis=1)`: the 29-joint
 * order without the three wrist joints of each arm (TeleHuman/PBHC motion_source/
 * convert_lafan_pkl.py:15 @ 452b05ab7ebef5d400ee6e1dce56e4cccc75f97f); the training
 * configuration lists the same order as `robot.dof_names` (humanoidverse/config/robot/g1/
 * g1_23dof_lock_wrist.yaml). A 29-wide `dof` is that converter's input order, G1_JOINT_NAMES.
 */
export const PBHC_G1_23DOF_NAMES: readonly string[] = [...G1_JOINT_NAMES.slice(0, 19), ...G1_JOINT_NAMES.slice(22, 26)];

/**
 * Index in canonical order of each column of a file whose joint columns carry `names`. Throws an
 * InputError at `key` when the names are not exactly the 29 canonical joints (missing, unknown or
 * repeated names).
 */
export function canonicalIndexOfColumns(names: readonly string[], file: string, key: string): Int32Array {
  const map = new Int32Array(names.length);
  const seen = new Set<string>();
  names.forEach((n, c) => {
    const k = G1_JOINT_NAMES.indexOf(n as (typeof G1_JOINT_NAMES)[number]);
    if (k < 0 || seen.has(n))
      throw new InputError({ file, key }, `joint ${c} (${n}) is ${k < 0 ? 'not a G1 joint' : 'named twice'}`);
    seen.add(n);
    map[c] = k;
  });
  if (names.length !== G1_NUM_JOINTS)
    throw new InputError(
      { file, key },
      `${names.length} joints named, the G1 has ${G1_NUM_JOINTS}: missing ${G1_JOINT_NAMES.filter((n) => !seen.has(n)).join(', ')}`,
    );
  return map;
}

/** frames × 29 values with columns named `names` → a new array in canonical order. */
export function reorderNamedColumns(
  values: Float64Array,
  frames: number,
  names: readonly string[],
  file: string,
  key: string,
): Float64Array {
  const map = canonicalIndexOfColumns(names, file, key);
  const J = map.length;
  const out = new Float64Array(frames * J);
  for (let f = 0; f < frames; f++) for (let c = 0; c < J; c++) out[f * J + map[c]] = values[f * J + c];
  return out;
}
