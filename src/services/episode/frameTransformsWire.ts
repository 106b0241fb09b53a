import type { BodyFrameTree } from '../../domain/robot/bodyTransforms';

// foxglove.FrameTransforms written straight into bytes: one robot's tree per frame is the bulk of
// an episode's encoding (30 transforms, two trees, 50–500 frames a second), and a general
// protobuf encoder spends most of it re-encoding the same frame names as UTF-8. Here the names'
// bytes are encoded once per tree and the numbers written in place.
//
// The bytes are the ones protobufjs writes from Foxglove's schema for the same message
// (test/unit/frameTransformsWire.test.ts compares them), field for field:
//   FrameTransforms { repeated FrameTransform transforms = 1 }
//   FrameTransform  { Timestamp timestamp = 1; string parent_frame_id = 2; string child_frame_id = 3;
//                     Vector3 translation = 4; Quaternion rotation = 5 }
//   Timestamp { int64 seconds = 1; int32 nanos = 2 }
//   Vector3 { double x = 1, y = 2, z = 3 };  Quaternion { double x = 1, y = 2, z = 3, w = 4 }
// A zero number is left out (proto3: a reader reads it as 0; -0 too), an all-zero vector or time
// is an empty message, never a missing one.

const LEN = 2;
const I64 = 1;
const VARINT = 0;
const tag = (field: number, wire: number): number => (field << 3) | wire;

/** Bytes of a varint of a non-negative integer up to 2^53. */
function varintSize(v: number): number {
  let n = 1;
  while (v >= 128) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

function writeVarint(buf: Uint8Array, at: number, v: number): number {
  while (v >= 128) {
    buf[at++] = (v % 128) | 128;
    v = Math.floor(v / 128);
  }
  buf[at++] = v;
  return at;
}

/** The frame id of body `name` in the tree `prefix` (e.g. "exec/pelvis"). */
export const bodyFrameId = (prefix: string, name: string): string => `${prefix}/${name}`;

/** Per tree, per (prefix, root parent): each transform's encoded parent and child fields. */
const nameFields = new WeakMap<BodyFrameTree, Map<string, Uint8Array[]>>();

function encodedNames(tree: BodyFrameTree, prefix: string, rootParent: string): Uint8Array[] {
  let byKey = nameFields.get(tree);
  if (!byKey) nameFields.set(tree, (byKey = new Map()));
  const key = `${prefix}\u0000${rootParent}`;
  let fields = byKey.get(key);
  if (!fields) {
    const utf8 = new TextEncoder();
    const field = (n: number, s: string): number[] => {
      const b = utf8.encode(s);
      const len = new Uint8Array(varintSize(b.length));
      writeVarint(len, 0, b.length);
      return [tag(n, LEN), ...len, ...b];
    };
    fields = tree.frames.map(
      (f) =>
        new Uint8Array([
          ...field(2, f.parent < 0 ? rootParent : bodyFrameId(prefix, tree.frames[f.parent].name)),
          ...field(3, bodyFrameId(prefix, f.name)),
        ]),
    );
    byKey.set(key, fields);
  }
  return fields;
}

/** Size of a message of doubles at consecutive field numbers, zeros left out. */
function doublesSize(v: Float64Array, from: number, order: readonly number[]): number {
  let n = 0;
  for (const k of order) if (v[from + k] !== 0) n += 9;
  return n;
}

function writeDoubles(
  buf: Uint8Array,
  view: DataView,
  at: number,
  v: Float64Array,
  from: number,
  order: readonly number[],
): number {
  for (let f = 0; f < order.length; f++) {
    const x = v[from + order[f]];
    if (x === 0) continue;
    buf[at++] = tag(f + 1, I64);
    view.setFloat64(at, x, true);
    at += 8;
  }
  return at;
}

/** Vector3 (x, y, z) from posM[3i…]; Quaternion (x, y, z, w) from the (w, x, y, z) quatWxyz[4i…]. */
const XYZ = [0, 1, 2] as const;
const QUAT_XYZW_FROM_WXYZ = [1, 2, 3, 0] as const;

/**
 * The encoded foxglove.FrameTransforms of one robot's tree at `timeNs` (each frame in its parent's
 * frame, named `<prefix>/<name>`, the root relative to `rootParent`); see the file header.
 */
export function writeFrameTransforms(
  tree: BodyFrameTree,
  prefix: string,
  rootParent: string,
  timeNs: bigint,
  posM: Float64Array,
  quatWxyz: Float64Array,
): Uint8Array {
  const seconds = Number(timeNs / 1_000_000_000n);
  const nanos = Number(timeNs % 1_000_000_000n);
  if (!(seconds >= 0 && seconds <= Number.MAX_SAFE_INTEGER))
    throw new RangeError(`frame transforms: time ${timeNs} ns is outside 0…2^53 s`);
  const names = encodedNames(tree, prefix, rootParent);
  const stampBody = (seconds ? 1 + varintSize(seconds) : 0) + (nanos ? 1 + varintSize(nanos) : 0);
  const stampField = 1 + varintSize(stampBody) + stampBody;
  const bodies = new Array<number>(names.length);
  let total = 0;
  for (let i = 0; i < names.length; i++) {
    const t = doublesSize(posM, 3 * i, XYZ);
    const r = doublesSize(quatWxyz, 4 * i, QUAT_XYZW_FROM_WXYZ);
    const body = stampField + names[i].length + 1 + varintSize(t) + t + 1 + varintSize(r) + r;
    bodies[i] = body;
    total += 1 + varintSize(body) + body;
  }
  const buf = new Uint8Array(total);
  const view = new DataView(buf.buffer);
  let at = 0;
  for (let i = 0; i < names.length; i++) {
    buf[at++] = tag(1, LEN);
    at = writeVarint(buf, at, bodies[i]);
    buf[at++] = tag(1, LEN);
    at = writeVarint(buf, at, stampBody);
    if (seconds) {
      buf[at++] = tag(1, VARINT);
      at = writeVarint(buf, at, seconds);
    }
    if (nanos) {
      buf[at++] = tag(2, VARINT);
      at = writeVarint(buf, at, nanos);
    }
    buf.set(names[i], at);
    at += names[i].length;
    buf[at++] = tag(4, LEN);
    at = writeVarint(buf, at, doublesSize(posM, 3 * i, XYZ));
    at = writeDoubles(buf, view, at, posM, 3 * i, XYZ);
    buf[at++] = tag(5, LEN);
    at = writeVarint(buf, at, doublesSize(quatWxyz, 4 * i, QUAT_XYZW_FROM_WXYZ));
    at = writeDoubles(buf, view, at, quatWxyz, 4 * i, QUAT_XYZW_FROM_WXYZ);
  }
  return buf;
}
