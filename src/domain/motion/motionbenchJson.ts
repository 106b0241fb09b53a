// Our own clip format, `motionbench-clip/1`:
// {
//   "format": "motionbench-clip/1",
//   "name": "walk1",                      (optional; the file name without extension otherwise)
//   "fps": 30,
//   "capability_group": "locomotion",     (optional)
//   "joint_order": [29 canonical joint names, in canonical order],
//   "frames": {
//     "root_pos_m":     [[x, y, z], ...],
//     "root_quat_wxyz": [[w, x, y, z], ...],
//     "joint_pos_rad":  [[29 angles], ...]
//   }
// }
// Other top-level keys are ignored. Syntax errors are reported with line and column; content
// errors with the key path (e.g. `frames.joint_pos_rad[12][3]`). Before JSON.parse runs, the
// arrays, objects and values the text would make are counted and their estimated heap bounded
// (checkJsonParseCost): a small document of `[],` repeated cannot cost gigabytes.

import { InputError } from '../problems';
import { G1_JOINT_NAMES, G1_NUM_JOINTS } from '../robot/g1Joints';
import {
  boundProblem,
  checkFrameCount,
  checkInputSize,
  checkNotUtf16,
  clipNameFromFile,
  finalizeClip,
  MAX_INPUT_BYTES,
  quatNormProblem,
  resolveStatedFps,
  type DecodeOptions,
} from './clipCommon';
import type { CapabilityGroup, MotionClip } from './motionClip';

export const MOTIONBENCH_CLIP_FORMAT = 'motionbench-clip/1';
const CAPABILITY_GROUPS: readonly CapabilityGroup[] = [
  'upper_body',
  'locomotion',
  'in_place',
  'dynamic',
  'low_posture',
];

// ---------------------------------------------------------------------------------------------
// Syntax error location. JSON.parse does the parsing; when it fails, this scanner finds where.

export interface JsonSyntaxError {
  offset: number;
  line: number;
  column: number;
  message: string;
}

/** Finds the first JSON syntax error in `text` (null when it is valid JSON). */
export function locateJsonSyntaxError(text: string): JsonSyntaxError | null {
  let i = 0;
  const n = text.length;
  class Stop extends Error {
    constructor(
      readonly at: number,
      readonly why: string,
    ) {
      super(why);
    }
  }
  const fail = (why: string, at = i): never => {
    throw new Stop(at, why);
  };
  const describe = (at: number) => (at >= n ? 'end of input' : `'${text[at]}'`);
  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else return;
    }
  };
  const digits = () => {
    const s = i;
    while (i < n && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
    return i - s;
  };
  const value = (depth: number): void => {
    if (depth > 1000) fail('nesting is too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a property name in double quotes, found ${describe(i)}`);
        string();
        ws();
        if (text[i] !== ':') fail(`expected ':' after a property name, found ${describe(i)}`);
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail(`expected ',' or '}' in an object, found ${describe(i)}`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail(`expected ',' or ']' in an array, found ${describe(i)}`);
      }
    }
    if (c === '"') return string();
    if (c === '-' || (c >= '0' && c <= '9')) {
      if (c === '-') i++;
      if (text[i] === '0') i++;
      else if (digits() === 0) fail(`expected a digit, found ${describe(i)}`);
      if (text[i] === '.') {
        i++;
        if (digits() === 0) fail(`expected a digit after '.', found ${describe(i)}`);
      }
      if (text[i] === 'e' || text[i] === 'E') {
        i++;
        if (text[i] === '+' || text[i] === '-') i++;
        if (digits() === 0) fail(`expected a digit in the exponent, found ${describe(i)}`);
      }
      return;
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    for (const bad of ['NaN', 'Infinity', '-Infinity']) {
      if (text.startsWith(bad, i)) fail(`${bad} is not valid JSON (non-finite numbers are not allowed)`);
    }
    fail(`unexpected ${describe(i)}, expected a value`);
  };
  const string = (): void => {
    const start = i;
    i++;
    for (;;) {
      if (i >= n) fail('unterminated string', start);
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail('control character in a string (unescaped newline?)');
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('bad \\u escape');
          i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) fail(`bad escape '\\${e ?? ''}'`);
        i += 2;
        continue;
      }
      i++;
    }
  };
  try {
    value(0);
    ws();
    if (i < n) fail(`unexpected ${describe(i)} after the end of the JSON value`);
    return null;
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    const at = Math.min(e.at, n);
    let line = 1;
    let lineStart = 0;
    for (let k = 0; k < at; k++) {
      if (text.charCodeAt(k) === 0x0a) {
        line++;
        lineStart = k + 1;
      }
    }
    return { offset: at, line, column: at - lineStart + 1, message: e.why };
  }
}

/** Estimated heap bytes per array or object JSON.parse makes (object header, elements store, slot in its parent). */
const JSON_CONTAINER_COST_BYTES = 64;
/** Estimated heap bytes per value JSON.parse makes (a slot, or a boxed double). */
const JSON_VALUE_COST_BYTES = 16;
/**
 * Most heap a clip document's parse may be estimated to take: twice the largest file read. A real
 * clip, ~20 characters per number and three arrays per frame, estimates at about its own size;
 * a document of `[],` or `0,` repeated estimates at 20× or 8× its size, and is refused unparsed.
 */
