import * as THREE from 'three';
import type { GeomSpec, RobotProfile } from '../../../src/domain/robot/robotProfile';
import { setThreeQuaternionFromWxyz, setThreeVectorFromXyz } from './threeConvert';

// three.js objects for MJCF geoms, with MuJoCo's size semantics (metres):
//   sphere [r] · capsule, cylinder [r, half-length along the geom's z] · box [hx, hy, hz] ·
//   ellipsoid [rx, ry, rz].
// three.js builds capsules and cylinders along y, so their geometry is turned onto z here.
// Meshes (STL/OBJ, as in Menagerie's G1) are not drawn yet: our own model has primitives only.

const Y_TO_Z = new THREE.Matrix4().makeRotationX(Math.PI / 2);

/** Geometry for one geom in its own frame, or null for types not drawn (plane, mesh). */
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
  const all = profile.bodies.flatMap((b) => b.geoms).filter((g) => g.type !== 'plane' && g.type !== 'mesh');
  const visual = all.filter((g) => g.group <= 2);
  return new Set(visual.length > 0 ? visual : all);
}

const materialCache = new Map<string, THREE.MeshStandardMaterial>();

function materialFor(rgba: readonly [number, number, number, number]): THREE.MeshStandardMaterial {
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

/**
 * One THREE.Group per body (index = profile body index), each holding that body's drawable geoms
 * at their pose in the body frame. The groups are not nested: each gets its world pose from
 * forward kinematics directly.
 */
export function buildBodyGroups(profile: RobotProfile): THREE.Group[] {
  const drawable = drawableGeoms(profile);
  return profile.bodies.map((body) => {
    const group = new THREE.Group();
    group.name = body.name;
    for (const geom of body.geoms) {
      if (!drawable.has(geom)) continue;
      const geometry = geomGeometry(geom);
      if (!geometry) continue;
      const mesh = new THREE.Mesh(geometry, materialFor(geom.rgba));
      if (geom.name) mesh.name = geom.name;
      setThreeVectorFromXyz(mesh.position, geom.posM);
      setThreeQuaternionFromWxyz(mesh.quaternion, geom.quatWxyz);
      mesh.castShadow = true;
      mesh.receiveShadow = true;
      group.add(mesh);
    }
    return group;
  });
}

export function disposeBodyGroups(groups: THREE.Group[]): void {
  for (const g of groups) {
    g.traverse((o) => {
      if (o instanceof THREE.Mesh) o.geometry.dispose();
    });
  }
}
