// Qualification pipeline and campaign report. See docs/QUALIFICATION.md.
export {
  runQualification,
  selectClips,
  QualificationCancelled,
  QualificationRequestError,
  type QualificationOptions,
  type QualificationProgress,
  type QualificationSummary,
  type PairOutcome,
} from './runQualification';
export {
  runRollout,
  MEASURES_EVENT_KIND,
  type RolloutContext,
  type RolloutRequest,
  type RolloutResult,
} from './rolloutRunner';
export { buildCampaignReport, formatReport, type CampaignReport, type ReportFormat } from './campaignReport';
export { modelActuatorLimits } from './modelLimits';
