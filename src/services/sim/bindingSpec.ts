// `--binding` of the simulator commands:
//   builtin                      the reference tracker with the model's servo gains, no assist
//   builtin:assist=<N/m>         … plus root assist of that stiffness (other gains by rule, see
//                                src/domain/sim/builtinBinding.ts)
//   <file.onnx|policy folder>    a released tracking policy (src/services/wbc/loadPolicy.ts)
//   <file.json>                  a binding file: `"kind": "builtin"` (below) or `"kind": "onnx"`
//                                (docs/ONNX_POLICIES.md, src/services/wbc/loadOnnxBinding.ts)
//
// Builtin binding file (format motionbench-wbc-binding/1, camelCase like the onnx kind):
// {
//   "format": "motionbench-wbc-binding/1",      (optional)
//   "kind": "builtin",
//   "id": "builtin-stiff",                      (optional, default "builtin")
//   "version": "lab-3",                         (optional prefix; the gains' fingerprint is appended)
//   "label": "stiff PD",                        (optional; "reference tracker, not a policy" is added)
//   "controlRateHz": 50,                        (optional, a multiple of 50 dividing 500)
//   "gains": { "kp": 300 | [29], "kd": 10 | [29] },      (optional; default the model's)
//   "rootAssist": { "kpNPerM": 3000, "kdNsPerM": …, "kpNmPerRad": …, "kdNmsPerRad": … }
//                                               (optional; omitted gains follow from kpNPerM)
// }

import fs from 'node:fs';
import { z } from 'zod';
import { InputError, inputErrorFromIssues } from '../../domain/problems';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../domain/sim/builtinBinding';
import type { BuiltinBinding, WbcBinding } from '../../domain/wbc/wbcBinding';
import { readBoundedText } from '../files/boundedRead';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { loadRobotProfile } from '../robot/loadRobotProfile';
import { loadOnnxBinding } from '../wbc/loadOnnxBinding';
import { isPolicySpec } from '../wbc/loadPolicy';
import { planPolicy } from '../wbc/policyRun';

const JOINTS = 29;
const finite = z.number().refine(Number.isFinite, 'expected a finite number');
const nonNeg = finite.refine((v) => v >= 0, 'expected a number ≥ 0');
const perJoint = z.union(
  [nonNeg, z.array(nonNeg).length(JOINTS, `expected ${JOINTS} values (one per joint, canonical order)`)],
  {
    error: `expected a number ≥ 0 or an array of ${JOINTS} such numbers (one per joint)`,
  },
);

export const builtinBindingFileSchema = z.strictObject({
  format: z.literal('motionbench-wbc-binding/1').optional(),
  kind: z.literal('builtin'),
  id: z.string().min(1).optional(),
  version: z.string().min(1).optional(),
  label: z.string().optional(),
  controlRateHz: finite
    .refine(
      (v) => Number.isInteger(v / 50) && v > 0 && Number.isInteger(500 / v),
      'expected a control rate that is a multiple of 50 Hz and divides 500 Hz (50, 100, 250, 500)',
    )
    .optional(),
  gains: z.strictObject({ kp: perJoint, kd: perJoint }).nullable().optional(),
  rootAssist: z
    .strictObject({
      kpNPerM: nonNeg,
      kdNsPerM: nonNeg.optional(),
      kpNmPerRad: nonNeg.optional(),
      kdNmsPerRad: nonNeg.optional(),
    })
    .nullable()
    .optional(),
});

/** Validates the JSON of a builtin binding file; errors name the file and the field. */
export function parseBuiltinBindingJson(json: unknown, file: string): BuiltinBinding {
  const r = builtinBindingFileSchema.safeParse(json);
  if (!r.success) {
    throw inputErrorFromIssues(file, r.error.issues);
  }
  const d = r.data;
  let rootAssist = null;
  if (d.rootAssist && d.rootAssist.kpNPerM > 0) {
    const rule = rootAssistFromStiffness(d.rootAssist.kpNPerM);
    rootAssist = {
      kpNPerM: d.rootAssist.kpNPerM,
      kdNsPerM: d.rootAssist.kdNsPerM ?? rule.kdNsPerM,
      kpNmPerRad: d.rootAssist.kpNmPerRad ?? rule.kpNmPerRad,
      kdNmsPerRad: d.rootAssist.kdNmsPerRad ?? rule.kdNmsPerRad,
    };
  }
  return makeBuiltinBinding({
    ...(d.id !== undefined ? { id: d.id } : {}),
    ...(d.version !== undefined ? { versionPrefix: d.version } : {}),
    ...(d.label !== undefined ? { label: d.label } : {}),
    ...(d.controlRateHz !== undefined ? { controlRateHz: d.controlRateHz } : {}),
    gains: d.gains ?? null,
    rootAssist,
  });
}

const SPEC_RE = /^builtin(?::(.*))?$/;

/**
 * Parses `builtin`, `builtin:assist=<N/m>`, a binding file, or a released policy (.onnx or policy
 * folder, read by its family's adapter; its baked clip id is computed on `profile`, default our
 * G1). Throws InputError (bad file) or Error with a one-line reason (bad spec).
 */
export async function resolveBindingSpec(spec: string, profile?: RobotProfile): Promise<WbcBinding> {
  const m = SPEC_RE.exec(spec.trim());
  if (m) {
    if (m[1] === undefined || m[1] === '') return makeBuiltinBinding();
    let assist: number | null = null;
    for (const part of m[1].split(',')) {
      const kv = /^\s*([a-z_]+)\s*=\s*(.*?)\s*$/i.exec(part);
      if (!kv) throw new BindingSpecError(`--binding ${spec}: expected builtin:assist=<N/m>, got "${part}"`);
      if (kv[1] !== 'assist')
        throw new BindingSpecError(
          `--binding ${spec}: unknown builtin option "${kv[1]}" (the only one is assist=<N/m>)`,
        );
      const v = Number(kv[2]);
      if (kv[2] === '' || !Number.isFinite(v) || v < 0 || v > 1e6)
        throw new BindingSpecError(
          `--binding ${spec}: assist must be a stiffness in N/m between 0 and 1e6, got "${kv[2]}"`,
        );
      assist = v;
    }
    return makeBuiltinBinding({ rootAssist: assist ? rootAssistFromStiffness(assist) : null });
  }
  if (isPolicySpec(spec)) return planPolicy(spec, profile ?? loadRobotProfile()).binding;
  if (!fs.existsSync(spec)) {
    throw new BindingSpecError(`--binding ${spec}: not "builtin", "builtin:assist=<N/m>" or an existing binding file`);
  }
  let json: unknown;
  try {
    json = JSON.parse(readBoundedText(spec, 'json'));
  } catch (err) {
    throw new InputError(
      { file: spec },
      `not a readable JSON binding file (${err instanceof InputError ? err.reason : (err as Error).message})`,
    );
  }
  const kind = typeof json === 'object' && json !== null ? (json as { kind?: unknown }).kind : undefined;
  if (kind === 'onnx') return loadOnnxBinding(spec);
  if (kind === 'builtin') return parseBuiltinBindingJson(json, spec);
  if (kind === 'remote')
    throw new InputError(
      { file: spec, key: 'kind' },
      'a "remote" binding runs on a remote simulator or robot; the embedded simulator cannot run it',
    );
  throw new InputError({ file: spec, key: 'kind' }, `expected "builtin" or "onnx", got ${JSON.stringify(kind)}`);
}

export class BindingSpecError extends Error {
  override readonly name = 'BindingSpecError';
}
