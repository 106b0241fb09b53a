import { InputError, type InputLocation } from '../problems';
import { QUAT_IDENTITY, quatFromAxisAngle, quatFromMat3, quatMul, quatNormalize } from '../math/quat';
import type { QuatWxyz, Vec3M } from '../units';
import type { XmlElement } from '../xml/parseXml';

// Reading MJCF attributes: numbers and vectors with located errors, paths, the <compiler> and
// <option> settings the reader honours, and every orientation form (quat, axisangle, euler,
// xyaxes, zaxis).

export const dirname = (p: string): string => {
  const k = p.lastIndexOf('/');
  return k < 0 ? '.' : k === 0 ? '/' : p.slice(0, k);
};
export const joinPath = (dir: string, rel: string): string =>
  rel.startsWith('/') ? rel : dir === '.' ? rel : `${dir}/${rel}`;

export const where = (el: XmlElement, key?: string): InputLocation => ({
  file: el.file,
  line: el.line,
  column: el.column,
  ...(key ? { key } : {}),
});

export interface Compiler {
  degrees: boolean;
  eulerseq: string;
  meshdir: string;
  autolimits: boolean;
}

/** The <compiler> settings (angle unit, euler sequence, mesh folder, autolimits), later elements winning. */
export function readCompiler(root: XmlElement): Compiler {
  const compiler: Compiler = { degrees: true, eulerseq: 'xyz', meshdir: '', autolimits: true };
  for (const c of root.children.filter((e) => e.name === 'compiler')) {
    if (c.attrs.angle !== undefined) {
      if (c.attrs.angle !== 'radian' && c.attrs.angle !== 'degree')
        throw new InputError(where(c, 'angle'), `angle must be "radian" or "degree", not "${c.attrs.angle}"`);
      compiler.degrees = c.attrs.angle === 'degree';
    }
    if (c.attrs.eulerseq !== undefined) compiler.eulerseq = c.attrs.eulerseq;
    if (c.attrs.assetdir !== undefined) compiler.meshdir = c.attrs.assetdir;
    if (c.attrs.meshdir !== undefined) compiler.meshdir = c.attrs.meshdir;
    if (c.attrs.autolimits !== undefined) compiler.autolimits = c.attrs.autolimits === 'true';
  }
  return compiler;
}

/** The physics timestep of <option>, s (MuJoCo's default 0.002 when none is given). */
export function readTimestepS(root: XmlElement): number {
  let timestepS = 0.002;
  for (const o of root.children.filter((e) => e.name === 'option')) {
    if (o.attrs.timestep !== undefined) timestepS = num(o, 'timestep', o.attrs.timestep);
  }
  return timestepS;
}

export function orientation(el: XmlElement, attrs: Record<string, string>, compiler: Compiler): QuatWxyz {
  const forms = ['quat', 'axisangle', 'euler', 'xyaxes', 'zaxis'].filter((k) => attrs[k] !== undefined);
  if (forms.length > 1) throw new InputError(where(el), `more than one orientation given (${forms.join(', ')})`);
  const angle = (v: number): number => (compiler.degrees ? (v * Math.PI) / 180 : v);
  if (attrs.quat !== undefined) {
    const q = vecN(el, 'quat', attrs.quat, 4);
    if (Math.hypot(...q) === 0) throw new InputError(where(el, 'quat'), 'quaternion is zero');
    return quatNormalize(q);
  }
  if (attrs.axisangle !== undefined) {
    const a = vecN(el, 'axisangle', attrs.axisangle, 4);
    return quatFromAxisAngle(unit(el, 'axisangle', [a[0], a[1], a[2]]), angle(a[3]));
  }
  if (attrs.euler !== undefined) {
    const e = vecN(el, 'euler', attrs.euler, 3);
    const seq = compiler.eulerseq;
    if (!/^[xyzXYZ]{3}$/.test(seq))
      throw new InputError(where(el), `compiler eulerseq "${seq}" is not three of x, y, z`);
    let q: QuatWxyz = QUAT_IDENTITY;
    for (let k = 0; k < 3; k++) {
      const ax = seq[k].toLowerCase();
      const axis: Vec3M = ax === 'x' ? [1, 0, 0] : ax === 'y' ? [0, 1, 0] : [0, 0, 1];
      const r = quatFromAxisAngle(axis, angle(e[k]));
      // lowercase: axes move with the frame (post-multiply); uppercase: fixed axes.
      q = seq[k] === ax ? quatMul(q, r) : quatMul(r, q);
    }
    return quatNormalize(q);
  }
  if (attrs.xyaxes !== undefined) {
    const a = vecN(el, 'xyaxes', attrs.xyaxes, 6);
    const x = unit(el, 'xyaxes', [a[0], a[1], a[2]]);
    const d = x[0] * a[3] + x[1] * a[4] + x[2] * a[5];
    const y = unit(el, 'xyaxes', [a[3] - d * x[0], a[4] - d * x[1], a[5] - d * x[2]]);
    const z: Vec3M = [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]];
    return quatFromMat3([x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2]]);
  }
  if (attrs.zaxis !== undefined) return quatFromZ(unit(el, 'zaxis', vec3(el, 'zaxis', attrs.zaxis)));
  return QUAT_IDENTITY;
}

export function num(el: XmlElement, key: string, s: string): number {
  const v = Number(s);
  if (s.trim() === '' || !Number.isFinite(v)) throw new InputError(where(el, key), `"${s}" is not a finite number`);
  return v;
}
export function vecN(el: XmlElement, key: string, s: string, n: number): number[] {
  const parts = s.trim().split(/\s+/);
  if (parts.length !== n) throw new InputError(where(el, key), `expected ${n} numbers, found ${parts.length} ("${s}")`);
  return parts.map((p) => num(el, key, p));
}
export function vec3(el: XmlElement, key: string, s: string): Vec3M {
  return vecN(el, key, s, 3) as unknown as Vec3M;
}
export function unit(el: XmlElement, key: string, v: readonly number[]): Vec3M {
  const n = Math.hypot(v[0], v[1], v[2]);
  if (!(n > 1e-12)) throw new InputError(where(el, key), 'axis has zero length');
  return [v[0] / n, v[1] / n, v[2] / n];
}
/** Minimal rotation taking +z to the unit vector z (MuJoCo's zaxis and fromto convention). */
export function quatFromZ(z: Vec3M): QuatWxyz {
  const d = z[2];
  if (d > 1 - 1e-12) return QUAT_IDENTITY;
  if (d < -1 + 1e-12) return [0, 1, 0, 0];
  const axis: Vec3M = [-z[1], z[0], 0];
  const n = Math.hypot(axis[0], axis[1]);
  return quatFromAxisAngle([axis[0] / n, axis[1] / n, 0], Math.acos(Math.max(-1, Math.min(1, d))));
}
