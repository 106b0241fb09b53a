import { InputError } from '../problems';
import { QUAT_IDENTITY, quatMul, quatNormalize, quatRotate } from '../math/quat';
import type { QuatWxyz, Vec3M } from '../units';
import type { XmlElement } from '../xml/parseXml';
import { joinPath, num, orientation, quatFromZ, unit, vec3, vecN, where, type Compiler } from './mjcfAttributes';
import type { ResolveAttrs } from './mjcfDefaults';
import type { BodySpec, GeomSpec, GeomType } from './robotProfile';

// The body tree of an MJCF model: its assets (meshes, materials), then every body under
// <worldbody> in document order with its pose in the world, its one joint, mass and geoms, through
// any <frame>s between them. Hinges are collected with their axis and anchor in the body frame;
// which bodies make the robot is decided afterwards (mjcfReader.ts).

/** A hinge joint as found in the tree, before the joint order is checked. */
export interface HingeFound {
  name: string;
  el: XmlElement;
  bodyIndex: number;
  axis: Vec3M;
  anchorM: Vec3M;
  refRad: number;
  rangeRad: readonly [number, number] | null;
}

/** One joint of the model in document order with its qpos width, for keyframes. */
export interface QposEntry {
  kind: 'free' | 'hinge' | 'other';
  width: number;
  name: string;
  el: XmlElement;
}

export interface BodyTree {
  bodies: BodySpec[];
  /** The element of each body, by index. */
  bodyEls: XmlElement[];
  hinges: HingeFound[];
  /** Every joint of the model in document order with its qpos width, for keyframes. */
  qposLayout: QposEntry[];
}

interface Assets {
  meshes: Map<string, { file: string; scale: Vec3M }>;
  materials: Map<string, [number, number, number, number]>;
}

