import { useCalibrationStore } from '../calibration/calibrationStore';
import { useGapReviewStore } from '../gap/gapStore';
import { useRunStore } from '../overlay/runStore';
import { qualificationReplayRunId } from '../qualification/qualificationFormat';
import { useQualificationStore } from '../qualification/qualificationStore';
import { emptyTrialLive, trialLiveStore, useTrialStore } from '../trial/trialStore';

// What panels show belongs to a selection: the pair picked in the Trial runner, the runs drawn in
// the viewport. When the selection changes, what described the previous one is cleared here, in
// the stores, so no panel shows a previous pair's or clip's figures under the new
// one:
//   - another pair picked in the Trial runner: the calibration capture (its residuals are against
//     the previous pair's clip) and its accepted id; the ended job of the previous pair, with its
//     live readings and error. A running job stays: it is what the robot is doing.
//   - the runs of a replay no longer drawn (another clip loaded, another replay, the runs
//     removed): the Qualification board's and Gap review's replay line and legend, and their
//     selected cell or row unless that replay is the one loading now.

/** Starts the resets; returns a function that stops them. */
export function startSelectionResets(): () => void {
  const offPair = useTrialStore.subscribe((s, prev) => {
    if (s.selectedPairId === prev.selectedPairId) return;
    const cal = useCalibrationStore.getState();
    if (cal.result !== null || cal.acceptedId !== null || cal.stillness !== null)
      useCalibrationStore.setState({ result: null, acceptedId: null, ...(!cal.running && { stillness: null }) });
    if (s.job && s.job.state !== 'running' && s.job.pairId !== s.selectedPairId) {
      useTrialStore.setState({ job: null, error: null });
      trialLiveStore.setState((l) => ({ ...emptyTrialLive(), revision: l.revision + 1 }));
    }
  });
  const offRuns = useRunStore.subscribe((s) => {
    const drawn = new Set(s.runs.map((r) => r.id));
    const gap = useGapReviewStore.getState();
    if (gap.replay && !gap.replay.runs.some((r) => drawn.has(r.id)))
      useGapReviewStore.setState({ replay: null, ...(!gap.replaying && { selected: null }) });
    const qual = useQualificationStore.getState();
    if (qual.replay && !drawn.has(qualificationReplayRunId(qual.replay.runId)))
      useQualificationStore.setState({ replay: null, ...(!qual.replaying && { selected: null }) });
  });
  return () => {
    offPair();
    offRuns();
  };
}
