import { onPush } from '../api/pushRouter';
import { onQualificationProgress } from '../qualification/qualificationActions';
import { writeLiveFrames } from '../robot/liveStreams';
import { SIM_PUSH_TYPES, handleSimPush } from '../sim/simPushes';
import { TRIAL_PUSH_TYPES, handleTrialEvent } from '../trial/trialPushes';

// The features that handle pushes, signed up to the push registry (api/pushRouter.ts):
// qualification progress to the Qualification board, simulation frames and ends to the Sim trial
// panel and the overlay, interlock, calibration and trial pushes (the trial's live stream
// included) to the Trial runner and the Calibration panel, and a robot's idle live pose to its
// connection's live store, which the live robot model draws.

/** Signs every feature up; returns the sign-off of all of them. */
export function signUpFeaturePushes(): () => void {
  const offs = [
    onPush(['qualification.progress'], onQualificationProgress),
    onPush(SIM_PUSH_TYPES, handleSimPush),
    onPush(TRIAL_PUSH_TYPES, handleTrialEvent),
    onPush(['live.frames/robot_idle'], writeLiveFrames),
  ];
  return () => {
    for (const off of offs) off();
  };
}
