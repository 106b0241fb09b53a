import { createHash } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { InputError, inputErrorFromIssues } from '../../domain/problems';
import { policyInterfaceProblems } from '../../domain/wbc/observationBuilder';
import type { ObservationTerm, OnnxBinding, PolicyInterface } from '../../domain/wbc/wbcBinding';
import { readBoundedFileAsync, readBoundedTextAsync } from '../files/boundedRead';

// binding.json for an `onnx` WBC binding (docs/ONNX_POLICIES.md). Validated with zod; every
// error names the file and the field path (`binding.json [interface.observation[2].frames]: …`).
// The .onnx path is relative to the json file; checkpointHash is the sha256 of its bytes.
// Whether the model's inputs/outputs match the declared interface is checked when a session is
// opened (src/services/wbc/onnxPolicySession.ts): `verifyOnnxBinding` does it right away.

export const ONNX_BINDING_FORMAT = 'motionbench-wbc-binding/1';
const JOINTS = 29;

const finite = z.number().refine(Number.isFinite, 'expected a finite number');
const nonNeg = finite.refine((v) => v >= 0, 'expected a number ≥ 0');
const perJoint = (el: z.ZodType<number>) =>
  z.union([el, z.array(el).length(JOINTS, `expected ${JOINTS} values (one per joint, canonical order)`)], {
    error: `expected a number or an array of ${JOINTS} numbers (one per joint)`,
  });
const scale = finite.default(1);

const termSchema = z.discriminatedUnion(
  'term',
  [
    z.strictObject({ term: z.literal('joint_pos_rel_default'), scale }),
    z.strictObject({ term: z.literal('joint_vel'), scale }),
    z.strictObject({ term: z.literal('base_ang_vel'), scale }),
    z.strictObject({ term: z.literal('projected_gravity'), scale }),
    z.strictObject({
      term: z.literal('reference_joint_pos'),
      frames: z.int().min(1).max(1000),
      offset: z.int().min(0).max(1000).optional(),
      scale,
    }),
    z.strictObject({ term: z.literal('last_action'), scale }),
  ],
  {
    error: () =>
      'unknown observation term; expected one of joint_pos_rel_default, joint_vel, base_ang_vel, projected_gravity, reference_joint_pos, last_action',
  },
);

const interfaceSchema = z.strictObject({
  inputName: z.string().min(1),
  outputName: z.string().min(1),
  observation: z.array(termSchema).min(1, 'declare at least one observation term'),
  actionScale: perJoint(finite),
  actionOffset: perJoint(finite).default(0),
  gains: z.strictObject({ kp: perJoint(nonNeg), kd: perJoint(nonNeg) }),
  defaultJointPosRad: z.array(finite).length(JOINTS, `expected ${JOINTS} values (canonical order)`).optional(),
  clipObservation: finite.refine((v) => v > 0, 'expected a number > 0').optional(),
  clipAction: finite.refine((v) => v > 0, 'expected a number > 0').optional(),
});

export const onnxBindingFileSchema = z.strictObject({
  format: z.literal(ONNX_BINDING_FORMAT).optional(),
  kind: z.literal('onnx'),
  id: z.string().min(1),
  version: z.string().min(1),
  label: z.string().optional(),
  controlRateHz: finite.refine((v) => v > 0, 'expected a number > 0').default(50),
  /** Path of the .onnx file, relative to the binding.json. */
  modelFile: z.string().min(1),
  /** Optional pin: when given, the .onnx bytes must hash to it. */
  checkpointHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits (sha256)')
    .optional(),
  interface: interfaceSchema,
});

export type OnnxBindingFile = z.input<typeof onnxBindingFileSchema>;

/**
 * Validates parsed binding JSON. `file` names the json in messages; `modelFile` in the result
 * is resolved against `baseDir` (the json's directory). Does not read the .onnx.
 */
export function parseOnnxBindingJson(
  json: unknown,
  file: string,
  baseDir: string,
): Omit<OnnxBinding, 'checkpointHash'> & { checkpointHash?: string } {
  const r = onnxBindingFileSchema.safeParse(json);
  if (!r.success) {
    throw inputErrorFromIssues(file, r.error.issues);
  }
  const d = r.data;
  const iface: PolicyInterface = {
    inputName: d.interface.inputName,
    outputName: d.interface.outputName,
    observation: d.interface.observation as ObservationTerm[],
    actionScale: d.interface.actionScale,
    actionOffset: d.interface.actionOffset,
    gains: { kp: d.interface.gains.kp, kd: d.interface.gains.kd },
  };
  if (d.interface.defaultJointPosRad !== undefined) iface.defaultJointPosRad = d.interface.defaultJointPosRad;
  if (d.interface.clipObservation !== undefined) iface.clipObservation = d.interface.clipObservation;
  if (d.interface.clipAction !== undefined) iface.clipAction = d.interface.clipAction;
  const problems = policyInterfaceProblems(iface, JOINTS);
  if (problems.length > 0)
    throw new InputError({ file, key: `interface.${problems[0].split(':')[0]}` }, problems.join('; '));
  return {
    kind: 'onnx',
    id: d.id,
    version: d.version,
    label: d.label ?? `ONNX policy ${d.id}`,
    controlRateHz: d.controlRateHz,
    modelFile: path.resolve(baseDir, d.modelFile),
    ...(d.checkpointHash !== undefined ? { checkpointHash: d.checkpointHash } : {}),
    interface: iface,
  };
}

/**
 * Reads and validates a binding.json, reads the .onnx it names (relative to the json) and sets
 * checkpointHash = sha256 of its bytes. Throws InputError naming the file (and field). Both are
 * regular files within FILE_LIMITS.json / FILE_LIMITS.onnxModel (src/services/files/boundedRead.ts).
 */
export async function loadOnnxBinding(file: string): Promise<OnnxBinding> {
  let text: string;
  try {
    text = await readBoundedTextAsync(file, 'json');
  } catch (e) {
    throw new InputError(
      { file },
      `cannot read the binding file (${e instanceof InputError ? e.reason : ((e as NodeJS.ErrnoException).code ?? (e as Error).message)})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new InputError({ file }, `not valid JSON (${(e as Error).message})`);
  }
  const parsed = parseOnnxBindingJson(json, file, path.dirname(path.resolve(file)));
  let bytes: Uint8Array;
  try {
    bytes = await readBoundedFileAsync(parsed.modelFile, 'onnxModel');
  } catch (e) {
    throw new InputError(
      { file, key: 'modelFile' },
      `cannot read ${parsed.modelFile} (${e instanceof InputError ? e.reason : ((e as NodeJS.ErrnoException).code ?? (e as Error).message)})`,
    );
  }
  const hash = onnxCheckpointHash(bytes);
  if (parsed.checkpointHash !== undefined && parsed.checkpointHash !== hash)
    throw new InputError(
      { file, key: 'checkpointHash' },
      `${parsed.modelFile} hashes to ${hash}, the binding pins ${parsed.checkpointHash}`,
    );
  return { ...parsed, checkpointHash: hash };
}

/** sha256 (hex) of the .onnx bytes: the binding's checkpointHash (node:crypto, same digest as domain/hash/sha256). */
export function onnxCheckpointHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
