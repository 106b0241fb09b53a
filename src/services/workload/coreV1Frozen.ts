// The frozen core-v1 snapshot (assets/workloads/core-v1.json) and the check that the generator
// still produces it, bit for bit. See docs/WORKLOAD.md ("Freezing and re-freezing").

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { sha256Hex } from '../../domain/hash/sha256';
import { InputError, inputErrorFromIssues } from '../../domain/problems';
import { CORE_V1_ID, CORE_V1_VERSION, generateCoreV1, type GeneratedCoreV1 } from '../../domain/workload/coreV1';
import {
  CAPABILITY_GROUPS,
  snapshotDifferences,
  WORKLOAD_HASH_SCHEME,
  WORKLOAD_SNAPSHOT_FORMAT,
  type WorkloadSnapshot,
} from '../../domain/workload/snapshot';
import { readBoundedFile, readBoundedText } from '../files/boundedRead';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../robot/loadRobotProfile';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The frozen manifest of core-v1. */
export const CORE_V1_MANIFEST_FILE = path.resolve(here, '../../../assets/workloads/core-v1.json');
/** How to re-freeze, for messages. */
export const REFREEZE_COMMAND = 'npx tsx src/services/workload/refreezeCoreV1.ts --write';

const frozenSchema = z.strictObject({
  format: z.literal(WORKLOAD_SNAPSHOT_FORMAT),
  id: z.string().min(1),
  version: z.string().min(1),
  source: z.literal('builtin'),
  hash_scheme: z.literal(WORKLOAD_HASH_SCHEME),
  snapshot_hash: z.string().regex(/^[0-9a-f]{64}$/),
  frozen_with: z.strictObject({
    node: z.string(),
    v8: z.string(),
    model_file: z.string(),
    model_sha256: z.string(),
  }),
  clips: z.array(
    z.strictObject({
      id: z.string(),
      name: z.string(),
      group: z.enum(CAPABILITY_GROUPS as [string, ...string[]]),
      duration_s: z.number(),
      frames: z.int(),
      fps: z.number(),
    }),
  ),
});

export type FrozenSnapshotFile = z.infer<typeof frozenSchema>;

/** Reads and validates the frozen manifest. */
export function readFrozenCoreV1(file = CORE_V1_MANIFEST_FILE): FrozenSnapshotFile {
  let text: string;
  try {
    text = readBoundedText(file, 'json');
  } catch (e) {
    if (e instanceof InputError)
      throw new InputError({ file }, `cannot read the frozen core-v1 manifest (${e.reason})`);
    throw new InputError(
      { file },
      `cannot read the frozen core-v1 manifest (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); create it with: ${REFREEZE_COMMAND}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new InputError({ file }, `not valid JSON (${(e as Error).message})`);
  }
  const r = frozenSchema.safeParse(json);
  if (!r.success) {
    throw inputErrorFromIssues(file, r.error.issues);
  }
  return r.data;
}

/** The manifest document for a generated core-v1 (what refreezeCoreV1 writes). */
export function frozenDocument(snapshot: WorkloadSnapshot, modelFile = DEFAULT_MODEL_FILE): FrozenSnapshotFile {
  return {
    format: WORKLOAD_SNAPSHOT_FORMAT,
    id: snapshot.id,
    version: snapshot.version,
    source: 'builtin',
    hash_scheme: WORKLOAD_HASH_SCHEME,
    snapshot_hash: snapshot.snapshot_hash,
    frozen_with: {
      node: process.version,
      v8: process.versions.v8,
      model_file: path.relative(path.resolve(here, '../../..'), modelFile).split(path.sep).join('/'),
      model_sha256: fileSha256(modelFile),
    },
    clips: snapshot.clips.map(({ id, name, group, duration_s, frames, fps }) => ({
      id,
      name,
      group,
      duration_s,
      frames,
      fps,
    })),
  };
}

function fileSha256(file: string): string {
  try {
    return sha256Hex(readBoundedFile(file, 'mjcf'));
  } catch {
    return 'unreadable';
  }
}

/** Thrown when the generator no longer reproduces the frozen snapshot. */
export class FrozenSnapshotMismatchError extends Error {
  override readonly name = 'FrozenSnapshotMismatchError';
  constructor(
    readonly differences: string[],
    message: string,
  ) {
    super(message);
  }
}

/** Explains a mismatch: what differs, with which engine and model it was frozen, and what to do. */
export function mismatchMessage(
  frozen: FrozenSnapshotFile,
  differences: string[],
  modelFile = DEFAULT_MODEL_FILE,
  manifestFile = CORE_V1_MANIFEST_FILE,
): string {
  const shown = differences.slice(0, 12);
  const more = differences.length - shown.length;
  const modelNow = fileSha256(modelFile);
  const lines = [
    `${frozen.id}: the generated clips differ from the frozen snapshot ${manifestFile} (${differences.length} difference${differences.length === 1 ? '' : 's'}):`,
    ...shown.map((d) => `  - ${d}`),
    ...(more > 0 ? [`  … and ${more} more`] : []),
    `Frozen with Node ${frozen.frozen_with.node} (V8 ${frozen.frozen_with.v8}) on ${frozen.frozen_with.model_file} (sha256 ${frozen.frozen_with.model_sha256.slice(0, 12)}…); running Node ${process.version} (V8 ${process.versions.v8}) on model sha256 ${modelNow.slice(0, 12)}…${modelNow === frozen.frozen_with.model_sha256 ? ' (same model)' : ' (the model file changed)'}.`,
    'Clips are bit-identical only for the same generator code (src/domain/workload), robot model and JavaScript engine: Math.sin/cos/atan2 may round differently in another V8.',
    `Results name the snapshot they ran on, so a frozen snapshot must not change silently. If the change is intended, publish it as a new snapshot version (e.g. core-v2); only if ${frozen.id} was never used for results, re-freeze it deliberately with: ${REFREEZE_COMMAND}`,
  ];
  return lines.join('\n');
}

export interface LoadCoreV1Options {
  /** Compare with the frozen manifest and throw FrozenSnapshotMismatchError on a difference (default true). */
  verify?: boolean;
  manifestFile?: string;
}

/** Generates core-v1 on our G1 and checks it against the frozen manifest. */
export function loadCoreV1(options: LoadCoreV1Options = {}): GeneratedCoreV1 {
  const generated = generateCoreV1(loadRobotProfile(DEFAULT_MODEL_FILE));
  if (options.verify ?? true) {
    const manifestFile = options.manifestFile ?? CORE_V1_MANIFEST_FILE;
    const frozen = readFrozenCoreV1(manifestFile);
    const differences = snapshotDifferences(frozen as unknown as WorkloadSnapshot, generated.snapshot);
    if (frozen.id !== CORE_V1_ID || frozen.version !== CORE_V1_VERSION) {
      differences.unshift(
        `the manifest is ${frozen.id} version ${frozen.version}, the generator makes ${CORE_V1_ID} version ${CORE_V1_VERSION}`,
      );
    }
    if (differences.length > 0)
      throw new FrozenSnapshotMismatchError(
        differences,
        mismatchMessage(frozen, differences, DEFAULT_MODEL_FILE, manifestFile),
      );
  }
  return generated;
}
