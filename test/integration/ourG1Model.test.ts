// Our own G1 model (assets/g1/g1.xml, primitives only, written from published G1 rev 1.0
// figures): structure identical to MuJoCo Menagerie's unitree_g1, no meshes, realistic mass,
// and it stands under its own position servos. Real MuJoCo (mujoco-js) throughout; the
// Menagerie model is read from ../shared/data (third-party, never copied into the repo).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, expect } from 'vitest';
import { loadMujocoModel, type LoadedMujocoModel } from '../../src/services/mujoco/mujocoRuntime';
import { G1_END_EFFECTORS, G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { MENAGERIE_G1_BODY_NAMES, MENAGERIE_G1_BODY_PARENTS } from '../helpers/menagerieG1Bodies';
import { MENAGERIE_G1, OUR_G1 } from '../helpers/sharedData';

/** Published effort limit (N m) of each canonical joint (G1 rev 1.0 URDF). */
const EFFORT_LIMIT: Record<string, number> = {
  hip_pitch: 88,
  hip_yaw: 88,
  waist_yaw: 88,
  hip_roll: 139,
  knee: 139,
  ankle_pitch: 50,
  ankle_roll: 50,
  waist_roll: 50,
  waist_pitch: 50,
  shoulder_pitch: 25,
  shoulder_roll: 25,
  shoulder_yaw: 25,
  elbow: 25,
  wrist_roll: 25,
  wrist_pitch: 5,
  wrist_yaw: 5,
};
function effortLimit(joint: string): number {
  const key = joint.replace(/^(left|right)_/, '').replace(/_joint$/, '');
  const limit = EFFORT_LIMIT[key];
  if (limit === undefined) throw new Error(`no effort limit for ${joint}`);
  return limit;
}

async function withModel<T>(file: string, fn: (m: LoadedMujocoModel) => T | Promise<T>): Promise<T> {
  const loaded = await loadMujocoModel(file);
  try {
    return await fn(loaded);
  } finally {
    loaded.dispose();
  }
}

function name(m: LoadedMujocoModel, type: 'body' | 'joint' | 'actuator' | 'geom', id: number): string {
  const obj = {
    body: m.mujoco.mjtObj.mjOBJ_BODY,
    joint: m.mujoco.mjtObj.mjOBJ_JOINT,
    actuator: m.mujoco.mjtObj.mjOBJ_ACTUATOR,
    geom: m.mujoco.mjtObj.mjOBJ_GEOM,
  }[type];
  return m.mujoco.mj_id2name(m.model, obj.value, id);
}

function id(m: LoadedMujocoModel, type: 'body' | 'site' | 'sensor', objName: string): number {
  const obj = {
    body: m.mujoco.mjtObj.mjOBJ_BODY,
    site: m.mujoco.mjtObj.mjOBJ_SITE,
    sensor: m.mujoco.mjtObj.mjOBJ_SENSOR,
  }[type];
  return m.mujoco.mj_name2id(m.model, obj.value, objName);
}

function keyIndex(m: LoadedMujocoModel, keyName: string): number {
  return m.mujoco.mj_name2id(m.model, m.mujoco.mjtObj.mjOBJ_KEY.value, keyName);
}

function totalMass(m: LoadedMujocoModel): number {
  let mass = 0;
  for (let b = 0; b < m.model.nbody; b++) mass += m.model.body_mass[b];
  return mass;
}

/** Angle between the body's z axis and the world's z axis, from its world quaternion (wxyz). */
function tiltOf(m: LoadedMujocoModel, body: number): number {
  const q = m.data.xquat;
  const qx = q[4 * body + 1];
  const qy = q[4 * body + 2];
  return Math.acos(Math.min(1, Math.max(-1, 1 - 2 * (qx * qx + qy * qy))));
}

/** Bodies touching the floor (world body 0) in the current contact set. */
function bodiesOnFloor(m: LoadedMujocoModel): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i < m.data.ncon; i++) {
    const c = m.data.contact.get(i);
    if (!c) continue;
    const b1 = m.model.geom_bodyid[c.geom1];
    const b2 = m.model.geom_bodyid[c.geom2];
    if (b1 === 0 && b2 !== 0) out.add(name(m, 'body', b2));
    if (b2 === 0 && b1 !== 0) out.add(name(m, 'body', b1));
    c.delete();
  }
  return out;
}

/** Resets to the stand keyframe and holds it with ctrl = the keyframe's joint angles. */
function resetToStand(m: LoadedMujocoModel): void {
  const { mujoco, model, data } = m;
  const key = keyIndex(m, 'stand');
  expect(key).toBeGreaterThanOrEqual(0);
  mujoco.mj_resetDataKeyframe(model, data, key);
  const standJoints = Array.from(model.key_qpos.slice(key * model.nq + 7, (key + 1) * model.nq) as Float64Array);
  data.ctrl.set(standJoints);
  mujoco.mj_forward(model, data);
}

