// Re-freezes core-v1: regenerates every clip on our G1 and compares with the frozen manifest
// (assets/workloads/core-v1.json). Without --write it only reports; with --write it rewrites the
// manifest. Run deliberately (docs/WORKLOAD.md, "Freezing and re-freezing"):
//
//   npx tsx src/services/workload/refreezeCoreV1.ts           # compare, exit 1 on a difference
//   npx tsx src/services/workload/refreezeCoreV1.ts --write   # write the manifest
//
// A frozen snapshot that results already name must not change: publish a new version instead.

import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { generateCoreV1 } from '../../domain/workload/coreV1';
import { snapshotDifferences, type WorkloadSnapshot } from '../../domain/workload/snapshot';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../robot/loadRobotProfile';
import { CORE_V1_MANIFEST_FILE, frozenDocument, readFrozenCoreV1 } from './coreV1Frozen';

/** Compares (and with `write` rewrites) the frozen manifest; returns the differences found. */
export function refreezeCoreV1(
  write: boolean,
  manifestFile = CORE_V1_MANIFEST_FILE,
  log: (s: string) => void = (s) => process.stderr.write(s + '\n'),
): string[] {
  const generated = generateCoreV1(loadRobotProfile(DEFAULT_MODEL_FILE));
  let differences: string[];
  if (fs.existsSync(manifestFile)) {
    const frozen = readFrozenCoreV1(manifestFile);
    differences = snapshotDifferences(frozen as unknown as WorkloadSnapshot, generated.snapshot);
  } else {
    differences = [`${manifestFile} does not exist yet`];
  }
  if (differences.length === 0) {
    log(
      `core-v1: ${generated.clips.length} clips, snapshot_hash ${generated.snapshot.snapshot_hash} — matches ${manifestFile}`,
    );
    return differences;
  }
  for (const d of differences) log(`  - ${d}`);
  if (!write) {
    log(
      `core-v1 differs from ${manifestFile} (${differences.length} differences). Nothing written; pass --write to re-freeze.`,
    );
    return differences;
  }
  const doc = frozenDocument(generated.snapshot);
  fs.writeFileSync(manifestFile, JSON.stringify(doc, null, 2) + '\n');
  log(
    `core-v1 re-frozen: ${generated.clips.length} clips, snapshot_hash ${doc.snapshot_hash} written to ${manifestFile}`,
  );
  return differences;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const write = process.argv.includes('--write');
  const diffs = refreezeCoreV1(write);
  process.exitCode = diffs.length > 0 && !write ? 1 : 0;
}
