// The robot's collision geometry and the floor of a loaded MuJoCo scene: where the robot's lowest
// point is (the floor solve of an initial state) and which contacts other than a foot on the
// floor it makes (recorded with their normal force).

import type { LoadedMujocoModel } from '../mujoco/mujocoRuntime';
import type { BatchContact } from './simProtocol';
import { SimModelError } from './simModelMaps';

type MjData = LoadedMujocoModel['data'];

const mjOBJ_GEOM = 5;
const mjGEOM_PLANE = 0;
const mjGEOM_SPHERE = 2;
const mjGEOM_CAPSULE = 3;
const mjGEOM_ELLIPSOID = 4;
const mjGEOM_CYLINDER = 5;
const mjGEOM_BOX = 6;
const mjGEOM_MESH = 7;

export class SimGeometry {
  private readonly geomBody: Int32Array;
  private readonly geomType: Int32Array;
  private readonly geomSize: Float64Array;
  private readonly geomCollides: Uint8Array;
  private readonly geomMesh: Int32Array;
  private readonly meshVertAdr: Int32Array;
  private readonly meshVertNum: Int32Array;
  private readonly meshVert: Float32Array;
  private readonly floorGeoms: number[];
  private readonly footBodies: Set<number>;
  private readonly geomNames: string[];
  private readonly pyramidal: boolean;

  /** A scene without a floor (a collision plane on the world body) is a SimModelError naming `modelFile`. */
  constructor(
    mj: LoadedMujocoModel,
    private readonly bodyNames: string[],
    private readonly modelFile: string,
  ) {
    const { mujoco, model } = mj;
    const where = modelFile;
    this.geomBody = Int32Array.from(model.geom_bodyid as Int32Array);
    this.geomType = Int32Array.from(model.geom_type as Int32Array);
    this.geomSize = Float64Array.from(model.geom_size as Float64Array);
    const contype = model.geom_contype as Int32Array;
    const conaff = model.geom_conaffinity as Int32Array;
    this.geomCollides = Uint8Array.from({ length: model.ngeom }, (_, g) =>
      contype[g] !== 0 || conaff[g] !== 0 ? 1 : 0,
    );
    this.geomMesh = Int32Array.from(model.geom_dataid as Int32Array);
    this.meshVertAdr = Int32Array.from(model.mesh_vertadr as Int32Array);
    this.meshVertNum = Int32Array.from(model.mesh_vertnum as Int32Array);
    this.meshVert = Float32Array.from(model.mesh_vert as Float32Array);
    this.floorGeoms = [];
    for (let g = 0; g < model.ngeom; g++)
      if (this.geomBody[g] === 0 && this.geomType[g] === mjGEOM_PLANE && this.geomCollides[g]) this.floorGeoms.push(g);
    if (this.floorGeoms.length === 0) {
      throw new SimModelError(
        `${where}: the model has no floor (a collision plane on the world body); for MuJoCo Menagerie's G1 load scene.xml, which includes g1.xml and adds the floor`,
      );
    }
    this.geomNames = [];
    for (let g = 0; g < model.ngeom; g++) this.geomNames.push(mujoco.mj_id2name(model, mjOBJ_GEOM, g) ?? '');
    this.footBodies = new Set(
      ['left_ankle_roll_link', 'right_ankle_roll_link'].map((n) => bodyNames.indexOf(n)).filter((b) => b > 0),
    );
    this.pyramidal = model.opt.cone === 0;
  }

  /** World z of the highest floor plane. */
  floorHeight(data: MjData): number {
    const xpos = data.geom_xpos as Float64Array;
    let h = -Infinity;
    for (const g of this.floorGeoms) h = Math.max(h, xpos[3 * g + 2]);
    return h;
  }

  /** Lowest point (world z) of the robot's collision geometry, after mj_kinematics. */
  lowestContactPoint(data: MjData): number {
    const xpos = data.geom_xpos as Float64Array;
    const xmat = data.geom_xmat as Float64Array;
    let low = Infinity;
    for (let g = 0; g < this.geomBody.length; g++) {
      if (this.geomBody[g] === 0 || !this.geomCollides[g]) continue;
      const cz = xpos[3 * g + 2];
      const m6 = xmat[9 * g + 6];
      const m7 = xmat[9 * g + 7];
      const m8 = xmat[9 * g + 8];
      const s0 = this.geomSize[3 * g];
      const s1 = this.geomSize[3 * g + 1];
      const s2 = this.geomSize[3 * g + 2];
      let z: number;
      switch (this.geomType[g]) {
        case mjGEOM_SPHERE:
          z = cz - s0;
          break;
        case mjGEOM_CAPSULE:
          z = cz - Math.abs(m8) * s1 - s0;
          break;
        case mjGEOM_CYLINDER:
          z = cz - Math.abs(m8) * s1 - s0 * Math.sqrt(Math.max(0, 1 - m8 * m8));
          break;
        case mjGEOM_ELLIPSOID:
          z = cz - Math.sqrt((m6 * s0) ** 2 + (m7 * s1) ** 2 + (m8 * s2) ** 2);
          break;
        case mjGEOM_BOX:
          z = cz - Math.abs(m6) * s0 - Math.abs(m7) * s1 - Math.abs(m8) * s2;
          break;
        case mjGEOM_MESH: {
          const mesh = this.geomMesh[g];
          if (mesh < 0) continue;
          const a = 3 * this.meshVertAdr[mesh];
          const nv = this.meshVertNum[mesh];
          let mn = Infinity;
          const vert = this.meshVert;
          for (let i = 0; i < nv; i++) {
            const o = a + 3 * i;
            const vz = m6 * vert[o] + m7 * vert[o + 1] + m8 * vert[o + 2];
            if (vz < mn) mn = vz;
          }
          z = cz + mn;
          break;
        }
        default:
          continue;
      }
      if (z < low) low = z;
    }
    if (low === Infinity) throw new SimModelError(`${this.modelFile}: the robot has no collision geometry to stand on`);
    return low;
  }

  /** Contacts other than a foot on the floor, with normal force (after mj_step2 or mj_forward). */
  readContacts(data: MjData, frame: number, out: BatchContact[]): void {
    const d = data;
    const ncon = d.ncon;
    if (ncon === 0) return;
    const vec = d.contact;
    const efc = d.efc_force as Float64Array;
    for (let i = 0; i < ncon; i++) {
      const c = vec.get(i);
      if (!c) continue;
      const g1 = c.geom1;
      const g2 = c.geom2;
      const b1 = this.geomBody[g1];
      const b2 = this.geomBody[g2];
      const foot1 = this.footBodies.has(b1);
      const foot2 = this.footBodies.has(b2);
      const floorFoot = (b1 === 0 && foot2) || (b2 === 0 && foot1);
      if (!floorFoot && c.efc_address >= 0) {
        let f = 0;
        const adr = c.efc_address;
        if (this.pyramidal) {
          const rows = c.dim === 1 ? 1 : 2 * (c.dim - 1);
          for (let r = 0; r < rows; r++) f += efc[adr + r];
        } else f = efc[adr];
        const robot = b1 === 0 ? b2 : b1;
        const other = b1 === 0 ? g1 : b2 === 0 ? g2 : -1;
        out.push({
          frame,
          body: this.bodyNames[robot],
          other: other >= 0 ? this.geomNames[other] || 'world' : this.bodyNames[b2 === robot ? b1 : b2],
          forceN: f,
        });
      }
      c.delete();
    }
    vec.delete();
  }
}
