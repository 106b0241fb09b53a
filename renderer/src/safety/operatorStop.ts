import { pause } from '../playback/playback';
import { cancelAllQualifications } from '../qualification/qualificationActions';
import { stopAllSimRuns } from '../sim/simActions';
import { recordOperatorStop, type StopSource } from '../stores/operatorStore';

/**
 * The operator's STOP (button, Space, Escape): stops every simulation run in the services
 * (sim.stop all) and every qualification run (qualification.cancel all), pauses playback and records the event. Later: stop/damp every robot backend.
 */
export function operatorStop(source: StopSource): void {
  stopAllSimRuns(source);
  cancelAllQualifications(source);
  pause();
  recordOperatorStop(source);
}
