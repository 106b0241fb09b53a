export * from './trialTypes';
export { listAdmittedPairs, type AdmittedPair } from './admittedPairs';
export { captureRobotCalibration } from './robotCalibration';
export { runMatchedPair } from './matchedTrialRunner';
