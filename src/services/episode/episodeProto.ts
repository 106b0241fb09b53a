import protobuf from 'protobufjs';
// Installs Root.toDescriptor / Root.fromDescriptor (the CommonJS module exports a namespace
// instance, so it is imported for its effect, which works the same under Node's ESM and vitest).
import 'protobufjs/ext/descriptor.js';

// The protobuf schemas of `motionbench-episode/2` (episodeSchemas.ts), as the .proto text they
// are defined in and as the FileDescriptorSet stored in each file's Schema records (MCAP schema
// encoding "protobuf": the binary FileDescriptorSet, schema name = the message's full name), so a
// reader needs nothing but the file (Foxglove, Lichtblick, `protobufjs` from the descriptor).
//
// Field names are snake_case with their units, as the JSON episodes' camelCase names
// (rootPosM ↔ root_pos_m; protobufjs decodes them to the camelCase names again). Every array is a
// packed repeated field; an empty one stands for the JSON episodes' null (no root pose, no gains).
// Joint order is the canonical G1 order (29 joints), quaternions w, x, y, z, as in the JSON files.
//
// Two executed-state messages, chosen per episode by the recorder (episodeWriter.ts):
//   StateFrame  — every value a double: simulator episodes (MuJoCo's state is double).
//   RobotState  — the measured joints and IMU as float32, which is what a Unitree G1 publishes
//                 (unitree_hg/msg/MotorState q, dq, tau_est and IMUState are `float32`): half the
//                 bytes, and exact for a robot's lowstate. A frame with a measured value that is
//                 not exactly a float32 (a bridge that computed it in double) also carries
//                 `exact`, the whole frame as a StateFrame: nothing is lost; readers take `exact`
//                 when present.

export const EPISODE_PROTO = `syntax = "proto3";
package motionbench;

message Imu {
  repeated double quat_wxyz = 1;
  repeated double gyro_rad_s = 2;
  repeated double accel_m_s2 = 3;
}

message ImuF32 {
  repeated float quat_wxyz = 1;
  repeated float gyro_rad_s = 2;
  repeated float accel_m_s2 = 3;
}

message Contact {
  string body = 1;
  string other = 2;
  double force_n = 3;
}

// Present (possibly empty) when the backend reports contacts; absent when it cannot know them.
message Contacts {
  repeated Contact items = 1;
}

message StateFrame {
  double time_s = 1;
  int64 tick = 2;
  optional int32 reference_frame = 3;
  repeated double root_pos_m = 4;
  repeated double root_quat_wxyz = 5;
  repeated double joint_pos_rad = 6;
  repeated double joint_vel_rad_s = 7;
  repeated double joint_tau_nm = 8;
  Imu imu = 9;
  Contacts contacts = 10;
  repeated double root_lin_vel_mps = 11;
  repeated double root_ang_vel_rad_s = 12;
}

message RobotState {
  double time_s = 1;
  int64 tick = 2;
  optional int32 reference_frame = 3;
  repeated double root_pos_m = 4;
  repeated double root_quat_wxyz = 5;
  repeated float joint_pos_rad = 6;
  repeated float joint_vel_rad_s = 7;
  repeated float joint_tau_nm = 8;
  ImuF32 imu = 9;
  Contacts contacts = 10;
  repeated double root_lin_vel_mps = 11;
  repeated double root_ang_vel_rad_s = 12;
  StateFrame exact = 13;
}

message ReferenceFrame {
  double time_s = 1;
  int32 frame = 2;
  repeated double root_pos_m = 3;
  repeated double root_quat_wxyz = 4;
  repeated double joint_pos_rad = 5;
}

message Wrench {
  repeated double force_n = 1;
  repeated double torque_nm = 2;
}

message Command {
  double time_s = 1;
  int32 frame = 2;
  repeated double joint_target_rad = 3;
  repeated double kp = 4;
  repeated double kd = 5;
  Wrench root_assist_wrench = 6;
}

message LiveMetrics {
  double time_s = 1;
  int32 frame = 2;
  optional double mpjpe_l_mm = 3;
  optional double joint_rmse_rad = 4;
  optional int32 first_failure_frame = 5;
}
`;

/** The parsed schemas (protobufjs reflection). */
export const EPISODE_PROTO_ROOT: protobuf.Root = protobuf.parse(EPISODE_PROTO, { keepCase: false }).root;
EPISODE_PROTO_ROOT.resolveAll();

export type EpisodeProtoMessage = 'StateFrame' | 'RobotState' | 'ReferenceFrame' | 'Command' | 'LiveMetrics';

export const protoType = (name: EpisodeProtoMessage): protobuf.Type =>
  EPISODE_PROTO_ROOT.lookupType(`motionbench.${name}`);

/** The binary FileDescriptorSet of EPISODE_PROTO: the Schema record's data for every protobuf topic. */
export const EPISODE_DESCRIPTOR_SET: Uint8Array = (() => {
  const set = protobuf.parse(EPISODE_PROTO, { keepCase: true }).root.toDescriptor('proto3');
  return set.$type.encode(set).finish();
})();

/**
 * The message types of a Schema record's FileDescriptorSet, by full name: how a reader decodes a
 * protobuf channel from the file alone (names kept as in the file; camelCase on decode).
 */
export function typeFromDescriptorSet(data: Uint8Array, fullName: string): protobuf.Type {
  const root = protobuf.Root.fromDescriptor(data);
  root.resolveAll();
  return root.lookupType(fullName);
}