export const JSON_PARSE_BUDGET_BYTES = 2 * MAX_INPUT_BYTES;

/**
 * Arrays/objects and values a JSON text would make, counted in one pass over its characters
 * (brackets and commas outside strings; values = commas + containers + 1, an upper bound).
 */
export function jsonParseCount(text: string): { containers: number; values: number } {
  let containers = 0;
  let commas = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) containers++;
    else if (c === 0x2c) commas++;
  }
  return { containers, values: commas + containers + 1 };
}

/** Refuses a document whose parse is estimated past JSON_PARSE_BUDGET_BYTES, before JSON.parse runs. */
export function checkJsonParseCost(text: string, file: string): void {
  const { containers, values } = jsonParseCount(text);
  const cost = containers * JSON_CONTAINER_COST_BYTES + values * JSON_VALUE_COST_BYTES;
  if (cost > JSON_PARSE_BUDGET_BYTES)
    throw new InputError(
      { file },
      `the document holds ${containers} arrays/objects and up to ${values} values: parsed, it would take about ${(cost / 1048576).toFixed(0)} MiB, more than the ${JSON_PARSE_BUDGET_BYTES / 1048576} MiB budget (a clip holds 3 arrays and 36 numbers per frame)`,
    );
}

/** JSON.parse with InputError (file, line, column) on a syntax error. */
export function parseJsonText(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const loc = locateJsonSyntaxError(text);
    if (loc) throw new InputError({ file, line: loc.line, column: loc.column }, `invalid JSON: ${loc.message}`);
    throw new InputError({ file }, `invalid JSON: ${(err as Error).message}`);
  }
}

// ---------------------------------------------------------------------------------------------

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const typeName = (v: unknown) =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'an array'
      : typeof v === 'object'
        ? 'an object'
        : `${typeof v} ${JSON.stringify(v)}`;

function checkJointOrder(order: unknown, file: string): void {
  const key = 'joint_order';
  if (!Array.isArray(order))
    throw new InputError(
      { file, key },
      `must be an array of the ${G1_NUM_JOINTS} canonical G1 joint names, found ${typeName(order)}`,
    );
  order.forEach((v, i) => {
    if (typeof v !== 'string')
      throw new InputError({ file, key: `${key}[${i}]` }, `must be a joint name string, found ${typeName(v)}`);
  });
  const names = order as string[];
  const canonical: readonly string[] = G1_JOINT_NAMES;
  const unknown = names.filter((n) => !canonical.includes(n));
  if (unknown.length > 0) {
    throw new InputError(
      { file, key },
      `unknown joint name${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `'${n}'`).join(', ')}; expected the ${G1_NUM_JOINTS} canonical G1 joints`,
    );
  }
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new InputError({ file, key }, `joint '${dup}' is listed twice`);
  if (names.length !== G1_NUM_JOINTS) {
    const missing = canonical.filter((n) => !names.includes(n));
    throw new InputError(
      { file, key },
      `has ${names.length} joints, expected ${G1_NUM_JOINTS}; missing: ${missing.join(', ')}`,
    );
  }
  const moved = names.map((n, i) => ({ n, i, c: canonical.indexOf(n) })).filter((m) => m.i !== m.c);
  if (moved.length > 0) {
    const remap = moved.map((m) => `[${m.i}] ${m.n} → canonical [${m.c}]`).join(', ');
    throw new InputError(
      { file, key },
      `is a permutation of the canonical G1 joint order, not the canonical order itself; joint columns are not reordered implicitly. Remap (file index → canonical index): ${remap}. Rewrite the file in canonical order (src/domain/robot/g1Joints.ts)`,
    );
  }
}

function readRows(
  frames: Record<string, unknown>,
  name: string,
  width: number,
  file: string,
  expectN: number | undefined,
  bound?: 'root_pos' | 'joint_pos',
): Float64Array {
  const key = `frames.${name}`;
  const rows = frames[name];
  if (!Array.isArray(rows))
    throw new InputError(
      { file, key },
      `must be an array of frames ([${width} numbers] each), found ${rows === undefined ? 'nothing' : typeName(rows)}`,
    );
  if (expectN !== undefined && rows.length !== expectN) {
    throw new InputError({ file, key }, `has ${rows.length} frames but frames.root_pos_m has ${expectN}`);
  }
  const out = new Float64Array(rows.length * width);
  for (let k = 0; k < rows.length; k++) {
    const r = rows[k];
    if (!Array.isArray(r) || r.length !== width) {
      throw new InputError(
        { file, key: `${key}[${k}]` },
        `must be an array of ${width} numbers, found ${Array.isArray(r) ? `${r.length} values` : typeName(r)}`,
      );
    }
    for (let c = 0; c < width; c++) {
      const v = r[c];
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        throw new InputError({ file, key: `${key}[${k}][${c}]` }, `must be a finite number, found ${typeName(v)}`);
      }
      const absurd = bound ? boundProblem(bound, v) : null;
      if (absurd) throw new InputError({ file, key: `${key}[${k}][${c}]` }, absurd);
      out[k * width + c] = v;
    }
  }
  return out;
}

