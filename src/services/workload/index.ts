export { loadWorkload, BUILTIN_WORKLOADS, type LoadWorkloadOptions } from './loadWorkload';
export {
  loadFolderWorkload,
  validateWorkloadManifest,
  workloadManifestSchema,
  WorkloadInputError,
  WORKLOAD_MANIFEST_FILE,
  type WorkloadManifest,
} from './folderWorkload';
export {
  CORE_V1_MANIFEST_FILE,
  FrozenSnapshotMismatchError,
  loadCoreV1,
  readFrozenCoreV1,
  REFREEZE_COMMAND,
} from './coreV1Frozen';
