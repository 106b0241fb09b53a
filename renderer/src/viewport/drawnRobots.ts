import * as THREE from 'three';

// What is on screen, for the end-to-end tests (window.__motionbench): the per-body materials of
// every executed run, by run id (the colour a body is actually drawn with), and the body groups
// of the reference robot (its world bounds as drawn, meshes included).

export const drawnRunMaterials = new Map<string, THREE.MeshStandardMaterial[]>();

/** Whether each run's robot was visible in the last rendered frame. */
export const drawnRunVisible = new Map<string, boolean>();

/**
 * The live robots drawn (LiveRobotModel.tsx), by connection id: the root and body poses last drawn,
 * whether the model was visible in the last rendered frame, and its materials (its colour).
 */
export const drawnLiveRobots = new Map<
  string,
  {
    rootPosM: Float64Array;
    rootQuatWxyz: Float64Array;
    bodyPosM: Float64Array;
    bodyQuatWxyz: Float64Array;
    drawn: boolean;
    materials: THREE.MeshStandardMaterial[];
  }
>();

export const drawnReference: { groups: THREE.Group[] | null } = { groups: null };

/**
 * World-space bounds of the visible meshes of the reference robot (or of one body of it), or null
 * when nothing is drawn.
 */
export function referenceBounds(body?: string): { min: number[]; max: number[]; meshes: number } | null {
  const all = drawnReference.groups;
  if (!all) return null;
  const groups = body === undefined ? all : all.filter((g) => g.name === body);
  const box = new THREE.Box3();
  let meshes = 0;
  for (const g of groups) {
    g.updateMatrixWorld(true);
    g.traverse((o) => {
      if (o instanceof THREE.Mesh && o.visible && o.geometry.getAttribute('position')) {
        box.expandByObject(o, true);
        meshes++;
      }
    });
  }
  if (box.isEmpty()) return null;
  return { min: box.min.toArray(), max: box.max.toArray(), meshes };
}
