// Trace store (DESIGN §3 Trace, §7 Storage): campaign folder, SQLite index, episode recording,
// crash recovery. See docs/TRACE_STORE.md.
export { openCampaign, CampaignStore, CAMPAIGN_DB, EPISODES_DIR } from './campaignStore';
export type {
  OpenCampaignOptions,
  BeginEpisodeRequest,
  ParentTraceInputs,
  EpisodeFilter,
  ParentTraceFilter,
  ResultFilter,
  RecoveredEpisode,
} from './campaignStore';
export { EpisodeRecorder, RECORDER_FLUSH_POLICY } from './episodeRecorder';
export type { EventOptions, FinishExtras } from './episodeRecorder';
export { TraceStoreError } from './errors';
export { CAMPAIGN_LOCK, describeHolder, otherWriterOf, writerLockHolder } from './writerLock';
export type { LockHolder } from './writerLock';
export type { TraceStoreErrorCode } from './errors';
export { LATEST_SCHEMA_VERSION, MIGRATIONS, APPLICATION_ID } from './migrations';
export { parentTraceInputs, fileSha256 } from './parentInputs';
export type { PairInputs } from './parentInputs';
