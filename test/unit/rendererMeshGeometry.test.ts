import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { creasedNormals, parseMeshGeometry } from '../../renderer/src/viewport/meshGeometry';
import { drawnMeshNames } from '../../renderer/src/viewport/meshCache';
import { drawableGeoms } from '../../renderer/src/viewport/geomObjects';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { MENAGERIE_G1, OUR_G1 } from '../helpers/sharedData';

// Mesh files as the viewport parses them: Menagerie's binary STLs, ASCII STL, OBJ; normals.

const ASSETS = path.join(path.dirname(MENAGERIE_G1), 'assets');

function bounds(pos: ArrayLike<number>): { min: number[]; max: number[] } {
  const min = [Infinity, Infinity, Infinity];
  const max = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i < pos.length; i += 3) {
    for (let c = 0; c < 3; c++) {
      min[c] = Math.min(min[c], pos[i + c]);
      max[c] = Math.max(max[c], pos[i + c]);
    }
  }
  return { min, max };
}

describe('mesh parsing', () => {
  it("reads a Menagerie binary STL: every triangle, unit normals, the link's size in metres", () => {
    const bytes = new Uint8Array(fs.readFileSync(path.join(ASSETS, 'left_knee_link.STL')));
    const triangles = new DataView(bytes.buffer, bytes.byteOffset).getUint32(80, true);
    expect(bytes.length).toBe(84 + 50 * triangles); // binary STL
    const g = parseMeshGeometry('stl', bytes);
    const pos = g.getAttribute('position');
    const nrm = g.getAttribute('normal');
    expect(pos.count).toBe(3 * triangles);
    expect(nrm.count).toBe(3 * triangles);
    for (let i = 0; i < nrm.count; i += 97) {
      expect(Math.hypot(nrm.getX(i), nrm.getY(i), nrm.getZ(i))).toBeCloseTo(1, 5);
    }
    // The knee link hangs about 0.3 m below its joint (the ankle is at z = -0.30001 in g1.xml).
    const b = bounds(pos.array);
    expect(b.min[2]).toBeLessThan(-0.25);
    expect(b.min[2]).toBeGreaterThan(-0.36);
    expect(b.max[2]).toBeLessThan(0.08);
    expect(Math.max(b.max[0] - b.min[0], b.max[1] - b.min[1])).toBeLessThan(0.2);
  });

  it('reads ASCII STL and OBJ (quads split into triangles)', () => {
    const ascii = `solid tri
facet normal 0 0 1
 outer loop
  vertex 0 0 0
  vertex 1 0 0
  vertex 0 1 0
 endloop
endfacet
endsolid tri
`;
    const a = parseMeshGeometry('stl', new TextEncoder().encode(ascii));
    expect(Array.from(a.getAttribute('position').array)).toEqual([0, 0, 0, 1, 0, 0, 0, 1, 0]);
    expect(Array.from(a.getAttribute('normal').array)).toEqual([0, 0, 1, 0, 0, 1, 0, 0, 1]);

    const obj = 'o quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n';
    const o = parseMeshGeometry('obj', new TextEncoder().encode(obj));
    expect(o.getAttribute('position').count).toBe(6);
    expect(o.getAttribute('normal').getZ(0)).toBeCloseTo(1, 12);
  });

  it('refuses a mesh without triangles', () => {
    expect(() => parseMeshGeometry('obj', new TextEncoder().encode('v 0 0 0\n'))).toThrow(/no triangles/);
  });

  it('keeps a cube sharp and a sphere smooth', () => {
    // Cube: 12 triangles; every corner normal stays its face normal (faces meet at 90°).
    const c = [
      [0, 0, 0],
      [1, 0, 0],
      [1, 1, 0],
      [0, 1, 0],
      [0, 0, 1],
      [1, 0, 1],
      [1, 1, 1],
      [0, 1, 1],
    ];
    const quads = [
      [0, 3, 2, 1],
      [4, 5, 6, 7],
      [0, 1, 5, 4],
      [1, 2, 6, 5],
      [2, 3, 7, 6],
      [3, 0, 4, 7],
    ];
    const soup: number[] = [];
    for (const [a, b, cc, d] of quads) for (const v of [a, b, cc, a, cc, d]) soup.push(...c[v]);
    const n = creasedNormals(Float32Array.from(soup), Math.cos((35 * Math.PI) / 180));
    for (let v = 0; v < 36; v++) {
      const len = Math.hypot(n[3 * v], n[3 * v + 1], n[3 * v + 2]);
      expect(len).toBeCloseTo(1, 6);
      expect(Math.max(Math.abs(n[3 * v]), Math.abs(n[3 * v + 1]), Math.abs(n[3 * v + 2]))).toBeCloseTo(1, 6);
    }
    // UV sphere: smooth normals point along the radius.
    const rings = 24;
    const segs = 48;
    const p = (i: number, j: number): number[] => {
      const th = (Math.PI * i) / rings;
      const ph = (2 * Math.PI * j) / segs;
      return [Math.sin(th) * Math.cos(ph), Math.sin(th) * Math.sin(ph), Math.cos(th)];
    };
    const s: number[] = [];
    for (let i = 0; i < rings; i++) {
      for (let j = 0; j < segs; j++) {
        const [a, b, cc, d] = [p(i, j), p(i + 1, j), p(i + 1, j + 1), p(i, j + 1)];
        if (i > 0) s.push(...a, ...b, ...d);
        if (i < rings - 1) s.push(...b, ...cc, ...d);
      }
    }
    const pos = Float32Array.from(s);
    const sn = creasedNormals(pos, Math.cos((35 * Math.PI) / 180));
    let worst = 0;
    for (let v = 0; v < pos.length / 3; v++) {
      const r = Math.hypot(pos[3 * v], pos[3 * v + 1], pos[3 * v + 2]);
      const dot = (sn[3 * v] * pos[3 * v] + sn[3 * v + 1] * pos[3 * v + 1] + sn[3 * v + 2] * pos[3 * v + 2]) / r;
      worst = Math.max(worst, Math.acos(Math.min(1, dot)));
    }
    expect(worst).toBeLessThan((4 * Math.PI) / 180);
  });
});

describe('what the viewport draws of a model', () => {
  it("Menagerie's G1: the visual meshes (group 2), not the collision ones (group 3)", () => {
    const profile = loadRobotProfile(MENAGERIE_G1);
    const drawn = [...drawableGeoms(profile)];
    expect(drawn.every((g) => g.group <= 2)).toBe(true);
    expect(drawn.every((g) => g.type === 'mesh')).toBe(true);
    const names = drawnMeshNames(profile);
    const files = fs.readdirSync(ASSETS).filter((f) => f.endsWith('.STL'));
    expect(names.length).toBe(files.length); // every STL in the folder is a visual mesh
    expect(names).toContain('torso_link');
    expect(names).toContain('left_rubber_hand');
  });

  it('our G1: primitives only, no meshes', () => {
    const profile = loadRobotProfile(OUR_G1);
    expect(drawnMeshNames(profile)).toEqual([]);
    expect(drawableGeoms(profile).size).toBeGreaterThan(20);
  });
});
