import { onPush } from '../api/pushRouter';
import { onQualificationProgress } from '../qualification/qualificationActions';
import { SIM_PUSH_TYPES, handleSimPush } from '../sim/simPushes';
import { TRIAL_PUSH_TYPES, handleTrialEvent } from '../trial/trialPushes';

// The features that handle pushes, signed up to the push registry (api/pushRouter.ts):
// qualification progress to the Qualification board, simulation frames and ends to the Sim trial
// panel and the overlay, interlock, calibration, trial and live-robot pushes to the Trial runner,
// the Calibration panel and the live robot.

/** Signs every feature up; returns the sign-off of all of them. */
export function signUpFeaturePushes(): () => void {
  const offs = [
    onPush(['qualification.progress'], onQualificationProgress),
    onPush(SIM_PUSH_TYPES, handleSimPush),
    onPush(TRIAL_PUSH_TYPES, handleTrialEvent),
  ];
  return () => {
    for (const off of offs) off();
  };
}
