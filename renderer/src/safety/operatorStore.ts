import { create } from 'zustand';

// Operator safety events. For now STOP only records the event (and pauses playback); later
// issues bind it to the trial runner, which sends stop/damp to every backend.

export type StopSource = 'button' | 'key:Space' | 'key:Escape';

export interface OperatorStopEvent {
  kind: 'operator_stop';
  /** Wall-clock time, ms since the epoch. */
  atMs: number;
  source: StopSource;
}

export interface OperatorState {
  events: OperatorStopEvent[];
}

export const useOperatorStore = create<OperatorState>(() => ({ events: [] }));

export function recordOperatorStop(source: StopSource): OperatorStopEvent {
  const event: OperatorStopEvent = { kind: 'operator_stop', atMs: Date.now(), source };
  useOperatorStore.setState((s) => ({ events: [...s.events, event] }));
  return event;
}