/** Decodes a `motionbench-clip/1` JSON document (bytes or text). */
export function decodeMotionbenchJson(input: Uint8Array | string, options: DecodeOptions): MotionClip {
  const { file } = options;
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  checkInputSize(bytes, file);
  checkNotUtf16(bytes, file);
  let text = typeof input === 'string' ? input : new TextDecoder('utf-8').decode(bytes);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  checkJsonParseCost(text, file);
  const doc = parseJsonText(text, file);
  if (!isObject(doc))
    throw new InputError(
      { file },
      `expected a JSON object with "format": "${MOTIONBENCH_CLIP_FORMAT}", found ${typeName(doc)}`,
    );
  if (doc.format !== MOTIONBENCH_CLIP_FORMAT) {
    throw new InputError(
      { file, key: 'format' },
      `${doc.format === undefined ? 'is missing' : `${typeName(doc.format)} is not supported`}; expected "${MOTIONBENCH_CLIP_FORMAT}"`,
    );
  }
  let name = clipNameFromFile(file);
  if (doc.name !== undefined) {
    if (typeof doc.name !== 'string' || doc.name.trim() === '')
      throw new InputError({ file, key: 'name' }, `must be a non-empty string, found ${typeName(doc.name)}`);
    name = doc.name;
  }
  let fileFps: number | undefined;
  if (doc.fps !== undefined) {
    if (typeof doc.fps !== 'number')
      throw new InputError({ file, key: 'fps' }, `must be a number, found ${typeName(doc.fps)}`);
    fileFps = doc.fps;
  }
  const { fps, fpsSource } = resolveStatedFps(fileFps, options, { file, key: 'fps' });
  let capabilityGroup: CapabilityGroup | undefined;
  if (doc.capability_group !== undefined && doc.capability_group !== null) {
    if (!CAPABILITY_GROUPS.includes(doc.capability_group as CapabilityGroup)) {
      throw new InputError(
        { file, key: 'capability_group' },
        `${typeName(doc.capability_group)} is not one of ${CAPABILITY_GROUPS.join(', ')}`,
      );
    }
    capabilityGroup = doc.capability_group as CapabilityGroup;
  }
  checkJointOrder(doc.joint_order, file);
  const frames = doc.frames;
  if (!isObject(frames))
    throw new InputError(
      { file, key: 'frames' },
      `must be an object with root_pos_m, root_quat_wxyz and joint_pos_rad, found ${frames === undefined ? 'nothing' : typeName(frames)}`,
    );
  const rootPosM = readRows(frames, 'root_pos_m', 3, file, undefined, 'root_pos');
  const N = rootPosM.length / 3;
  checkFrameCount(N, { file, key: 'frames.root_pos_m' });
  const rootQuatWxyz = readRows(frames, 'root_quat_wxyz', 4, file, N);
  const jointPosRad = readRows(frames, 'joint_pos_rad', G1_NUM_JOINTS, file, N, 'joint_pos');
  for (let k = 0; k < N; k++) {
    const problem = quatNormProblem(rootQuatWxyz, k * 4);
    if (problem) throw new InputError({ file, key: `frames.root_quat_wxyz[${k}]` }, problem);
  }
  return finalizeClip(
    {
      name,
      format: 'motionbench-json',
      fps,
      fpsSource,
      frameCount: N,
      rootPosM,
      rootQuatWxyz,
      jointPosRad,
      ...(capabilityGroup ? { capabilityGroup } : {}),
    },
    bytes,
    options,
  );
}

/**
 * Encodes a clip as `motionbench-clip/1` JSON, one frame per line. Numbers are written with the
 * shortest text that reads back to the same float64, so decoding gives the same clip id.
 */
export function encodeClipJson(clip: MotionClip): string {
  const J = G1_NUM_JOINTS;
  const rows = (a: Float64Array, w: number) => {
    const out: string[] = [];
    for (let k = 0; k < clip.frameCount; k++)
      out.push('      ' + JSON.stringify(Array.from(a.subarray(k * w, k * w + w))));
    return '[\n' + out.join(',\n') + '\n    ]';
  };
  const head: string[] = [
    `  "format": ${JSON.stringify(MOTIONBENCH_CLIP_FORMAT)}`,
    `  "name": ${JSON.stringify(clip.name)}`,
    `  "fps": ${JSON.stringify(clip.fps)}`,
  ];
  if (clip.capabilityGroup) head.push(`  "capability_group": ${JSON.stringify(clip.capabilityGroup)}`);
  head.push(`  "joint_order": ${JSON.stringify(G1_JOINT_NAMES)}`);
  head.push(
    '  "frames": {\n' +
      `    "root_pos_m": ${rows(clip.rootPosM, 3)},\n` +
      `    "root_quat_wxyz": ${rows(clip.rootQuatWxyz, 4)},\n` +
      `    "joint_pos_rad": ${rows(clip.jointPosRad, J)}\n` +
      '  }',
  );
  return '{\n' + head.join(',\n') + '\n}\n';
}
