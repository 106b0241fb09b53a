// Parent-trace inputs from the objects a pipeline holds (binding, clip, robot profile, contract):
// the clip's full content hash, the model file's sha256 and the contract's body set, so callers
// do not assemble identities by hand.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { MetricContract } from '../../domain/metrics/metricContract';
import type { MotionClip } from '../../domain/motion/motionClip';
import { InputError } from '../../domain/problems';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { bodySetOf, clipContentSha256, DEFAULT_ADAPTER_VERSION } from '../../domain/trace/parentTrace';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import { readBoundedFile } from '../files/boundedRead';
import type { ParentTraceInputs } from './campaignStore';
import { fromFsError, TraceStoreError } from './errors';

const fileHashes = new Map<string, { size: number; mtimeMs: number; sha256: string }>();

/** sha256 of a file's bytes (cached per path while its size and mtime stay the same). */
export function fileSha256(file: string): string {
  try {
    const st = fs.statSync(file);
    const hit = fileHashes.get(file);
    if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return hit.sha256;
    const sha256 = createHash('sha256').update(readBoundedFile(file, 'hashed')).digest('hex');
    fileHashes.set(file, { size: st.size, mtimeMs: st.mtimeMs, sha256 });
    return sha256;
  } catch (err) {
    if (err instanceof InputError)
      throw new TraceStoreError('invalid', file, `cannot hash ${file}: ${err.reason}`, { cause: err });
    throw fromFsError(err, file, 'cannot hash');
  }
}

const clipHashes = new WeakMap<MotionClip, string>();

export interface PairInputs {
  binding: WbcBinding;
  clip: MotionClip;
  profile: RobotProfile;
  contract: Pick<MetricContract, 'id'>;
  /** null for qualification. */
  calibrationId?: string | null;
  adapterVersion?: string;
  /** sha256 of the model file when already known (default: hash profile.sourceFile). */
  modelSha256?: string;
}

export function parentTraceInputs(p: PairInputs): ParentTraceInputs {
  let ref = clipHashes.get(p.clip);
  if (!ref) clipHashes.set(p.clip, (ref = clipContentSha256(p.clip)));
  return {
    binding: p.binding,
    clipId: p.clip.id,
    referenceSha256: ref,
    modelSha256: p.modelSha256 ?? fileSha256(p.profile.sourceFile),
    adapterVersion: p.adapterVersion ?? DEFAULT_ADAPTER_VERSION,
    bodySet: bodySetOf(p.profile),
    contractId: p.contract.id,
    calibrationId: p.calibrationId ?? null,
  };
}
