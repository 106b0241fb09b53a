import { InputError, type InputLocation } from '../problems';
import { QUAT_IDENTITY, quatFromAxisAngle, quatFromMat3, quatMul, quatNormalize, quatRotate } from '../math/quat';
import type { QuatWxyz, Vec3M } from '../units';
import { MAX_XML_DEPTH, parseXml, type XmlElement } from '../xml/parseXml';
import { G1_END_EFFECTORS, G1_JOINT_NAMES } from './g1Joints';
import type {
  ActuatorSpec,
  BodyJoint,
  BodySpec,
  GeomSpec,
  GeomType,
  JointSpec,
  RobotPose,
  RobotProfile,
} from './robotProfile';

// MJCF → RobotProfile. Pure: files are reached through `readText`, so the same reader runs in
// Node (services) and in tests on strings. Supports what robot MJCFs like MuJoCo Menagerie's
// g1.xml use: <include>, nested default classes and childclass, compiler angle/meshdir/
// assetdir/eulerseq, every orientation form (quat, axisangle, euler, xyaxes, zaxis), <frame>,
// geom fromto, materials, position/motor/velocity/general actuators with inheritrange, and
// keyframes. The robot must be one free-floating body tree of hinge joints.

export interface MjcfReadOptions {
  /** Path of the top-level model file, as the user named it ('/'-separated). */
  file: string;
  /** Reads a file relative to nothing: the reader passes joined paths. Throws if missing. */
  readText: (path: string) => string;
  /** Canonical joint order; defaults to the G1's. */
  jointOrder?: readonly string[];
  /** End-effector bodies; defaults to the G1's. */
  endEffectors?: readonly string[];
}

const dirname = (p: string): string => {
  const k = p.lastIndexOf('/');
  return k < 0 ? '.' : k === 0 ? '/' : p.slice(0, k);
};
const joinPath = (dir: string, rel: string): string =>
  rel.startsWith('/') ? rel : dir === '.' ? rel : `${dir}/${rel}`;

const where = (el: XmlElement, key?: string): InputLocation => ({
  file: el.file,
  line: el.line,
  column: el.column,
  ...(key ? { key } : {}),
});

interface DefaultClass {
  parent: string | null;
  /** element type (joint, geom, position, …) → attributes set by this class alone */
  own: Map<string, Record<string, string>>;
}

interface Compiler {
  degrees: boolean;
  eulerseq: string;
  meshdir: string;
  autolimits: boolean;
}

