// One row of the Trial runner's queue: a decided qualification pair (binding × clip, no
// calibration) with its latest admission decision and how far the matched sim/real pair started
// for it has got. The services build it from the campaign (src/services/trial/admittedPairs.ts);
// the console API carries it as is (AdmittedPairDto); only admitted pairs can run.

export interface AdmittedPair {
  /** The qualification parent trace id: the pair's id for `motionbench trial --pair`. */
  pairId: string;
  clipId: string;
  clipName: string;
  bindingKey: string;
  /**
   * What people read (src/domain/wbc/bindingName.ts), e.g. "builtin@pd1-… · assist 3000 N/m":
   * tells two builtin bindings apart; the key when the binding is not stored.
   */
  bindingName: string;
  bindingLabel: string;
  contractId: string;
  admitted: boolean;
  /** Why it was not admitted (empty when admitted). */
  reasons: string[];
  decidedAt: string;
  /** Workload snapshot the decision was made on (from the decision's evidence), if recorded. */
  snapshotHash: string | null;
  /** The matched pair (a parent trace with a calibration) started for it, if any. */
  matched: MatchedProgress | null;
}

export interface MatchedProgress {
  parentTraceId: string;
  calibrationId: string;
  simDone: boolean;
  /** Real trials that ended with an outcome that counts (anything but infrastructure_error). */
  realDone: number;
  remaining: number;
}
