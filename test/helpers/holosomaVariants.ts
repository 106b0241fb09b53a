// Variants of the released holosoma whole-body-tracking export with its metadata edited: the
// ModelProto's fields are copied byte for byte except metadata_props (field 14), whose entries
// are re-encoded after the edit (a removed key, a changed value). The graph, its weights and its
// baked motion are the released file's, so a variant runs exactly as the release does.
// Written into a folder the caller owns; ../shared/data is only read.

import fs from 'node:fs';
import path from 'node:path';
import { ProtoWriter } from './onnxBuilder';
import { sharedData } from './sharedData';

export const HOLOSOMA_WBT = sharedData('policies/holosoma_wbt_locomotion/model_39999.onnx');

const METADATA_PROPS = 14;

function readVarint(b: Uint8Array, at: number): [value: number, next: number] {
  let v = 0;
  let mul = 1;
  for (let i = at; i < b.length; i++) {
    v += (b[i] & 0x7f) * mul;
    if (b[i] < 0x80) return [v, i + 1];
    mul *= 0x80;
  }
  throw new Error('truncated varint');
}

/** The key/value of one StringStringEntryProto { key = 1, value = 2 }. */
function readEntry(b: Uint8Array): [string, string] {
  let key = '';
  let value = '';
  for (let at = 0; at < b.length;) {
    const [tag, p] = readVarint(b, at);
    if (tag % 8 !== 2) throw new Error(`unexpected wire type in a metadata entry: ${tag % 8}`);
    const [len, q] = readVarint(b, p);
    const s = new TextDecoder().decode(b.subarray(q, q + len));
    if (tag >> 3 === 1) key = s;
    else if (tag >> 3 === 2) value = s;
    at = q + len;
  }
  return [key, value];
}

/**
 * The released export with its metadata_props replaced by `edit(metadata)` (in the file's key
 * order; keys the edit adds go last).
 */
export function holosomaBytesWith(edit: (m: Record<string, string>) => Record<string, string>): Uint8Array {
  const b = new Uint8Array(fs.readFileSync(HOLOSOMA_WBT));
  const kept: Uint8Array[] = [];
  const meta: Record<string, string> = {};
  for (let at = 0; at < b.length;) {
    const start = at;
    const [tag, p] = readVarint(b, at);
    const wire = tag % 8;
    let end: number;
    if (wire === 0) end = readVarint(b, p)[1];
    else if (wire === 2) {
      const [len, q] = readVarint(b, p);
      end = q + len;
      if (tag >> 3 === METADATA_PROPS) {
        const [k, v] = readEntry(b.subarray(q, end));
        meta[k] = v;
        at = end;
        continue;
      }
    } else if (wire === 5) end = p + 4;
    else if (wire === 1) end = p + 8;
    else throw new Error(`unexpected wire type ${wire} at byte ${start}`);
    kept.push(b.subarray(start, end));
    at = end;
  }
  const w = new ProtoWriter();
  for (const [k, v] of Object.entries(edit({ ...meta })))
    w.message(METADATA_PROPS, new ProtoWriter().string(1, k).string(2, v));
  const tail = w.finish();
  const out = new Uint8Array(kept.reduce((a, c) => a + c.length, 0) + tail.length);
  let o = 0;
  for (const c of kept) {
    out.set(c, o);
    o += c.length;
  }
  out.set(tail, o);
  return out;
}

export function writeHolosomaVariant(
  file: string,
  edit: (m: Record<string, string>) => Record<string, string>,
): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, holosomaBytesWith(edit));
  return file;
}

/** The export without experiment_config: dof_names, kp, kd (and the rest) only. */
export const withoutExperimentConfig = (m: Record<string, string>): Record<string, string> => {
  delete m.experiment_config;
  return m;
};
