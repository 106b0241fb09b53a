import { pause } from '../playback/playback';
import { stopAllSimRuns } from '../sim/simActions';
import { recordOperatorStop, type StopSource } from '../stores/operatorStore';

/**
 * The operator's STOP (button, Space, Escape): stops every simulation run in the services
 * (sim.stop all), pauses playback and records the event. Later: stop/damp every robot backend.
 */
export function operatorStop(source: StopSource): void {
  stopAllSimRuns(source);
  pause();
  recordOperatorStop(source);
}
