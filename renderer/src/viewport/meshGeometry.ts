import * as THREE from 'three';
import { OBJLoader } from 'three/examples/jsm/loaders/OBJLoader.js';
import { STLLoader } from 'three/examples/jsm/loaders/STLLoader.js';
import type { MeshFormat } from '../../../src/api/contract';

// Mesh files (STL binary or ASCII, OBJ) → one non-indexed BufferGeometry in the mesh's own frame,
// with creased normals: smooth across faces that meet at less than CREASE_ANGLE, sharp edges kept.
// The MJCF mesh `scale` is not applied here but on the three.js object (geomObjects.ts), so one
// geometry can be shared by every robot drawn (reference ghost and executed runs).

const CREASE_ANGLE_RAD = (35 * Math.PI) / 180;

export function parseMeshGeometry(format: MeshFormat, bytes: Uint8Array): THREE.BufferGeometry {
  const positions = format === 'stl' ? stlPositions(bytes) : objPositions(bytes);
  if (positions.length < 9) throw new Error('the mesh has no triangles');
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.BufferAttribute(positions, 3));
  geometry.setAttribute('normal', new THREE.BufferAttribute(creasedNormals(positions, Math.cos(CREASE_ANGLE_RAD)), 3));
  geometry.computeBoundingSphere();
  geometry.computeBoundingBox();
  return geometry;
}

function stlPositions(bytes: Uint8Array): Float32Array {
  // STLLoader wants an ArrayBuffer holding exactly the file.
  const buffer =
    bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer;
  const g = new STLLoader().parse(buffer as ArrayBuffer);
  const pos = g.getAttribute('position').array as Float32Array;
  g.dispose();
  return pos;
}

function objPositions(bytes: Uint8Array): Float32Array {
  const group = new OBJLoader().parse(new TextDecoder().decode(bytes));
  const parts: Float32Array[] = [];
  group.traverse((o) => {
    if (!(o instanceof THREE.Mesh)) return;
    const g = (o.geometry as THREE.BufferGeometry).index
      ? (o.geometry as THREE.BufferGeometry).toNonIndexed()
      : (o.geometry as THREE.BufferGeometry);
    parts.push(g.getAttribute('position').array as Float32Array);
  });
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/**
 * Per-corner normals of a triangle soup: corners at the same position share the area-weighted
 * average of the normals of their faces that are within the crease angle of their own face.
 * Positions are welded by exact value (STL repeats shared vertices bit for bit).
 */
export function creasedNormals(pos: Float32Array, creaseCos: number): Float32Array {
  const nv = pos.length / 3;
  const nf = Math.floor(nv / 3);
  // Face normals: unit (for the crease test) and area-weighted (for the average).
  const unit = new Float32Array(nf * 3);
  const weighted = new Float32Array(nf * 3);
  for (let f = 0; f < nf; f++) {
    const a = 9 * f;
    const e1x = pos[a + 3] - pos[a];
    const e1y = pos[a + 4] - pos[a + 1];
    const e1z = pos[a + 5] - pos[a + 2];
    const e2x = pos[a + 6] - pos[a];
    const e2y = pos[a + 7] - pos[a + 1];
    const e2z = pos[a + 8] - pos[a + 2];
    const nx = e1y * e2z - e1z * e2y;
    const ny = e1z * e2x - e1x * e2z;
    const nz = e1x * e2y - e1y * e2x;
    const len = Math.hypot(nx, ny, nz);
    weighted[3 * f] = nx;
    weighted[3 * f + 1] = ny;
    weighted[3 * f + 2] = nz;
    if (len > 0) {
      unit[3 * f] = nx / len;
      unit[3 * f + 1] = ny / len;
      unit[3 * f + 2] = nz / len;
    }
  }

  // Weld corners by exact position: open-addressing hash on the float bits.
  const bits = new Uint32Array(pos.buffer, pos.byteOffset, nf * 9);
  let size = 1;
  while (size < 2 * nv) size <<= 1;
  const mask = size - 1;
  const table = new Int32Array(size).fill(-1); // → representative corner
  const weld = new Int32Array(nv); // corner → welded vertex id
  const repOf: number[] = []; // welded vertex id → representative corner
  for (let v = 0; v < nf * 3; v++) {
    const x = bits[3 * v];
    const y = bits[3 * v + 1];
    const z = bits[3 * v + 2];
    let h = (Math.imul(x, 0x9e3779b1) ^ Math.imul(y, 0x85ebca77) ^ Math.imul(z, 0xc2b2ae3d)) & mask;
    for (;;) {
      const r = table[h];
      if (r === -1) {
        table[h] = v;
        weld[v] = repOf.length;
        repOf.push(v);
        break;
      }
      if (bits[3 * r] === x && bits[3 * r + 1] === y && bits[3 * r + 2] === z) {
        weld[v] = weld[r];
        break;
      }
      h = (h + 1) & mask;
    }
  }

  // Faces around each welded vertex (CSR).
  const nw = repOf.length;
  const start = new Int32Array(nw + 1);
  for (let v = 0; v < nf * 3; v++) start[weld[v] + 1]++;
  for (let w = 0; w < nw; w++) start[w + 1] += start[w];
  const fill = start.slice(0, nw);
  const faces = new Int32Array(nf * 3);
  for (let v = 0; v < nf * 3; v++) faces[fill[weld[v]]++] = Math.floor(v / 3);

  const out = new Float32Array(pos.length);
  for (let v = 0; v < nf * 3; v++) {
    const f = Math.floor(v / 3);
    const ux = unit[3 * f];
    const uy = unit[3 * f + 1];
    const uz = unit[3 * f + 2];
    let sx = 0;
    let sy = 0;
    let sz = 0;
    const w = weld[v];
    for (let k = start[w]; k < start[w + 1]; k++) {
      const g = faces[k];
      if (ux * unit[3 * g] + uy * unit[3 * g + 1] + uz * unit[3 * g + 2] >= creaseCos) {
        sx += weighted[3 * g];
        sy += weighted[3 * g + 1];
        sz += weighted[3 * g + 2];
      }
    }
    const len = Math.hypot(sx, sy, sz);
    if (len > 0) {
      out[3 * v] = sx / len;
      out[3 * v + 1] = sy / len;
      out[3 * v + 2] = sz / len;
    } else {
      out[3 * v] = ux;
      out[3 * v + 1] = uy;
      out[3 * v + 2] = uz;
    }
  }
  return out;
}