export function readMjcf(options: MjcfReadOptions): RobotProfile {
  const jointOrder = options.jointOrder ?? G1_JOINT_NAMES;
  const endEffectors = options.endEffectors ?? G1_END_EFFECTORS;
  const rootDir = dirname(options.file);
  const root = loadWithIncludes(options.file, options.readText, rootDir, { includes: 0, chars: 0 }, [], null);
  checkModelSize(root);
  if (root.name !== 'mujoco')
    throw new InputError(where(root), `the root element is <${root.name}>; an MJCF model starts with <mujoco>`);

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
  let timestepS = 0.002;
  for (const o of root.children.filter((e) => e.name === 'option')) {
    if (o.attrs.timestep !== undefined) timestepS = num(o, 'timestep', o.attrs.timestep);
  }

  // Default classes.
  const classes = new Map<string, DefaultClass>();
  const readDefault = (el: XmlElement, parent: string | null): void => {
    const name = el.attrs.class ?? (parent === null ? 'main' : undefined);
    if (name === undefined) throw new InputError(where(el), 'a nested <default> needs a class attribute');
    if (classes.has(name)) throw new InputError(where(el, 'class'), `default class "${name}" is defined twice`);
    const own = new Map<string, Record<string, string>>();
    classes.set(name, { parent, own });
    for (const child of el.children) {
      if (child.name === 'default') readDefault(child, name);
      else own.set(child.name, { ...(own.get(child.name) ?? {}), ...child.attrs });
    }
  };
  const topDefaults = root.children.filter((e) => e.name === 'default');
  if (topDefaults.length === 0) classes.set('main', { parent: null, own: new Map() });
  for (const d of topDefaults) {
    if (classes.has('main')) {
      // Several top-level <default> blocks: later ones add classes below main.
      for (const child of d.children) {
        if (child.name === 'default') readDefault(child, 'main');
        else
          classes
            .get('main')!
            .own.set(child.name, { ...(classes.get('main')!.own.get(child.name) ?? {}), ...child.attrs });
      }
    } else readDefault(d, null);
  }
  const actuatorKinds = [
    'position',
    'motor',
    'velocity',
    'general',
    'intvelocity',
    'damper',
    'cylinder',
    'muscle',
    'adhesion',
  ];
  const resolved = (el: XmlElement, type: string, cls: string): Record<string, string> => {
    const className = el.attrs.class ?? cls;
    const chain: DefaultClass[] = [];
    let c: string | null = className;
    while (c !== null) {
      const dc = classes.get(c);
      if (!dc) throw new InputError(where(el, 'class'), `default class "${c}" is not defined`);
      chain.unshift(dc);
      c = dc.parent;
    }
    const out: Record<string, string> = {};
    for (const dc of chain) {
      // MuJoCo keeps one actuator default per class; every shortcut writes into it.
      if (actuatorKinds.includes(type)) {
        for (const k of actuatorKinds) Object.assign(out, dc.own.get(k) ?? {});
      } else Object.assign(out, dc.own.get(type) ?? {});
    }
    const own = { ...el.attrs };
    delete own.class;
    return Object.assign(out, own);
  };

  // Assets: meshes and materials.
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

  const orientation = (el: XmlElement, attrs: Record<string, string>): QuatWxyz => {
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
  };

  // Body tree.
  const worldbodies = root.children.filter((e) => e.name === 'worldbody');
  if (worldbodies.length === 0) throw new InputError(where(root), 'the model has no <worldbody>');
  const bodies: BodySpec[] = [];
  const bodyEls: XmlElement[] = [];
  interface HingeFound {
    name: string;
    el: XmlElement;
    bodyIndex: number;
    axis: Vec3M;
    anchorM: Vec3M;
    refRad: number;
    rangeRad: readonly [number, number] | null;
  }
  const hinges: HingeFound[] = [];
  /** Every joint of the model in document order with its qpos width, for keyframes. */
  const qposLayout: { kind: 'free' | 'hinge' | 'other'; width: number; name: string; el: XmlElement }[] = [];

  const visitBody = (el: XmlElement, parent: number, cls: string, framePos: Vec3M, frameQuat: QuatWxyz): void => {
    const attrs = resolved(el, 'body', cls);
    const childclass = el.attrs.childclass ?? cls;
    const localPos = attrs.pos ? vec3(el, 'pos', attrs.pos) : ([0, 0, 0] as Vec3M);
    const localQuat = orientation(el, attrs);
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
            const lq = orientation(child, fa);
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
    let quat = orientation(el, attrs);
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

  // The robot: the one body with a free joint and its subtree.
  const freeBodies = bodies.filter((b) => b.joint?.kind === 'free');
  if (freeBodies.length === 0)
    throw new InputError(
      { file: options.file },
      'no body has a free joint: the robot must be a floating base (<freejoint/> on its root body)',
    );
  if (freeBodies.length > 1)
    throw new InputError(
      where(bodyEls[freeBodies[1].index]),
      `more than one free-floating body (${freeBodies.map((b) => b.name).join(', ')}); one robot per model is supported`,
    );
  const rootBody = freeBodies[0];

  // Joint order: the model's hinge joints against the canonical table.
  const modelNames = hinges.map((h) => h.name);
  const unknown = hinges.filter((h) => !jointOrder.includes(h.name));
  if (unknown.length > 0) {
    const first = unknown[0];
    throw new InputError(
      where(first.el, 'name'),
      `unknown joint name${unknown.length > 1 ? 's' : ''} ${unknown.map((h) => `"${h.name}"`).join(', ')}: the canonical G1 joints are ${jointOrder.join(', ')}`,
    );
  }
  const missing = jointOrder.filter((n) => !modelNames.includes(n));
  if (missing.length > 0)
    throw new InputError(
      { file: options.file },
      `missing joint${missing.length > 1 ? 's' : ''}: ${missing.join(', ')} (the model has ${hinges.length} of the ${jointOrder.length} canonical hinge joints)`,
    );
  const dup = modelNames.find((n, k) => modelNames.indexOf(n) !== k);
  if (dup) throw new InputError({ file: options.file }, `joint "${dup}" is declared twice`);
  const outOfOrder = modelNames.some((n, k) => n !== jointOrder[k]);
  if (outOfOrder) {
    const remap = modelNames
      .map((n, k) => `  model #${k} ${n} -> canonical #${jointOrder.indexOf(n)}`)
      .filter((_l, k) => modelNames[k] !== jointOrder[k]);
    throw new InputError(
      { file: options.file },
      `the model's joint order differs from the canonical G1 order; remap (model index -> canonical index):\n${remap.join('\n')}`,
    );
  }

  const joints: JointSpec[] = hinges.map((h, k) => ({
    name: h.name,
    index: k,
    bodyIndex: h.bodyIndex,
    axis: h.axis,
    rangeRad: h.rangeRad,
  }));
  for (const h of hinges) {
    const joint: BodyJoint = {
      kind: 'hinge',
      name: h.name,
      jointIndex: jointOrder.indexOf(h.name),
      axis: h.axis,
      anchorM: h.anchorM,
      refRad: h.refRad,
    };
    bodies[h.bodyIndex].joint = joint;
  }
  // Every hinge must lie on the free body's subtree.
  const inRobot = (b: number): boolean => {
    for (let k = b; k !== -1; k = bodies[k].parent) if (k === rootBody.index) return true;
    return false;
  };
  for (const h of hinges) {
    if (!inRobot(h.bodyIndex))
      throw new InputError(where(h.el), `joint "${h.name}" is not on the floating robot's body tree`);
  }

  // Keep only the robot's subtree, re-indexed so the root body is 0 (MuJoCo order is kept).
  const keep = bodies.filter((b) => inRobot(b.index));
  const newIndex = new Map(keep.map((b, k) => [b.index, k]));
  const robotBodies: BodySpec[] = keep.map((b, k) => ({
    ...b,
    index: k,
    parent: b.parent === -1 || !newIndex.has(b.parent) ? -1 : newIndex.get(b.parent)!,
  }));
  for (const j of joints) j.bodyIndex = newIndex.get(j.bodyIndex)!;
  const bodyIdx = (n: string): number => robotBodies.findIndex((b) => b.name === n);
  const eeIdx = endEffectors.map((n) => {
    const k = bodyIdx(n);
    if (k < 0) throw new InputError({ file: options.file }, `end-effector body "${n}" is not in the model`);
    return k;
  });

  // Actuators.
  const actuators: ActuatorSpec[] = [];
  for (const act of root.children.filter((e) => e.name === 'actuator')) {
    for (const a of act.children) {
      if (!actuatorKinds.includes(a.name)) continue;
      const cls = a.attrs.class ?? 'main';
      const aa = resolved(a, a.name, cls);
      if (aa.joint === undefined) continue;
      const ji = jointOrder.indexOf(aa.joint);
      if (ji < 0 || !modelNames.includes(aa.joint))
        throw new InputError(
          where(a, 'joint'),
          `actuator drives joint "${aa.joint}", which is not a hinge joint of the robot`,
        );
      const kind = (['position', 'motor', 'velocity'].includes(a.name) ? a.name : 'general') as ActuatorSpec['kind'];
      const spec: ActuatorSpec = { name: aa.name ?? aa.joint, jointIndex: ji, kind };
      if (kind === 'position') spec.kp = aa.kp !== undefined ? num(a, 'kp', aa.kp) : 1;
      if (aa.ctrlrange !== undefined) spec.ctrlRange = vecN(a, 'ctrlrange', aa.ctrlrange, 2) as [number, number];
      if (aa.inheritrange !== undefined && num(a, 'inheritrange', aa.inheritrange) > 0) {
        const r = joints[ji].rangeRad;
        const f = num(a, 'inheritrange', aa.inheritrange);
        if (r) {
          const mid = (r[0] + r[1]) / 2;
          const half = ((r[1] - r[0]) / 2) * f;
          spec.ctrlRange = [mid - half, mid + half];
        }
      }
      if (aa.forcerange !== undefined) spec.forceRange = vecN(a, 'forcerange', aa.forcerange, 2) as [number, number];
      actuators.push(spec);
    }
  }

  // Default pose: the `stand` keyframe if any, else qpos0.
  const nq = qposLayout.reduce((s, j) => s + j.width, 0);
  let defaultPose: RobotPose = {
    rootPosM: rootBody.posM,
    rootQuatWxyz: rootBody.quatWxyz,
    jointPosRad: hinges.map((h) => h.refRad),
  };
  let defaultPoseSource = 'qpos0';
  const keys = root.children
    .filter((e) => e.name === 'keyframe')
    .flatMap((k) => k.children.filter((c) => c.name === 'key'));
  const stand = keys.find((k) => k.attrs.name === 'stand') ?? keys.find((k) => k.attrs.name === 'home');
  if (stand?.attrs.qpos !== undefined) {
    const q = stand.attrs.qpos
      .trim()
      .split(/\s+/)
      .map((s) => num(stand, 'qpos', s));
    if (q.length !== nq)
      throw new InputError(
        where(stand, 'qpos'),
        `keyframe "${stand.attrs.name}" has ${q.length} qpos values; the model has nq = ${nq}`,
      );
    let adr = 0;
    const jp = new Array<number>(joints.length).fill(0);
    let rootPosM: Vec3M = rootBody.posM;
    let rootQuatWxyz: QuatWxyz = rootBody.quatWxyz;
    for (const j of qposLayout) {
      if (j.kind === 'free') {
        rootPosM = [q[adr], q[adr + 1], q[adr + 2]];
        rootQuatWxyz = quatNormalize(q.slice(adr + 3, adr + 7));
      } else if (j.kind === 'hinge') jp[jointOrder.indexOf(j.name)] = q[adr];
      adr += j.width;
    }
    defaultPose = { rootPosM, rootQuatWxyz, jointPosRad: jp };
    defaultPoseSource = `keyframe:${stand.attrs.name}`;
  }

  return {
    modelName: root.attrs.model ?? options.file,
    sourceFile: options.file,
    bodies: robotBodies,
    joints,
    actuators,
    rootBodyIndex: newIndex.get(rootBody.index)!,
    endEffectorBodyIndices: eeIdx,
    trackedBodyIndices: robotBodies.map((_b, k) => k),
    defaultPose,
    defaultPoseSource,
    timestepS,
  };
}

/** A file an MJCF model's assets name (what MuJoCo opens when it compiles the model). */
export interface MjcfFileReference {
  kind: 'include' | 'mesh' | 'texture' | 'hfield' | 'skin';
  /** The path as the reader joins it: the model's folder, the compiler's meshdir/texturedir/assetdir, the attribute. */
  file: string;
  /** The <include> or asset element naming it (its file may be an included file), with the attribute as key. */
  declaredAt: InputLocation;
}

/**
 * Every file the model reads besides itself: the included files (each once, in document order),
 * then every file named by the model's <asset>s (mesh, hfield and skin files under meshdir,
 * texture files under texturedir; assetdir for both when they are not set), includes expanded
 * under the same limits as readMjcf. Pure: the caller checks the files (see services/mujoco).
 */
export function readMjcfFileReferences(options: Pick<MjcfReadOptions, 'file' | 'readText'>): MjcfFileReference[] {
  const rootDir = dirname(options.file);
  const out: MjcfFileReference[] = [];
  const seenIncludes = new Set<string>();
  const onInclude = (file: string, via: XmlElement): void => {
    const key = normalizePath(file);
    if (seenIncludes.has(key)) return;
    seenIncludes.add(key);
    out.push({ kind: 'include', file, declaredAt: where(via, 'file') });
  };
  const root = loadWithIncludes(
    options.file,
    options.readText,
    rootDir,
    { includes: 0, chars: 0, onInclude },
    [],
    null,
  );
  checkModelSize(root);
  let assetdir: string | undefined;
  let meshdir: string | undefined;
  let texturedir: string | undefined;
  for (const c of root.children.filter((e) => e.name === 'compiler')) {
    assetdir = c.attrs.assetdir ?? assetdir;
    meshdir = c.attrs.meshdir ?? meshdir;
    texturedir = c.attrs.texturedir ?? texturedir;
  }
  const dirFor = (kind: MjcfFileReference['kind']): string =>
    (kind === 'texture' ? (texturedir ?? assetdir) : (meshdir ?? assetdir)) ?? '';
  for (const asset of root.children.filter((e) => e.name === 'asset')) {
    for (const a of asset.children) {
      if (a.name !== 'mesh' && a.name !== 'texture' && a.name !== 'hfield' && a.name !== 'skin') continue;
      const kind = a.name;
      // A cube texture may name one file per face (fileright, fileleft, …).
      for (const [attr, value] of Object.entries(a.attrs)) {
        if (!(attr === 'file' || (kind === 'texture' && attr.startsWith('file'))) || value.trim() === '') continue;
        const dir = dirFor(kind);
        out.push({
          kind,
          file: joinPath(rootDir, joinPath(dir === '' ? '.' : dir, value)),
          declaredAt: where(a, attr),
        });
      }
    }
  }
  return out;
}

/** Most <include> expansions in one model, counting each time a file is included again. */
export const MAX_MJCF_INCLUDES = 256;
/** Longest chain of includes (the model file including a file including a file …). */
export const MAX_MJCF_INCLUDE_DEPTH = 16;
/** Most characters read for one model, over the model file and every include expansion (64 Mi). */
export const MAX_MJCF_TEXT_CHARS = 64 * 1024 * 1024;
/** Most elements in one model once its includes are expanded. */
export const MAX_MJCF_ELEMENTS = 500_000;
/** Deepest element nesting of the model once its includes are expanded (the reader walks it recursively). */
export const MAX_MJCF_DEPTH = MAX_XML_DEPTH;

/** `a/./b/../c` → `a/c` (for recognising the same file in include chains; no file system here). */
function normalizePath(p: string): string {
  const abs = p.startsWith('/');
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..' && out.length > 0 && out[out.length - 1] !== '..') out.pop();
    else if (seg !== '..' || !abs) out.push(seg);
  }
  return (abs ? '/' : '') + (out.join('/') || (abs ? '' : '.'));
}

