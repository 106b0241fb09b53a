/** Short column names of the readings (by JSON name) where a table or a chart axis is narrow. */
export const READING_SHORT_NAMES: Readonly<Record<string, string>> = {
  sr: 'SR',
  progress_soft: 'progress',
  mpjpe_l_mm: 'MPJPE-l',
  joint_pos_rmse: 'q RMSE',
  joint_vel_rmse: 'q̇ RMSE',
  joint_acc_rms: 'q̈ RMS',
  joint_acc_p95: 'q̈ P95',
  joint_jerk_rms: 'jerk RMS',
  joint_jerk_p95: 'jerk P95',
};