/** The meshes and materials the model's <asset>s declare. */
function readAssets(root: XmlElement, resolved: ResolveAttrs, compiler: Compiler): Assets {
  const meshes = new Map<string, { file: string; scale: Vec3M }>();
  const materials = new Map<string, [number, number, number, number]>();
  for (const asset of root.children.filter((e) => e.name === 'asset')) {
    for (const a of asset.children) {
      if (a.name === 'mesh') {
        const attrs = resolved(a, 'mesh', 'main');
        if (attrs.file === undefined) continue;
        const base = attrs.file.replace(/^.*\//, '').replace(/\.[^.]*$/, '');
        const name = attrs.name ?? base;
        const file = joinPath(compiler.meshdir === '' ? '.' : compiler.meshdir, attrs.file);
        meshes.set(name, { file, scale: attrs.scale ? vec3(a, 'scale', attrs.scale) : [1, 1, 1] });
      } else if (a.name === 'material' && a.attrs.name !== undefined) {
        const attrs = resolved(a, 'material', 'main');
        materials.set(
          a.attrs.name,
          attrs.rgba ? (vecN(a, 'rgba', attrs.rgba, 4) as [number, number, number, number]) : [1, 1, 1, 1],
        );
      }
    }
  }
  return { meshes, materials };
}

/** Reads every body under <worldbody>; `rootDir` is the model file's folder (mesh files are joined to it). */
export function readBodyTree(root: XmlElement, resolved: ResolveAttrs, compiler: Compiler, rootDir: string): BodyTree {
  const { meshes, materials } = readAssets(root, resolved, compiler);
  const worldbodies = root.children.filter((e) => e.name === 'worldbody');
  if (worldbodies.length === 0) throw new InputError(where(root), 'the model has no <worldbody>');
  const bodies: BodySpec[] = [];
  const bodyEls: XmlElement[] = [];
  const hinges: HingeFound[] = [];
  const qposLayout: QposEntry[] = [];

  const visitBody = (el: XmlElement, parent: number, cls: string, framePos: Vec3M, frameQuat: QuatWxyz): void => {
    const attrs = resolved(el, 'body', cls);
    const childclass = el.attrs.childclass ?? cls;
    const localPos = attrs.pos ? vec3(el, 'pos', attrs.pos) : ([0, 0, 0] as Vec3M);
    const localQuat = orientation(el, attrs, compiler);
    const index = bodies.length;
    const name = attrs.name ?? `body_${index}`;
    if (bodies.some((b) => b.name === name))
      throw new InputError(where(el, 'name'), `body name "${name}" is used twice`);
    const p = quatRotate(frameQuat, localPos);
    const body: BodySpec = {
      name,
      index,
      parent,
      posM: [framePos[0] + p[0], framePos[1] + p[1], framePos[2] + p[2]],
      quatWxyz: quatNormalize(quatMul(frameQuat, localQuat)),
      joint: null,
      massKg: 0,
      geoms: [],
    };
    bodies.push(body);
    bodyEls.push(el);

    const walk = (container: XmlElement, fPos: Vec3M, fQuat: QuatWxyz, ccls: string): void => {
      for (const child of container.children) {
        const ccl = ccls;
        switch (child.name) {
          case 'freejoint':
          case 'joint': {
            const ja = resolved(child, 'joint', ccl);
            const type = child.name === 'freejoint' ? 'free' : (ja.type ?? 'hinge');
            const jname = ja.name ?? `joint_${qposLayout.length}`;
            if (body.joint !== null)
              throw new InputError(
                where(child),
                `body "${name}" has more than one joint; one joint per body is supported`,
              );
            if (type === 'free') {
              if (parent !== -1)
                throw new InputError(where(child), `free joint "${jname}" must be on a child of the world body`);
              body.joint = { kind: 'free', name: jname };
              qposLayout.push({ kind: 'free', width: 7, name: jname, el: child });
            } else if (type === 'hinge') {
              const axis = unit(child, 'axis', ja.axis ? vec3(child, 'axis', ja.axis) : [0, 0, 1]);
              const anchorM = ja.pos ? vec3(child, 'pos', ja.pos) : ([0, 0, 0] as Vec3M);
              const toRad = (v: number): number => (compiler.degrees ? (v * Math.PI) / 180 : v);
              const refRad = ja.ref ? toRad(num(child, 'ref', ja.ref)) : 0;
              let rangeRad: readonly [number, number] | null = null;
              const limited = ja.limited ?? (compiler.autolimits ? 'auto' : 'false');
              if (ja.range !== undefined && limited !== 'false') {
                const r = vecN(child, 'range', ja.range, 2);
                if (!(r[0] < r[1]))
                  throw new InputError(
                    where(child, 'range'),
                    `joint "${jname}" range lower ${r[0]} is not below upper ${r[1]}`,
                  );
                rangeRad = [toRad(r[0]), toRad(r[1])];
              } else if (limited === 'true')
                throw new InputError(where(child, 'range'), `joint "${jname}" is limited but has no range`);
              // Joint frame composed into the body frame through any <frame>s between them.
              const axisB = quatRotate(fQuat, axis);
              const anc = quatRotate(fQuat, anchorM);
              hinges.push({
                name: jname,
                el: child,
                bodyIndex: index,
                axis: axisB,
                anchorM: [fPos[0] + anc[0], fPos[1] + anc[1], fPos[2] + anc[2]],
                refRad,
                rangeRad,
              });
              qposLayout.push({ kind: 'hinge', width: 1, name: jname, el: child });
            } else {
              throw new InputError(
                where(child, 'type'),
                `joint "${jname}" is of type "${type}"; only hinge joints and one free joint are supported`,
              );
            }
            break;
          }
          case 'geom':
            body.geoms.push(readGeom(child, resolved(child, 'geom', ccl), fPos, fQuat));
            break;
          case 'inertial': {
            const ia = resolved(child, 'inertial', ccl);
            if (ia.mass === undefined) throw new InputError(where(child, 'mass'), '<inertial> needs a mass');
            body.massKg = num(child, 'mass', ia.mass);
            break;
          }
          case 'body':
            visitBody(child, index, child.attrs.childclass ?? ccl, fPos, fQuat);
            break;
          case 'frame': {
            const fa = resolved(child, 'frame', ccl);
            const lp = fa.pos ? vec3(child, 'pos', fa.pos) : ([0, 0, 0] as Vec3M);
            const lq = orientation(child, fa, compiler);
            const rp = quatRotate(fQuat, lp);
            walk(
              child,
              [fPos[0] + rp[0], fPos[1] + rp[1], fPos[2] + rp[2]],
              quatMul(fQuat, lq),
              child.attrs.childclass ?? ccl,
            );
            break;
          }
          default:
            break; // sites, cameras, lights, plugins: not part of the profile
        }
      }
    };
    walk(el, [0, 0, 0], QUAT_IDENTITY, childclass);
  };

  const readGeom = (el: XmlElement, attrs: Record<string, string>, fPos: Vec3M, fQuat: QuatWxyz): GeomSpec => {
    let type = (attrs.type ?? 'sphere') as GeomType;
    if (attrs.mesh !== undefined && attrs.type === undefined) type = 'mesh';
    if (!['plane', 'sphere', 'capsule', 'ellipsoid', 'cylinder', 'box', 'mesh'].includes(type)) {
      throw new InputError(where(el, 'type'), `geom type "${type}" is not supported`);
    }
    let size = attrs.size
      ? attrs.size
          .trim()
          .split(/\s+/)
          .map((s) => num(el, 'size', s))
      : [];
    let pos: Vec3M = attrs.pos ? vec3(el, 'pos', attrs.pos) : [0, 0, 0];
    let quat = orientation(el, attrs, compiler);
    if (attrs.fromto !== undefined) {
      const f = vecN(el, 'fromto', attrs.fromto, 6);
      const d: Vec3M = [f[3] - f[0], f[4] - f[1], f[5] - f[2]];
      const len = Math.hypot(...d);
      if (len === 0) throw new InputError(where(el, 'fromto'), 'fromto has zero length');
      pos = [(f[0] + f[3]) / 2, (f[1] + f[4]) / 2, (f[2] + f[5]) / 2];
      quat = quatFromZ([d[0] / len, d[1] / len, d[2] / len]);
      if (type === 'box' || type === 'ellipsoid') size = [size[0], size[1] ?? size[0], len / 2];
      else size = [size[0], len / 2];
    }
    const rp = quatRotate(fQuat, pos);
    let rgba: [number, number, number, number] = [0.5, 0.5, 0.5, 1];
    if (attrs.material !== undefined && materials.has(attrs.material)) rgba = materials.get(attrs.material)!;
    if (attrs.rgba !== undefined) rgba = vecN(el, 'rgba', attrs.rgba, 4) as [number, number, number, number];
    const contype = attrs.contype !== undefined ? num(el, 'contype', attrs.contype) : 1;
    const conaffinity = attrs.conaffinity !== undefined ? num(el, 'conaffinity', attrs.conaffinity) : 1;
    const geom: GeomSpec = {
      type,
      size,
      posM: [fPos[0] + rp[0], fPos[1] + rp[1], fPos[2] + rp[2]],
      quatWxyz: quatNormalize(quatMul(fQuat, quat)),
      rgba,
      group: attrs.group !== undefined ? num(el, 'group', attrs.group) : 0,
      collides: contype !== 0 || conaffinity !== 0,
    };
    if (attrs.name !== undefined) geom.name = attrs.name;
    if (type === 'mesh') {
      const m = attrs.mesh !== undefined ? meshes.get(attrs.mesh) : undefined;
      if (!m)
        throw new InputError(
          where(el, 'mesh'),
          `geom refers to mesh "${attrs.mesh ?? ''}", which is not declared in <asset>`,
        );
      geom.mesh = { name: attrs.mesh!, file: joinPath(rootDir, m.file), scale: m.scale };
    }
    return geom;
  };

  for (const wb of worldbodies) {
    for (const child of wb.children) {
      if (child.name === 'body') visitBody(child, -1, child.attrs.childclass ?? 'main', [0, 0, 0], QUAT_IDENTITY);
    }
  }
  return { bodies, bodyEls, hinges, qposLayout };
}
