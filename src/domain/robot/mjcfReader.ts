import { InputError, type InputLocation } from '../problems';
import { quatNormalize } from '../math/quat';
import type { QuatWxyz, Vec3M } from '../units';
import type { XmlElement } from '../xml/parseXml';
import { G1_END_EFFECTORS, G1_JOINT_NAMES } from './g1Joints';
import { dirname, joinPath, num, readCompiler, readTimestepS, vecN, where } from './mjcfAttributes';
import { readBodyTree, type BodyTree, type HingeFound, type QposEntry } from './mjcfBodyTree';
import { ACTUATOR_KINDS, readDefaults, type ResolveAttrs } from './mjcfDefaults';
import { checkModelSize, loadWithIncludes, normalizePath } from './mjcfIncludes';
import type { ActuatorSpec, BodyJoint, BodySpec, JointSpec, RobotPose, RobotProfile } from './robotProfile';

// MJCF → RobotProfile. Pure: files are reached through `readText`, so the same reader runs in
// Node (services) and in tests on strings. Supports what robot MJCFs like MuJoCo Menagerie's
// g1.xml use: <include>, nested default classes and childclass, compiler angle/meshdir/
// assetdir/eulerseq, every orientation form (quat, axisangle, euler, xyaxes, zaxis), <frame>,
// geom fromto, materials, position/motor/velocity/general actuators with inheritrange, and
// keyframes. The robot must be one free-floating body tree of hinge joints.
//
// The reader runs in passes, each its own function: load (the model file with its includes
// expanded, mjcfIncludes.ts) → compiler and option settings (mjcfAttributes.ts) → default classes
// (mjcfDefaults.ts) → assets and the body tree (mjcfBodyTree.ts) → the robot (the free body's
// subtree, its joints checked against the canonical order) → actuators → the default pose.

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

export function readMjcf(options: MjcfReadOptions): RobotProfile {
  const jointOrder = options.jointOrder ?? G1_JOINT_NAMES;
  const endEffectors = options.endEffectors ?? G1_END_EFFECTORS;
  const rootDir = dirname(options.file);
  const root = loadWithIncludes(options.file, options.readText, rootDir, { includes: 0, chars: 0 }, [], null);
  checkModelSize(root);
  if (root.name !== 'mujoco')
    throw new InputError(where(root), `the root element is <${root.name}>; an MJCF model starts with <mujoco>`);
  const compiler = readCompiler(root);
  const timestepS = readTimestepS(root);
  const resolved = readDefaults(root);
  const tree = readBodyTree(root, resolved, compiler, rootDir);
  const robot = selectRobot(tree, options.file, jointOrder, endEffectors);
  const actuators = readActuators(root, resolved, jointOrder, robot);
  const { defaultPose, defaultPoseSource } = readDefaultPose(root, tree.qposLayout, tree.hinges, jointOrder, robot);
  const { robotBodies, joints, newIndex, rootBody, eeIdx } = robot;
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

/** The robot in the body tree: the free body's subtree re-indexed from 0, its joints in canonical order. */
interface Robot {
  rootBody: BodySpec;
  joints: JointSpec[];
  robotBodies: BodySpec[];
  /** Body index in the tree → index in the robot. */
  newIndex: Map<number, number>;
  /** The hinge names in model order. */
  modelNames: string[];
  eeIdx: number[];
}

function selectRobot(
  tree: BodyTree,
  file: string,
  jointOrder: readonly string[],
  endEffectors: readonly string[],
): Robot {
  const { bodies, bodyEls, hinges } = tree;
  const freeBodies = bodies.filter((b) => b.joint?.kind === 'free');
  if (freeBodies.length === 0)
    throw new InputError(
      { file },
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
      { file },
      `missing joint${missing.length > 1 ? 's' : ''}: ${missing.join(', ')} (the model has ${hinges.length} of the ${jointOrder.length} canonical hinge joints)`,
    );
  const dup = modelNames.find((n, k) => modelNames.indexOf(n) !== k);
  if (dup) throw new InputError({ file }, `joint "${dup}" is declared twice`);
  const outOfOrder = modelNames.some((n, k) => n !== jointOrder[k]);
  if (outOfOrder) {
    const remap = modelNames
      .map((n, k) => `  model #${k} ${n} -> canonical #${jointOrder.indexOf(n)}`)
      .filter((_l, k) => modelNames[k] !== jointOrder[k]);
    throw new InputError(
      { file },
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
    if (k < 0) throw new InputError({ file }, `end-effector body "${n}" is not in the model`);
    return k;
  });

  return { rootBody, joints, robotBodies, newIndex, modelNames, eeIdx };
}

/** The actuators that drive the robot's hinges (position, motor, velocity; the rest as general). */
function readActuators(
  root: XmlElement,
  resolved: ResolveAttrs,
  jointOrder: readonly string[],
  robot: Robot,
): ActuatorSpec[] {
  const { modelNames, joints } = robot;
  const actuatorKinds = ACTUATOR_KINDS;
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

  return actuators;
}

/** The default pose: the `stand` keyframe (else `home`) if any, else qpos0. */
function readDefaultPose(
  root: XmlElement,
  qposLayout: readonly QposEntry[],
  hinges: readonly HingeFound[],
  jointOrder: readonly string[],
  robot: Robot,
): { defaultPose: RobotPose; defaultPoseSource: string } {
  const { rootBody, joints } = robot;
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

  return { defaultPose, defaultPoseSource };
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

export {
  MAX_MJCF_DEPTH,
  MAX_MJCF_ELEMENTS,
  MAX_MJCF_INCLUDE_DEPTH,
  MAX_MJCF_INCLUDES,
  MAX_MJCF_TEXT_CHARS,
} from './mjcfIncludes';
