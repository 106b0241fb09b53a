import { create } from 'zustand';
import type { InterlockStatusDto, RobotLinkStatusDto } from '../../../src/api/contract';
import type { SchedulerFacts } from '../../../src/domain/timing/timingHealth';

// The lights' state (DESIGN §6): the interlock box and the robot links as the 5 Hz safety.status
// push last gave them (src/services/console/trialJobs.ts), with when it arrived — the lights go grey
// when pushes stop (safety/lightViews.ts). Also set at once by the interlock row's own calls.

export interface SafetyState {
  interlock: InterlockStatusDto | null;
  robots: RobotLinkStatusDto[];
  /** The services' host scheduler settings; null before the first push. */
  host: SchedulerFacts | null;
  /** Renderer clock (performance.now) when the last safety.status arrived; null before any. */
  receivedAtMs: number | null;
}

export const useSafetyStore = create<SafetyState>(() => ({
  interlock: null,
  robots: [],
  host: null,
  receivedAtMs: null,
}));
