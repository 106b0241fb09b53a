import * as THREE from 'three';
import type { GeomSpec, RobotProfile } from '../../../src/domain/robot/robotProfile';
import { setThreeQuaternionFromWxyz, setThreeVectorFromXyz } from './threeConvert';

// three.js objects for MJCF geoms, with MuJoCo's size semantics (metres):
//   sphere [r] · capsule, cylinder [r, half-length along the geom's z] · box [hx, hy, hz] ·
//   ellipsoid [rx, ry, rz] · mesh: the file's vertices in the geom frame, times the asset's scale.
// three.js builds capsules and cylinders along y, so their geometry is turned onto z here.
// Mesh geometry arrives asynchronously (meshCache.ts); the object is hidden until it has it.
//
// Three styles of one robot:
//   model — the model's own colours (a single pose on display)
//   ghost — translucent, one colour: the reference when executed runs are overlaid
//   error — one material per body, recoloured every frame by that body's tracking error

const Y_TO_Z = new THREE.Matrix4().makeRotationX(Math.PI / 2);

export type RobotStyle = 'model' | 'ghost' | 'error';

/** Geometry for one primitive geom in its own frame, or null for types not built here (plane, mesh). */
export function geomGeometry(geom: GeomSpec): THREE.BufferGeometry | null {
  const s = geom.size;
  switch (geom.type) {
    case 'sphere':
      return new THREE.SphereGeometry(s[0], 24, 16);
    case 'ellipsoid':
      return new THREE.SphereGeometry(1, 24, 16).scale(s[0], s[1], s[2]);
    case 'box':
      return new THREE.BoxGeometry(2 * s[0], 2 * s[1], 2 * s[2]);
    case 'capsule':
      return new THREE.CapsuleGeometry(s[0], 2 * s[1], 8, 20).applyMatrix4(Y_TO_Z);
    case 'cylinder':
      return new THREE.CylinderGeometry(s[0], s[0], 2 * s[1], 24).applyMatrix4(Y_TO_Z);
    case 'plane':
    case 'mesh':
      return null;
  }
}

/** Which geoms to draw: the visual groups (0-2) when the model has any, else everything. */
export function drawableGeoms(profile: RobotProfile): Set<GeomSpec> {
  const all = profile.bodies
    .flatMap((b) => b.geoms)
    .filter((g) => g.type !== 'plane' && (g.type !== 'mesh' || g.mesh !== undefined));
  const visual = all.filter((g) => g.group <= 2);
  return new Set(visual.length > 0 ? visual : all);
}

const materialCache = new Map<string, THREE.MeshStandardMaterial>();

function modelMaterial(rgba: readonly [number, number, number, number]): THREE.MeshStandardMaterial {
  const key = rgba.join(',');
  let m = materialCache.get(key);
  if (!m) {
    m = new THREE.MeshStandardMaterial({
      color: new THREE.Color(rgba[0], rgba[1], rgba[2]),
      roughness: 0.55,
      metalness: 0.1,
      transparent: rgba[3] < 1,
      opacity: rgba[3],
    });
    materialCache.set(key, m);
  }
  return m;
}

/** The reference drawn behind executed runs: light blue, see-through, no depth writes. */
export const GHOST_COLOR = '#8fb8ff';
export const GHOST_OPACITY = 0.26;
let ghost: THREE.MeshStandardMaterial | null = null;
function ghostMaterial(): THREE.MeshStandardMaterial {
  ghost ??= new THREE.MeshStandardMaterial({
    color: new THREE.Color(GHOST_COLOR),
    roughness: 0.8,
    metalness: 0,
    transparent: true,
    opacity: GHOST_OPACITY,
    depthWrite: false,
  });
  return ghost;
}

function errorMaterial(): THREE.MeshStandardMaterial {
  return new THREE.MeshStandardMaterial({ color: 0x888888, roughness: 0.5, metalness: 0.05, emissive: 0x000000 });
}

export interface BuiltRobot {
  /** One group per body (index = profile body index), not nested: each is posed from FK directly. */
  groups: THREE.Group[];
  /** Style 'error': one material per body, to recolour; else null. */
  bodyMaterials: THREE.MeshStandardMaterial[] | null;
  dispose(): void;
}

/** Resolves mesh geometry by asset name (shared, never disposed by a robot); null = not available. */
export type MeshLookup = (name: string) => Promise<THREE.BufferGeometry> | null;

const PLACEHOLDER = new THREE.BufferGeometry();

/**
 * The three.js objects of one robot in `style`. `onMeshLoaded` is called each time a mesh's
 * geometry arrives and its object becomes visible: the canvas renders on demand, so whoever
 * draws this robot asks for a frame then.
 */
export function buildRobot(
  profile: RobotProfile,
  style: RobotStyle,
  meshes: MeshLookup,
  onMeshLoaded: () => void = () => {},
): BuiltRobot {
  const drawable = drawableGeoms(profile);
  const owned: THREE.BufferGeometry[] = [];
  const bodyMaterials = style === 'error' ? profile.bodies.map(() => errorMaterial()) : null;
  let disposed = false;
  const groups = profile.bodies.map((body, bi) => {
    const group = new THREE.Group();
    group.name = body.name;
    for (const geom of body.geoms) {
      if (!drawable.has(geom)) continue;
      const material =
        style === 'model' ? modelMaterial(geom.rgba) : style === 'ghost' ? ghostMaterial() : bodyMaterials![bi];
      let mesh: THREE.Mesh;
      if (geom.type === 'mesh' && geom.mesh) {
        mesh = new THREE.Mesh(PLACEHOLDER, material);
        mesh.visible = false;
        mesh.scale.set(geom.mesh.scale[0], geom.mesh.scale[1], geom.mesh.scale[2]);
        const pending = meshes(geom.mesh.name);
        void pending?.then(
          (g) => {
            if (disposed) return;
            mesh.geometry = g;
            mesh.visible = true;
            onMeshLoaded();
          },
          () => {}, // counted and shown by the mesh store
        );
      } else {
        const geometry = geomGeometry(geom);
        if (!geometry) continue;
        owned.push(geometry);
        mesh = new THREE.Mesh(geometry, material);
      }
      if (geom.name) mesh.name = geom.name;
      setThreeVectorFromXyz(mesh.position, geom.posM);
      setThreeQuaternionFromWxyz(mesh.quaternion, geom.quatWxyz);
      mesh.castShadow = style !== 'ghost';
      mesh.receiveShadow = style !== 'ghost';
      if (style === 'ghost') mesh.renderOrder = 1; // after the solids
      group.add(mesh);
    }
    return group;
  });
  return {
    groups,
    bodyMaterials,
    dispose() {
      disposed = true;
      for (const g of owned) g.dispose();
      for (const m of bodyMaterials ?? []) m.dispose();
    },
  };
}