interface IncludeBudget {
  includes: number;
  chars: number;
  /** Told of every include expansion once its file has been read. */
  onInclude?: (file: string, via: XmlElement) => void;
}

/** One link of an include chain: the file, and the <include> that brought it in (null for the model file). */
interface IncludeLink {
  file: string;
  key: string;
  via: XmlElement | null;
}

const chainText = (chain: readonly IncludeLink[], last: string): string =>
  [...chain.map((c) => c.file), last].join(' -> ');

function loadWithIncludes(
  file: string,
  readText: (p: string) => string,
  rootDir: string,
  budget: IncludeBudget,
  chain: readonly IncludeLink[],
  via: XmlElement | null,
): XmlElement {
  const key = normalizePath(file);
  if (via) {
    const at = where(via, 'file');
    if (chain.some((c) => c.key === key)) throw new InputError(at, `include cycle: ${chainText(chain, file)}`);
    if (chain.length > MAX_MJCF_INCLUDE_DEPTH) {
      throw new InputError(
        at,
        `includes are nested more than ${MAX_MJCF_INCLUDE_DEPTH} deep: ${chainText(chain, file)}`,
      );
    }
    if (++budget.includes > MAX_MJCF_INCLUDES) {
      throw new InputError(
        at,
        `the model expands more than ${MAX_MJCF_INCLUDES} <include>s (each inclusion of a file counts, so files that include each other several times multiply): ${chainText(chain, file)}`,
      );
    }
  }
  let text: string;
  try {
    text = readText(file);
  } catch (err) {
    const from = via ? ` (included from ${via.file}:${via.line}:${via.column})` : '';
    throw new InputError({ file }, `cannot read the file (${err instanceof Error ? err.message : String(err)})${from}`);
  }
  if (via) budget.onInclude?.(file, via);
  budget.chars += text.length;
  if (budget.chars > MAX_MJCF_TEXT_CHARS) {
    throw new InputError(
      via ? where(via, 'file') : { file },
      `the model and its includes are more than ${MAX_MJCF_TEXT_CHARS / 1048576} Mi characters of XML (the limit for one model)`,
    );
  }
  const root = parseXml(text, file);
  const next = [...chain, { file, key, via }];
  const expand = (el: XmlElement): void => {
    const out: XmlElement[] = [];
    for (const child of el.children) {
      if (child.name === 'include') {
        if (child.attrs.file === undefined)
          throw new InputError(where(child, 'file'), '<include> needs a file attribute');
        // MuJoCo resolves include paths against the directory of the top-level model file.
        const inc = loadWithIncludes(joinPath(rootDir, child.attrs.file), readText, rootDir, budget, next, child);
        for (const c of inc.name === 'mujoco' ? inc.children : [inc]) out.push(c);
      } else {
        expand(child);
        out.push(child);
      }
    }
    el.children = out;
  };
  expand(root);
  return root;
}