describe('our G1 model (assets/g1/g1.xml)', () => {
  it('has Menagerie’s structure: 30 bodies, nq 36, 29 limited hinge joints and actuators in canonical order', async () => {
    await withModel(OUR_G1, (m) => {
      const { mujoco, model } = m;
      expect(model.nbody).toBe(31); // 30 bodies + world
      expect(model.nq).toBe(36);
      expect(model.nv).toBe(35);
      expect(model.nu).toBe(29);
      expect(model.njnt).toBe(30);

      const bodies = Array.from({ length: 30 }, (_, i) => name(m, 'body', i + 1));
      expect(bodies).toEqual(MENAGERIE_G1_BODY_NAMES);
      const parents = Array.from({ length: 30 }, (_, i) => name(m, 'body', model.body_parentid[i + 1]));
      expect(parents).toEqual(MENAGERIE_G1_BODY_PARENTS);
      for (const ee of G1_END_EFFECTORS) expect(bodies).toContain(ee);

      // Free joint first, on the pelvis.
      expect(name(m, 'joint', 0)).toBe('floating_base_joint');
      expect(model.jnt_type[0]).toBe(mujoco.mjtJoint.mjJNT_FREE.value);
      expect(name(m, 'body', model.jnt_bodyid[0])).toBe('pelvis');

      const joints = Array.from({ length: 29 }, (_, i) => name(m, 'joint', i + 1));
      expect(joints).toEqual([...G1_JOINT_NAMES]);
      const actuators = Array.from({ length: 29 }, (_, i) => name(m, 'actuator', i));
      expect(actuators).toEqual([...G1_JOINT_NAMES]);

      for (let j = 1; j <= 29; j++) {
        const jointName = name(m, 'joint', j);
        expect(model.jnt_type[j], jointName).toBe(mujoco.mjtJoint.mjJNT_HINGE.value);
        expect(model.jnt_limited[j], `${jointName} limited`).toBe(1);
        const lo = model.jnt_range[2 * j];
        const hi = model.jnt_range[2 * j + 1];
        expect(lo, jointName).toBeLessThan(0);
        expect(hi, jointName).toBeGreaterThan(0);
        // qpos layout: joint j at 7 + (j - 1).
        expect(model.jnt_qposadr[j]).toBe(7 + (j - 1));

        // Actuator j-1 drives joint j, ctrlrange = joint range, forcerange = published effort limit.
        const a = j - 1;
        expect(model.actuator_trnid[2 * a], `${jointName} actuator target`).toBe(j);
        expect(model.actuator_ctrllimited[a]).toBe(1);
        expect(model.actuator_ctrlrange[2 * a]).toBeCloseTo(lo, 9);
        expect(model.actuator_ctrlrange[2 * a + 1]).toBeCloseTo(hi, 9);
        const effort = effortLimit(jointName);
        expect(model.actuator_forcelimited[a]).toBe(1);
        expect(model.actuator_forcerange[2 * a]).toBe(-effort);
        expect(model.actuator_forcerange[2 * a + 1]).toBe(effort);
        // Position servo: gain kp, bias -kp*q - kv*qdot.
        const kp = model.actuator_gainprm[10 * a];
        expect(kp, `${jointName} kp`).toBeGreaterThan(0);
        expect(model.actuator_biasprm[10 * a + 1]).toBeCloseTo(-kp, 9);
        expect(model.actuator_biasprm[10 * a + 2], `${jointName} kv`).toBeLessThan(0);
        // Realistic joint parameters.
        expect(model.dof_armature[6 + (j - 1)]).toBeGreaterThan(0);
        expect(model.dof_armature[6 + (j - 1)]).toBeLessThan(0.05);
      }

      // Joint ranges equal Menagerie's (the canonical table in SOURCES.md).
      expect(model.jnt_range[2 * 1]).toBeCloseTo(-2.5307, 6);
      expect(model.jnt_range[2 * 8 + 1]).toBeCloseTo(0.5236, 6); // right_hip_roll upper

      for (const site of ['imu_in_pelvis', 'imu_in_torso', 'left_foot', 'right_foot']) {
        expect(id(m, 'site', site), site).toBeGreaterThanOrEqual(0);
      }
      for (const sensor of [
        'imu-torso-angular-velocity',
        'imu-torso-linear-acceleration',
        'imu-pelvis-angular-velocity',
        'imu-pelvis-linear-acceleration',
      ]) {
        expect(id(m, 'sensor', sensor), sensor).toBeGreaterThanOrEqual(0);
      }
      expect(model.opt.timestep).toBe(0.002);
      expect(model.opt.integrator).toBe(mujoco.mjtIntegrator.mjINT_IMPLICITFAST.value);
      expect(keyIndex(m, 'stand')).toBeGreaterThanOrEqual(0);
    });
  });

  it('stand keyframe: ctrl equals the joint angles, arms as in Menagerie, feet within 1 cm of the floor', async () => {
    await withModel(OUR_G1, (m) => {
      const { model, data } = m;
      const key = keyIndex(m, 'stand');
      const qpos = Array.from(model.key_qpos.slice(key * model.nq, (key + 1) * model.nq) as Float64Array);
      const ctrl = Array.from(model.key_ctrl.slice(key * model.nu, (key + 1) * model.nu) as Float64Array);
      expect(qpos.slice(3, 7)).toEqual([1, 0, 0, 0]);
      expect(qpos.slice(7, 22)).toEqual(new Array(15).fill(0));
      expect(qpos.slice(22, 29)).toEqual([0.2, 0.2, 0, 1.28, 0, 0, 0]);
      expect(qpos.slice(29, 36)).toEqual([0.2, -0.2, 0, 1.28, 0, 0, 0]);
      expect(ctrl).toEqual(qpos.slice(7));

      resetToStand(m);
      for (const foot of ['left_foot', 'right_foot']) {
        const z = data.site_xpos[3 * id(m, 'site', foot) + 2];
        expect(Math.abs(z), `${foot} site height ${z}`).toBeLessThan(0.01);
      }
      // Lowest point of each foot's collision geometry (contact spheres): on the floor, not in it.
      for (const foot of ['left_ankle_roll_link', 'right_ankle_roll_link']) {
        const body = id(m, 'body', foot);
        let lowest = Infinity;
        for (let g = 0; g < model.ngeom; g++) {
          if (model.geom_bodyid[g] !== body || model.geom_contype[g] === 0) continue;
          expect(model.geom_type[g]).toBe(m.mujoco.mjtGeom.mjGEOM_SPHERE.value);
          lowest = Math.min(lowest, data.geom_xpos[3 * g + 2] - model.geom_size[3 * g]);
        }
        expect(Math.abs(lowest), `${foot} sole height ${lowest}`).toBeLessThan(0.01);
        expect(lowest).toBeGreaterThan(-0.002);
      }
    });
  });

  it('stands for 10 s holding the stand pose under its own position actuators', async () => {
    await withModel(OUR_G1, (m) => {
      const { mujoco, model, data } = m;
      resetToStand(m);
      const pelvis = id(m, 'body', 'pelvis');
      const z0 = data.xpos[3 * pelvis + 2];
      const steps = Math.round(10 / model.opt.timestep);
      let maxTilt = 0;
      for (let i = 0; i < steps; i++) {
        mujoco.mj_step(model, data);
        maxTilt = Math.max(maxTilt, tiltOf(m, pelvis));
      }
      expect(data.time).toBeCloseTo(10, 6);
      expect(Array.from(data.qpos as Float64Array).every(Number.isFinite)).toBe(true);
      const z = data.xpos[3 * pelvis + 2];
      const drift = z - z0;
      console.log(
        `our G1 stand 10 s: pelvis z ${z0.toFixed(4)} -> ${z.toFixed(4)} m, drift ${(drift * 1000).toFixed(2)} mm, ` +
          `max pelvis tilt ${maxTilt.toFixed(4)} rad`,
      );
      expect(Math.abs(drift)).toBeLessThan(0.05);
      expect(maxTilt).toBeLessThan(0.2);
      expect(tiltOf(m, pelvis)).toBeLessThan(0.2);
      const onFloor = bodiesOnFloor(m);
      expect(onFloor.has('left_ankle_roll_link'), `on floor: ${[...onFloor].join(', ')}`).toBe(true);
      expect(onFloor.has('right_ankle_roll_link'), `on floor: ${[...onFloor].join(', ')}`).toBe(true);
      expect([...onFloor].sort()).toEqual(['left_ankle_roll_link', 'right_ankle_roll_link']);
    });
  });

  it('compiles without any mesh file: primitives only, loads from a directory holding just g1.xml', async () => {
    const xml = fs.readFileSync(OUR_G1, 'utf8');
    expect(xml).not.toMatch(/<mesh\b/);
    expect(xml).not.toMatch(/\bfile\s*=/);
    expect(xml).not.toMatch(/\bmeshdir\s*=/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-g1-'));
    try {
      const lonely = path.join(dir, 'g1.xml');
      fs.copyFileSync(OUR_G1, lonely);
      await withModel(lonely, ({ mujoco, model }) => {
        expect(model.nmesh).toBe(0);
        expect(model.nbody).toBe(31);
        const primitives = new Set<number>([
          mujoco.mjtGeom.mjGEOM_PLANE.value,
          mujoco.mjtGeom.mjGEOM_SPHERE.value,
          mujoco.mjtGeom.mjGEOM_CAPSULE.value,
          mujoco.mjtGeom.mjGEOM_CYLINDER.value,
          mujoco.mjtGeom.mjGEOM_BOX.value,
        ]);
        for (let g = 0; g < model.ngeom; g++) expect(primitives.has(model.geom_type[g])).toBe(true);
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has a total mass within 10% of Menagerie’s G1 (about 33 kg)', async () => {
    const ours = await withModel(OUR_G1, totalMass);
    const menagerie = await withModel(MENAGERIE_G1, totalMass);
    console.log(`total mass: ours ${ours.toFixed(3)} kg, Menagerie ${menagerie.toFixed(3)} kg`);
    expect(menagerie).toBeGreaterThan(30);
    expect(Math.abs(ours - menagerie) / menagerie).toBeLessThan(0.1);
  });
});
