import { pause } from '../playback/playback';
import { cancelAllQualifications } from '../qualification/qualificationActions';
import { stopAllSimRuns } from '../sim/simActions';
import { stopAllTrials } from '../trial/trialActions';
import { recordOperatorStop, type StopSource } from '../safety/operatorStore';

/**
 * The operator's STOP (button; Escape, Space outside text fields: ./stopKeys.ts): stops every
 * real-robot trial (trial.stop all: the runner's gate sends stop + damp at once and the trial
 * ends aborted_by_operator; a calibration capture is abandoned), every simulation run (sim.stop
 * all) and every qualification run (qualification.cancel all), pauses playback and records the
 * event. The robot goes first.
 */
export function operatorStop(source: StopSource): void {
  stopAllTrials(source);
  stopAllSimRuns(source);
  cancelAllQualifications(source);
  pause();
  recordOperatorStop(source);
}
