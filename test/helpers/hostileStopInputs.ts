// The hostile inputs of the STOP-latency test under hostile input (test/integration/
// hostStopHostile.test.ts), one generator per class, each the minimal form of what a hostile lab
// file or a hostile robot sends:
//
//   C1  a ROS 2 robot whose /lowstate definition ends with `uint8 pad a` + 900,000 spaces + `\`
//       (a quadratic line regex in a message-definition parser);
//   C2  a ROS 2 robot whose LowState ends with `Z[1000000000] pad`, Z holding only `float32[0]`
//       (a billion zero-size elements per message);
//   C3  a BeyondMimic ONNX (the released Waltz.onnx) whose `joint_names` metadata is replaced by a
//       scaled-down huge value (the 300 MB original is too big for CI; this one still costs seconds);
//   M2  a ProtoMotions .motion whose tensors have zero strides and claim 2 M frames (< 1 KiB);
//   M3  a ProtoMotions .motion whose data.pkl is 16 MiB of EMPTY_DICT;
//   a huge mesh: the Menagerie G1 (linked from ../shared/data, never copied) with one STL replaced
//       by a file just under MAX_MESH_FILE_BYTES (robot.getMesh reads, encodes and serializes it);
//   a tampered campaign: a campaign.sqlite whose one workload snapshot record is a valid JSON
//       document of tens of MB (every board read of the campaign parses it).
//
// The hostile ROS 2 robot runs in a process of its own: test/helpers/hostileRobotChild.ts.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MAX_MESH_FILE_BYTES } from '../../src/api/contract';
import { openCampaign } from '../../src/services/trace';
import { pickleDict, torchZipBytes, type TensorSpec } from '../unit/peerMotionTestHelpers';
import { lowStateDefinitionText, startRos2LowStateBridge, UNITREE_MSG_DIR } from './ros2LowStateBridge';
import { MENAGERIE_G1, REPO_ROOT, sharedData } from './sharedData';

export const HOSTILE_ROBOT_CHILD = path.join(REPO_ROOT, 'test/helpers/hostileRobotChild.ts');

// ---------------------------------------------------------------- ROS 2 definitions (C1, C2)

/** Spaces between `uint8 pad a` and the trailing backslash of C1's line. */
export const C1_PAD_SPACES = 900_000;
/** The element count C2 declares for its zero-size type. */
export const C2_ELEMENTS = 1_000_000_000;

const lowStateText = (): string => fs.readFileSync(`${UNITREE_MSG_DIR}/LowState.msg`, 'utf8');

/** C1: the real LowState definition with one more line, `uint8 pad a` + 900,000 spaces + `\`. */
export function c1Definition(): string {
  return lowStateDefinitionText({ LowState: `${lowStateText()}\nuint8 pad a${' '.repeat(C1_PAD_SPACES)}\\\n` });
}

/** C2: the real LowState definition ending with `Z[1000000000] pad`, where Z holds only `float32[0]`. */
export function c2Definition(): string {
  const base = lowStateDefinitionText({ LowState: `${lowStateText()}\nZ[${C2_ELEMENTS}] pad\n` });
  return `${base}\n${'='.repeat(80)}\nMSG: unitree_hg/msg/Z\nfloat32[0] nothing\n`;
}

// ---------------------------------------------------------------- ONNX policy (C3)

const BEYONDMIMIC_ONNX = sharedData('policies', 'beyondmimic', 'Waltz.onnx');

function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}

function readVarint(b: Uint8Array, at: number): [number, number] {
  let v = 0;
  let mul = 1;
  for (;;) {
    const byte = b[at++];
    v += (byte & 0x7f) * mul;
    if (byte < 0x80) return [v, at];
    mul *= 0x80;
  }
}

/** A length-delimited protobuf field (wire type 2). */
function lenField(field: number, payload: Uint8Array): Uint8Array {
  const head = Uint8Array.from([...varint((field << 3) | 2), ...varint(payload.length)]);
  const out = new Uint8Array(head.length + payload.length);
  out.set(head);
  out.set(payload, head.length);
  return out;
}

/** The key (field 1) of a StringStringEntryProto. */
function entryKey(entry: Uint8Array): string | null {
  let at = 0;
  while (at < entry.length) {
    const [tag, a] = readVarint(entry, at);
    if ((tag & 7) !== 2) return null;
    const [len, b] = readVarint(entry, a);
    if (tag >>> 3 === 1) return Buffer.from(entry.subarray(b, b + len)).toString('utf8');
    at = b + len;
  }
  return null;
}

/** Characters of C3's joint_names value (the original was ~300 MB). */
export const C3_JOINT_NAMES_CHARS = 48 * 1024 * 1024;

/**
 * C3: the released BeyondMimic Waltz.onnx with its `joint_names` metadata replaced by
 * `left_hip_pitch_joint,` repeated to `chars` characters (every other top-level field verbatim).
 */
