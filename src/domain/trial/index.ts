// The matched sim/real trial session: its rules and its pure reducer. The
// driver that runs it against the robot, the interlock, the simulator and the campaign is
// src/services/trial/matchedTrialRunner.ts. See docs/TRIALS.md.
export * from './trialChecks';
export * from './trialSessionTypes';
export * from './trialSession';
export * from './sessionBadge';
export * from './trialNumber';
export * from './afterClipWatch';
