// Hostile inputs (files a command must never overwrite, inputs that must fail with a clear
// reason), for test/unit/mjcfHostile.test.ts, test/unit/motionHostile.test.ts and
// test/integration/cliHostileInputs.test.ts. First virtual MJCF
// models ({path: text}, read through readMjcf's readText; writeFiles() puts them on disk): nesting
// deep enough to overflow a recursive reader, includes that multiply, nest or loop. Then files on
// disk: UTF-16 and absurd clips, a model with a missing mesh, symlink loops in a workload folder.
// (The hostile files of items 4–6 — devices, FIFOs, ZIP bombs — are in hostileFiles.ts.)

import fs from 'node:fs';
import path from 'node:path';
import { encodeClipJson } from '../../src/domain/motion/motionbenchJson';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { OUR_G1, sharedData } from './sharedData';

export interface VirtualModel {
  files: Record<string, string>;
  entry: string;
}

/** `<mujoco>` with `n` nested `<a>` elements, all on line 1. */
export function deeplyNestedXml(n: number): string {
  return `<mujoco>${'<a>'.repeat(n)}${'</a>'.repeat(n)}</mujoco>`;
}

/** An MJCF whose worldbody holds `n` nested bodies, on line 3 from column 1. */
export function deeplyNestedBodies(n: number): string {
  return `<mujoco>\n<worldbody>\n${'<body>'.repeat(n)}${'</body>'.repeat(n)}\n</worldbody>\n</mujoco>\n`;
}

/**
 * models/outer.xml nests `n` bodies and includes models/inner.xml inside the innermost one, which
 * nests `n` more (line 2): each file is within MAX_XML_DEPTH, the expanded model is not.
 */
export function deepAcrossIncludes(n: number): VirtualModel {
  const outer = `<mujoco>\n<worldbody>\n${'<body>'.repeat(n)}<include file="inner.xml"/>${'</body>'.repeat(n)}\n</worldbody>\n</mujoco>\n`;
  const inner = `<mujoco>\n${'<body>'.repeat(n)}${'</body>'.repeat(n)}\n</mujoco>\n`;
  return { files: { 'models/outer.xml': outer, 'models/inner.xml': inner }, entry: 'models/outer.xml' };
}

/** models/inc0.xml includes inc1.xml `fanout` times (lines 2…, column 3), which includes inc2.xml `fanout` times, … `levels` deep. */
export function exponentialIncludes(levels: number, fanout: number): VirtualModel {
  const files: Record<string, string> = {};
  for (let l = 0; l < levels; l++) {
    files[`models/inc${l}.xml`] = `<mujoco>\n${`  <include file="inc${l + 1}.xml"/>\n`.repeat(fanout)}</mujoco>\n`;
  }
  files[`models/inc${levels}.xml`] = '<mujoco>\n  <worldbody/>\n</mujoco>\n';
  return { files, entry: 'models/inc0.xml' };
}

/** models/c0.xml includes c1.xml (line 2, column 3), which includes c2.xml, … up to c`n`.xml. */
export function includeChain(n: number): VirtualModel {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[`models/c${i}.xml`] = `<mujoco>\n  <include file="c${i + 1}.xml"/>\n</mujoco>\n`;
  files[`models/c${n}.xml`] = '<mujoco>\n  <worldbody/>\n</mujoco>\n';
  return { files, entry: `models/c${0}.xml` };
}

/** models/a.xml includes b.xml, which includes a.xml again spelled ./a.xml (line 4, column 3). */
export function includeCycle(): VirtualModel {
  return {
    files: {
      'models/a.xml': '<mujoco>\n  <include file="b.xml"/>\n</mujoco>\n',
      'models/b.xml':
        '<mujoco>\n  <!-- b includes a, spelled differently -->\n  <worldbody/>\n  <include file="./a.xml"/>\n</mujoco>\n',
    },
    entry: 'models/a.xml',
  };
}

// ---- hostile files on disk: UTF-16 and absurd clips, a model with a
// missing mesh, symlink loops in a workload folder. Used by test/unit/motionHostile.test.ts and
// test/integration/cliHostileInputs.test.ts.

/** A small valid clip (the first `frames` frames of LAFAN1 walk1, 30 fps), as CSV text. */
export function realCsvText(frames = 31): string {
  return (
    fs
      .readFileSync(sharedData('motions/lafan1_g1_csv/walk1_subject1.csv'), 'utf8')
      .split('\n')
      .slice(0, frames)
      .join('\n') + '\n'
  );
}