export function c3Onnx(chars = C3_JOINT_NAMES_CHARS): Uint8Array {
  const real = new Uint8Array(fs.readFileSync(BEYONDMIMIC_ONNX));
  const parts: Uint8Array[] = [];
  let at = 0;
  while (at < real.length) {
    const start = at;
    const [tag, a] = readVarint(real, at);
    const wire = tag & 7;
    if (wire === 0) at = readVarint(real, a)[1];
    else if (wire === 2) {
      const [len, b] = readVarint(real, a);
      at = b + len;
      if (tag >>> 3 === 14 && entryKey(real.subarray(b, at)) === 'joint_names') continue;
    } else if (wire === 5) at = a + 4;
    else if (wire === 1) at = a + 8;
    else throw new Error(`${BEYONDMIMIC_ONNX}: unexpected wire type ${wire} at byte ${start}`);
    parts.push(real.subarray(start, at));
  }
  const name = 'left_hip_pitch_joint,';
  const value = name.repeat(Math.ceil(chars / name.length)).slice(0, chars);
  const entry = Buffer.concat([lenField(1, Buffer.from('joint_names')), lenField(2, Buffer.from(value))]);
  parts.push(lenField(14, entry));
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------- ProtoMotions .motion (M2, M3)

/** Frames M2's tensors claim. */
export const M2_FRAMES = 2_000_000;

/** M2: dof_pos, rigid_body_pos and rigid_body_rot of shape [2 M, …] with every stride 0 (storage of one element). */
export function m2Motion(): Uint8Array {
  const t = (key: string, shape: number[], value: number): TensorSpec => ({
    key,
    storage: [value],
    shape,
    stride: shape.map(() => 0),
  });
  const tensors = {
    dof_pos: t('0', [M2_FRAMES, 29], 0),
    rigid_body_pos: t('2', [M2_FRAMES, 33, 3], 0.8),
    rigid_body_rot: t('3', [M2_FRAMES, 33, 4], 0.5),
  };
  return torchZipBytes('hostile', pickleDict({ fps: 30, ...tensors }), Object.values(tensors));
}

/** EMPTY_DICT opcodes in M3's pickle: with PROTO 2 and STOP, exactly the 16 MiB a pickle may have. */
export const M3_EMPTY_DICTS = 16 * 1024 * 1024 - 3;

/** M3: a torch archive whose data.pkl is PROTO 2, EMPTY_DICT (`}`) to 16 MiB, STOP. */
export function m3Motion(): Uint8Array {
  const pickle = new Uint8Array(2 + M3_EMPTY_DICTS + 1);
  pickle.set([0x80, 2]);
  pickle.fill(0x7d, 2, 2 + M3_EMPTY_DICTS);
  pickle[pickle.length - 1] = 0x2e;
  return torchZipBytes('hostile', pickle, []);
}

// ---------------------------------------------------------------- huge mesh

/** The mesh asset the huge-mesh model makes huge. */
export const HUGE_MESH_NAME = 'head_link';

/**
 * The Menagerie G1 in `dir`: its g1.xml copied, every mesh a symbolic link to the shared data's,
 * but head_link.STL, a file of MAX_MESH_FILE_BYTES − 1 KiB. Returns the model file.
 */
export function hugeMeshModel(dir: string): string {
  const from = path.dirname(MENAGERIE_G1);
  fs.mkdirSync(path.join(dir, 'assets'), { recursive: true });
  fs.copyFileSync(MENAGERIE_G1, path.join(dir, 'g1.xml'));
  for (const f of fs.readdirSync(path.join(from, 'assets'))) {
    const to = path.join(dir, 'assets', f);
    if (f === `${HUGE_MESH_NAME}.STL`) fs.writeFileSync(to, Buffer.alloc(MAX_MESH_FILE_BYTES - 1024, 7));
    else fs.symlinkSync(path.join(from, 'assets', f), to);
  }
  return path.join(dir, 'g1.xml');
}

// ---------------------------------------------------------------- tampered campaign

/** Numbers in the tampered campaign's snapshot record (`[1,1,…]`, two bytes each). */
export const TAMPERED_SNAPSHOT_NUMBERS = 24_000_000;

/**
 * A campaign at `dir` (created here) whose one workload snapshot record_json is
 * {"clips":[],"pad":[1,1,…]} with `numbers` entries: valid JSON (the table's json_valid check
 * holds), tens of MB, parsed by every read of the board (qualification.report, gap.*).
 */
export async function tamperedCampaign(dir: string, numbers = TAMPERED_SNAPSHOT_NUMBERS): Promise<void> {
  const store = await openCampaign(dir, { create: true, name: 'tampered' });
  store.close();
  const db = new Database(path.join(dir, 'campaign.sqlite'));
  try {
    const record = `{"clips":[],"pad":[${'1,'.repeat(numbers - 1)}1]}`;
    db.prepare(
      `INSERT INTO workload_snapshots (snapshot_hash, id, version, source, format, record_json, created_at)
       VALUES (?, 'tampered', '1', 'builtin', 'motionbench-workload/1', ?, '2026-12-06T00:00:00Z')`,
    ).run('f'.repeat(64), record);
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------- the hostile robot, as a process

export async function serveHostileRobot(which: string): Promise<void> {
  const definition = which === 'c1' ? c1Definition() : which === 'c2' ? c2Definition() : null;
  if (!definition) throw new Error(`ros2-robot c1|c2, not ${which}`);
  // Advertises the hostile definition; writes real LowState samples (the hostile part is the advertisement).
  const bridge = await startRos2LowStateBridge({ definition, writeDefinition: lowStateDefinitionText(), rateHz: 100 });
  process.stdout.write(`${JSON.stringify({ url: bridge.url })}\n`);
  process.once('SIGTERM', () => void bridge.stop().finally(() => process.exit(0)));
}
