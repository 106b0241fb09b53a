import type { BodyFrameTree } from '../../src/domain/robot/bodyTransforms';
import type { RobotProfile } from '../../src/domain/robot/robotProfile';
import type { MovingFrames } from '../../src/services/episode/trackPrecision';
import { channelDecoders, withIndexedMcap } from './traceMcap';

// Reading an episode back independently for the episode-format tests: every message of a topic
// decoded from the file alone (traceMcap.ts: @mcap/core + @mcap/support + protobufjs on the
// file's FileDescriptorSet), and a foxglove.FrameTransforms tree composed from its root by our own
// quaternion arithmetic here (not the program's FK) for comparison with ForwardKinematics, each
// rotation normalised as Foxglove's 3D panel does (its Transform normalises every quaternion it is
// given); and a tree's stored values checked one by one against the grids they are stored on.

export type Obj = Record<string, unknown>;

/** Every message of `topic`, decoded from the file alone, with its log time and schema name. */
export async function messagesOf(
  mcap: string,
  topic: string,
): Promise<{ logTime: bigint; msg: Obj; schema: string }[]> {
  return withIndexedMcap(mcap, async (reader) => {
    const decode = channelDecoders(reader);
    const out: { logTime: bigint; msg: Obj; schema: string }[] = [];
    for await (const m of reader.readMessages({ topics: [topic] })) {
      const ch = reader.channelsById.get(m.channelId)!;
      out.push({
        logTime: m.logTime,
        msg: decode.get(m.channelId)!(m.data),
        schema: reader.schemasById.get(ch.schemaId)!.name,
      });
    }
    return out;
  });
}

/**
 * Max position (m) and rotation (rad) error of the tree in a FrameTransforms message against world
 * poses (`fkPos` bodyCount×3, `fkQuat` bodyCount×4, w x y z) of the bodies `<prefix>/<body>`.
 * Frames must come after their parent; `root` is the tree's fixed frame.
 */
export function treeError(
  msg: Obj,
  profile: RobotProfile,
  prefix: string,
  root: string,
  fkPos: Float64Array,
  fkQuat: Float64Array,
): { posM: number; rotRad: number } {
  const world = new Map<string, { p: number[]; q: number[] }>([[root, { p: [0, 0, 0], q: [1, 0, 0, 0] }]]);
  for (const t of msg.transforms as Obj[]) {
    const parent = world.get(t.parentFrameId as string);
    if (!parent) throw new Error(`${t.childFrameId as string}: parent ${t.parentFrameId as string} not before it`);
    const tr = t.translation as { x: number; y: number; z: number };
    const r = t.rotation as { x: number; y: number; z: number; w: number };
    const q = normalise([r.w, r.x, r.y, r.z]); // Foxglove's named fields → (w, x, y, z) here
    world.set(t.childFrameId as string, {
      p: add(parent.p, rotate(parent.q, [tr.x, tr.y, tr.z])),
      q: mul(parent.q, q),
    });
  }
  let posM = 0;
  let rotRad = 0;
  profile.bodies.forEach((b, i) => {
    const w = world.get(`${prefix}/${b.name}`);
    if (!w) throw new Error(`no frame ${prefix}/${b.name}`);
    for (let a = 0; a < 3; a++) posM = Math.max(posM, Math.abs(w.p[a] - fkPos[3 * i + a]));
    const d = Math.abs(w.q.reduce((s, v, a) => s + v * fkQuat[4 * i + a], 0));
    rotRad = Math.max(rotRad, 2 * Math.acos(Math.min(1, d)));
  });
  return { posM, rotRad };
}

/** The grids a tree's moving values are stored on (trackPrecision.ts), for storedTreeDeviations. */
export interface TrackGrids {
  positionStepM: number;
  quaternionStep: number;
}

/**
 * The stored values of a FrameTransforms tree that are not what the grids promise against the
 * exact tree (`exactPos`, `exactQuat`: BodyFrameTree.compute of the same frame): a moving value
 * off its grid or more than half a step from the exact one, or a constant value not bit-identical.
 * Empty: the stored tree is the exact one snapped to its grids, and nothing else changed.
 */
export function storedTreeDeviations(
  msg: Obj,
  tree: BodyFrameTree,
  moving: MovingFrames,
  grids: TrackGrids,
  exactPos: Float64Array,
  exactQuat: Float64Array,
): string[] {
  const bad: string[] = [];
  const transforms = msg.transforms as Obj[];
  if (transforms.length !== tree.frames.length)
    return [`${transforms.length} transforms, tree has ${tree.frames.length}`];
  const check = (what: string, stored: number, exact: number, step: number | null) => {
    if (step === null) {
      if (stored !== exact) bad.push(`${what}: ${stored} is not the constant ${exact}`);
    } else if (!Number.isInteger(stored / step) || Math.abs(stored - exact) > step / 2)
      bad.push(`${what}: ${stored} is not the grid point nearest ${exact}`);
  };
  transforms.forEach((t, i) => {
    const name = tree.frames[i].name;
    if (!(t.childFrameId as string).endsWith(`/${name}`))
      bad.push(`transform ${i}: ${t.childFrameId as string}, not ${name}`);
    const tr = t.translation as Record<string, number>;
    const r = t.rotation as Record<string, number>;
    const pStep = moving.translation.includes(i) ? grids.positionStepM : null;
    const qStep = moving.rotation.includes(i) ? grids.quaternionStep : null;
    ['x', 'y', 'z'].forEach((a, k) => check(`${name}.translation.${a}`, tr[a], exactPos[3 * i + k], pStep));
    ['w', 'x', 'y', 'z'].forEach((a, k) => check(`${name}.rotation.${a}`, r[a], exactQuat[4 * i + k], qStep));
  });
  return bad;
}

function normalise(q: number[]): number[] {
  const n = Math.hypot(q[0], q[1], q[2], q[3]);
  return q.map((v) => v / n);
}
function rotate(q: number[], v: number[]): number[] {
  const [w, x, y, z] = q;
  const tx = 2 * (y * v[2] - z * v[1]);
  const ty = 2 * (z * v[0] - x * v[2]);
  const tz = 2 * (x * v[1] - y * v[0]);
  return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
}
function mul(a: number[], b: number[]): number[] {
  return [
    a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
    a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
    a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
    a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
  ];
}
const add = (a: number[], b: number[]): number[] => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