/** `text` encoded as UTF-16: little-endian with its BOM (FF FE), big-endian with its BOM (FE FF), or little-endian without a BOM. */
export function utf16Bytes(text: string, form: 'le-bom' | 'be-bom' | 'le-no-bom'): Uint8Array {
  const le = Buffer.from(text, 'utf16le');
  if (form === 'le-no-bom') return new Uint8Array(le);
  if (form === 'le-bom') return new Uint8Array(Buffer.concat([Buffer.from([0xff, 0xfe]), le]));
  const be = Buffer.from(le);
  be.swap16();
  return new Uint8Array(Buffer.concat([Buffer.from([0xfe, 0xff]), be]));
}

/** CSV text with field `column` (1-based) of line `line` (1-based) replaced by `value`. */
export function csvWithField(text: string, line: number, column: number, value: string): string {
  const lines = text.split('\n');
  const fields = lines[line - 1].split(',');
  fields[column - 1] = value;
  lines[line - 1] = fields.join(',');
  return lines.join('\n');
}

/** A motionbench-clip/1 JSON document of `clip` with `edit` applied to the parsed document. */
export function clipJsonWith(
  clip: MotionClip,
  edit: (doc: {
    fps: unknown;
    frames: { root_pos_m: unknown[][]; root_quat_wxyz: unknown[][]; joint_pos_rad: unknown[][] };
  }) => void,
): string {
  const doc = JSON.parse(encodeClipJson(clip)) as Parameters<typeof edit>[0];
  edit(doc);
  return JSON.stringify(doc);
}

/** Writes a virtual model ({path: text}, '/'-separated relative paths) under `root`; returns the absolute path of its entry. */
export function writeFiles(root: string, model: VirtualModel): string {
  for (const [name, text] of Object.entries(model.files)) {
    const p = path.join(root, ...name.split('/'));
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
  }
  return path.join(root, ...model.entry.split('/'));
}

/**
 * Our G1 scene copied into `dir`, with an included file `extra_assets.xml` that declares a mesh
 * whose file does not exist. Returns the model file, the included file, the line of the <mesh>
 * there and the mesh path MuJoCo would look for.
 */
export function modelWithMissingMesh(dir: string): {
  model: string;
  included: string;
  meshLine: number;
  meshFile: string;
} {
  fs.mkdirSync(dir, { recursive: true });
  const text = fs.readFileSync(OUR_G1, 'utf8');
  const at = text.indexOf('<asset>');
  if (at < 0) throw new Error(`${OUR_G1} has no <asset> to put the include beside`);
  const model = path.join(dir, 'g1.xml');
  fs.writeFileSync(model, `${text.slice(0, at)}<include file="extra_assets.xml"/>\n  ${text.slice(at)}`);
  const included = path.join(dir, 'extra_assets.xml');
  fs.writeFileSync(
    included,
    '<mujoco>\n  <asset>\n    <mesh name="ghost" file="meshes/ghost_link.stl"/>\n  </asset>\n</mujoco>\n',
  );
  return { model, included, meshLine: 3, meshFile: path.join(dir, 'meshes/ghost_link.stl') };
}

/**
 * A workload folder with one listed CSV clip and symbolic links that lead back into it (`loop ->
 * .`, `sub/up -> ..`) and out of it (`outside -> <outsideDir>`, a folder holding clips that are
 * not listed). Returns the folder and the link paths.
 */
export function workloadWithSymlinkLoops(
  root: string,
  csvText: string,
  outsideDir: string,
): { dir: string; loop: string; up: string; outside: string } {
  const dir = path.join(root, 'lab-set');
  fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'walk.csv'), csvText);
  fs.writeFileSync(
    path.join(dir, 'workload.json'),
    JSON.stringify({ id: 'lab-set', version: '1', clips: { 'walk.csv': { group: 'locomotion', fps: 30 } } }),
  );
  fs.mkdirSync(outsideDir, { recursive: true });
  for (let k = 0; k < 5; k++) fs.writeFileSync(path.join(outsideDir, `stray${k}.csv`), csvText);
  const loop = path.join(dir, 'loop');
  const up = path.join(dir, 'sub', 'up');
  const outside = path.join(dir, 'outside');
  fs.symlinkSync('.', loop);
  fs.symlinkSync('..', up);
  fs.symlinkSync(outsideDir, outside);
  return { dir, loop, up, outside };
}
