import { pause } from '../playback/playback';
import { recordOperatorStop, type StopSource } from '../stores/operatorStore';

/** The operator's STOP: pauses playback and records the event. Later: stop/damp every backend. */
export function operatorStop(source: StopSource): void {
  pause();
  recordOperatorStop(source);
}