/** Refuses an expanded model deeper than MAX_MJCF_DEPTH or larger than MAX_MJCF_ELEMENTS (iteratively: no recursion here). */
function checkModelSize(root: XmlElement): void {
  const stack: [XmlElement, number][] = [[root, 1]];
  let count = 0;
  while (stack.length > 0) {
    const [el, depth] = stack.pop()!;
    if (depth > MAX_MJCF_DEPTH)
      throw new InputError(
        where(el),
        `<${el.name}> is nested ${depth} elements deep once the includes are expanded, deeper than the limit of ${MAX_MJCF_DEPTH}`,
      );
    if (++count > MAX_MJCF_ELEMENTS)
      throw new InputError(
        where(el),
        `the model has more than ${MAX_MJCF_ELEMENTS} elements once the includes are expanded (the limit for one model)`,
      );
    for (let k = el.children.length - 1; k >= 0; k--) stack.push([el.children[k], depth + 1]);
  }
}

function num(el: XmlElement, key: string, s: string): number {
  const v = Number(s);
  if (s.trim() === '' || !Number.isFinite(v)) throw new InputError(where(el, key), `"${s}" is not a finite number`);
  return v;
}
function vecN(el: XmlElement, key: string, s: string, n: number): number[] {
  const parts = s.trim().split(/\s+/);
  if (parts.length !== n) throw new InputError(where(el, key), `expected ${n} numbers, found ${parts.length} ("${s}")`);
  return parts.map((p) => num(el, key, p));
}
function vec3(el: XmlElement, key: string, s: string): Vec3M {
  return vecN(el, key, s, 3) as unknown as Vec3M;
}
function unit(el: XmlElement, key: string, v: readonly number[]): Vec3M {
  const n = Math.hypot(v[0], v[1], v[2]);
  if (!(n > 1e-12)) throw new InputError(where(el, key), 'axis has zero length');
  return [v[0] / n, v[1] / n, v[2] / n];
}
/** Minimal rotation taking +z to the unit vector z (MuJoCo's zaxis and fromto convention). */
function quatFromZ(z: Vec3M): QuatWxyz {
  const d = z[2];
  if (d > 1 - 1e-12) return QUAT_IDENTITY;
  if (d < -1 + 1e-12) return [0, 1, 0, 0];
  const axis: Vec3M = [-z[1], z[0], 0];
  const n = Math.hypot(axis[0], axis[1]);
  return quatFromAxisAngle([axis[0] / n, axis[1] / n, 0], Math.acos(Math.max(-1, Math.min(1, d))));
}
