// Canonical G1 (29 DoF, rev 1.0) joint order: the Unitree SDK order, which is also the order
// of the hinge joints in MuJoCo Menagerie's g1.xml and of the 29 joint columns of LAFAN1-G1
// CSV files. Every array of 29 joint values in the program is in this order.
export const G1_JOINT_NAMES = [
  'left_hip_pitch_joint',
  'left_hip_roll_joint',
  'left_hip_yaw_joint',
  'left_knee_joint',
  'left_ankle_pitch_joint',
  'left_ankle_roll_joint',
  'right_hip_pitch_joint',
  'right_hip_roll_joint',
  'right_hip_yaw_joint',
  'right_knee_joint',
  'right_ankle_pitch_joint',
  'right_ankle_roll_joint',
  'waist_yaw_joint',
  'waist_roll_joint',
  'waist_pitch_joint',
  'left_shoulder_pitch_joint',
  'left_shoulder_roll_joint',
  'left_shoulder_yaw_joint',
  'left_elbow_joint',
  'left_wrist_roll_joint',
  'left_wrist_pitch_joint',
  'left_wrist_yaw_joint',
  'right_shoulder_pitch_joint',
  'right_shoulder_roll_joint',
  'right_shoulder_yaw_joint',
  'right_elbow_joint',
  'right_wrist_roll_joint',
  'right_wrist_pitch_joint',
  'right_wrist_yaw_joint',
] as const;

export type G1JointName = (typeof G1_JOINT_NAMES)[number];
export const G1_NUM_JOINTS = 29;

/** End-effector bodies used by the metric contract (DESIGN §3, §4). */
export const G1_END_EFFECTORS = [
  'left_ankle_roll_link',
  'right_ankle_roll_link',
  'left_wrist_yaw_link',
  'right_wrist_yaw_link',
] as const;

export const G1_ROOT_BODY = 'pelvis';
