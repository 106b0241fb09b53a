// The fields of an mb-metrics/1 JSON document as DESIGN §12 lists them: the tests' own copy of the
// published format (what a reader outside this program relies on), so it is not read from src.

/** The readings, in the document's order. */
export const MB_METRICS_1_READINGS = [
  'progress_soft',
  'mpjpe_l_mm',
  'joint_pos_rmse',
  'joint_vel_rmse',
  'joint_acc_rms',
  'joint_acc_p95',
  'joint_jerk_rms',
  'joint_jerk_p95',
] as const;

/** Every field of one episode's document, in order: the contract, the sample count, the failure, the readings. */
export const MB_METRICS_1_FIELDS: readonly string[] = ['contract', 'K', 'failed', 'failure', ...MB_METRICS_1_READINGS];
