import type { Quaternion, Vector3 } from 'three';

// The boundary between the program's conventions and three.js. Inside the program quaternions
// are scalar-first (w, x, y, z); three.js stores them scalar-last (x, y, z, w). This is the one
// place that conversion happens.

/** Sets a three.js quaternion from a wxyz quaternion stored at `offset` in `wxyz`. */
export function setThreeQuaternionFromWxyz(target: Quaternion, wxyz: ArrayLike<number>, offset = 0): Quaternion {
  return target.set(wxyz[offset + 1], wxyz[offset + 2], wxyz[offset + 3], wxyz[offset]);
}

/** Sets a three.js vector from an xyz triple stored at `offset` in `xyz`. */
export function setThreeVectorFromXyz(target: Vector3, xyz: ArrayLike<number>, offset = 0): Vector3 {
  return target.set(xyz[offset], xyz[offset + 1], xyz[offset + 2]);
}
