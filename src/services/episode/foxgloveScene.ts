import protobuf from 'protobufjs';
// Installs Root.toDescriptor (imported for its effect; see episodeProto.ts).
import 'protobufjs/ext/descriptor.js';
import { foxgloveEnumSchemas, foxgloveMessageSchemas, generateProto } from '@foxglove/schemas/internal.js';
import type { GeomSpec, RobotProfile } from '../../domain/robot/robotProfile';
import { bodyFrameId, writeFrameTransforms } from './frameTransformsWire';

// What Foxglove's and Lichtblick's 3D panel draws, in Foxglove's own schemas: `foxglove.FrameTransforms`
// (one transform tree per robot) and `foxglove.SceneUpdate` (the robot's geometry, each body's
// primitives locked to its frame). The .proto text of every schema comes from @foxglove/schemas'
// own generator (`generateProto`, the source of Foxglove's published .proto files), parsed by
// protobufjs into one FileDescriptorSet that the episode stores in the Schema record, so the
// panel recognises the schema names and decodes from the file alone.
//
// Order conventions at this boundary: the program's quaternions are (w, x, y, z); Foxglove's
// `Quaternion` has named fields x, y, z, w, filled explicitly below. Times are
// google.protobuf.Timestamp (seconds, nanos since the Unix epoch), the episode's log times.

/** Schema names Foxglove's 3D panel renders (docs.foxglove.dev, message schemas). */
export const FOXGLOVE_FRAME_TRANSFORMS = 'foxglove.FrameTransforms';
export const FOXGLOVE_SCENE_UPDATE = 'foxglove.SceneUpdate';

/** The foxglove schemas `names` need, with every schema they import, parsed into one root. */
function foxgloveRoot(names: string[]): protobuf.Root {
  const root = new protobuf.Root();
  root.addJSON(protobuf.common.get('google/protobuf/timestamp.proto')!.nested!);
  root.addJSON(protobuf.common.get('google/protobuf/duration.proto')!.nested!);
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const schema = foxgloveMessageSchemas[name as keyof typeof foxgloveMessageSchemas];
    if (!schema) throw new Error(`@foxglove/schemas has no schema "${name}"`);
    const enums = Object.values(foxgloveEnumSchemas).filter((e) => e.parentSchemaName === name);
    const text = generateProto(schema, enums);
    protobuf.parse(text, root, { keepCase: true });
    for (const m of text.matchAll(/^import "foxglove\/(\w+)\.proto";$/gm)) visit(m[1]);
  };
  names.forEach(visit);
  root.resolveAll();
  return root;
}

const ROOT = foxgloveRoot(['FrameTransforms', 'SceneUpdate']);
/** foxglove.FrameTransforms as protobufjs reads and writes it from Foxglove's schema. */
export const FRAME_TRANSFORMS = ROOT.lookupType(FOXGLOVE_FRAME_TRANSFORMS);
const SCENE_UPDATE = ROOT.lookupType(FOXGLOVE_SCENE_UPDATE);

/** The binary FileDescriptorSet of the foxglove schemas episodes use (Schema record data). */
export const FOXGLOVE_DESCRIPTOR_SET: Uint8Array = (() => {
  const set = ROOT.toDescriptor('proto3');
  return set.$type.encode(set).finish();
})();

const timestamp = (timeNs: bigint) => ({
  seconds: Number(timeNs / 1_000_000_000n),
  nanos: Number(timeNs % 1_000_000_000n),
});

export { bodyFrameId };

/**
 * One robot's transform tree at `timeNs` (BodyFrameTree: each frame in its parent's frame), the
 * frames named `<prefix>/<name>`, the root relative to `rootParent` (the fixed frame, or another
 * robot's root). Written by frameTransformsWire.ts: the bytes FRAME_TRANSFORMS encodes for the
 * same message, at a fraction of the cost.
 */
export const encodeFrameTransforms = writeFrameTransforms;

const pose = (g: GeomSpec, zOffsetM = 0) => {
  const [w, x, y, z] = g.quatWxyz;
  // the offset is along the geom's own z axis (a capsule's end caps): R(q)·(0, 0, dz)
  const dx = 2 * (x * z + w * y) * zOffsetM;
  const dy = 2 * (y * z - w * x) * zOffsetM;
  const dz = (1 - 2 * (x * x + y * y)) * zOffsetM;
  return {
    position: { x: g.posM[0] + dx, y: g.posM[1] + dy, z: g.posM[2] + dz },
    orientation: { x, y, z, w },
  };
};

export interface RobotAppearance {
  /** Colour of every primitive, 0..1 (the reference is drawn translucent). */
  rgba: readonly [number, number, number, number];
}

/**
 * The robot's visual geometry (MuJoCo groups 0–2) as one SceneEntity per body, frame-locked to
 * the body's frame in the tree `prefix`. MuJoCo sizes are half-extents and radii; Foxglove's are
 * full extents (diameters): sphere → SpherePrimitive, box → CubePrimitive, cylinder →
 * CylinderPrimitive (both along z), capsule → a cylinder and two end spheres, ellipsoid → a
 * scaled sphere. Meshes are left out (a mesh model's files are megabytes; our own G1 has none)
 * and counted in `skippedMeshes`.
 */
export function encodeRobotScene(
  profile: RobotProfile,
  prefix: string,
  timeNs: bigint,
  appearance: RobotAppearance,
): { data: Uint8Array; primitives: number; skippedMeshes: number } {
  const [r, g, b, a] = appearance.rgba;
  const color = { r, g, b, a };
  let primitives = 0;
  let skippedMeshes = 0;
  const entities = profile.bodies.map((body) => {
    const spheres: object[] = [];
    const cubes: object[] = [];
    const cylinders: object[] = [];
    for (const geom of body.geoms) {
      if (geom.group > 2) continue;
      const s = geom.size;
      switch (geom.type) {
        case 'sphere':
          spheres.push({ pose: pose(geom), size: { x: 2 * s[0], y: 2 * s[0], z: 2 * s[0] }, color });
          break;
        case 'ellipsoid':
          spheres.push({ pose: pose(geom), size: { x: 2 * s[0], y: 2 * s[1], z: 2 * s[2] }, color });
          break;
        case 'box':
          cubes.push({ pose: pose(geom), size: { x: 2 * s[0], y: 2 * s[1], z: 2 * s[2] }, color });
          break;
        case 'cylinder':
        case 'capsule':
          cylinders.push({
            pose: pose(geom),
            size: { x: 2 * s[0], y: 2 * s[0], z: 2 * s[1] },
            bottom_scale: 1,
            top_scale: 1,
            color,
          });
          if (geom.type === 'capsule')
            for (const end of [-s[1], s[1]])
              spheres.push({ pose: pose(geom, end), size: { x: 2 * s[0], y: 2 * s[0], z: 2 * s[0] }, color });
          break;
        case 'mesh':
          skippedMeshes++;
          break;
        default:
          break; // planes belong to the world, not the robot
      }
    }
    primitives += spheres.length + cubes.length + cylinders.length;
    return {
      timestamp: timestamp(timeNs),
      frame_id: bodyFrameId(prefix, body.name),
      id: bodyFrameId(prefix, body.name),
      frame_locked: true,
      spheres,
      cubes,
      cylinders,
    };
  });
  return { data: SCENE_UPDATE.encode({ entities }).finish(), primitives, skippedMeshes };
}
