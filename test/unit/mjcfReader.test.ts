import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { G1_END_EFFECTORS, G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { MENAGERIE_G1_BODY_NAMES } from '../helpers/menagerieG1Bodies';
import { MENAGERIE_G1, MENAGERIE_SCENE, OUR_G1 } from '../helpers/sharedData';
import { captureError, readVirtual } from './mjcfTestHelpers';

const MENAGERIE_TEXT = fs.readFileSync(MENAGERIE_G1, 'utf8');

describe('MJCF reader on MuJoCo Menagerie g1.xml', () => {
  const profile = loadRobotProfile(MENAGERIE_G1);

  it('reads the 30 bodies in MuJoCo depth-first order with their parents', () => {
    expect(profile.bodies.map((b) => b.name)).toEqual(MENAGERIE_G1_BODY_NAMES);
    expect(profile.bodies[0].parent).toBe(-1);
    expect(profile.bodies[0].joint?.kind).toBe('free');
    const parentName = (n: string) => profile.bodies[profile.bodies.find((b) => b.name === n)!.parent].name;
    expect(parentName('left_shoulder_pitch_link')).toBe('torso_link');
    expect(parentName('waist_yaw_link')).toBe('pelvis');
    expect(parentName('right_wrist_yaw_link')).toBe('right_wrist_pitch_link');
  });

  it('reads the 29 hinge joints in canonical order with axes and limits in radians', () => {
    expect(profile.joints.map((j) => j.name)).toEqual([...G1_JOINT_NAMES]);
    const knee = profile.joints[3];
    expect(knee.axis).toEqual([0, 1, 0]);
    expect(knee.rangeRad).toEqual([-0.087267, 2.8798]);
    expect(profile.joints.find((j) => j.name === 'left_hip_roll_joint')!.axis).toEqual([1, 0, 0]);
    expect(profile.joints.every((j) => j.rangeRad !== null)).toBe(true);
  });

  it('applies body offsets and quaternions', () => {
    const roll = profile.bodies[2];
    expect(roll.posM).toEqual([0, 0.052, -0.030465]);
    const n = Math.hypot(0.996179, 0.0873386);
    expect(roll.quatWxyz[0]).toBeCloseTo(0.996179 / n, 12);
    expect(roll.quatWxyz[2]).toBeCloseTo(-0.0873386 / n, 12);
    expect(profile.bodies[0].massKg).toBeCloseTo(3.813, 9);
  });

  it('resolves default classes, childclass and meshdir', () => {
    const pelvis = profile.bodies[0];
    const visual = pelvis.geoms.find((g) => g.group === 2)!;
    expect(visual.type).toBe('mesh');
    expect(visual.collides).toBe(false);
    expect(visual.mesh!.file.endsWith('unitree_g1_mjcf/assets/pelvis.STL')).toBe(true);
    const torsoMesh = profile.bodies[15].geoms.find((g) => g.mesh)!;
    expect(torsoMesh.mesh!.file.endsWith('assets/torso_link_rev_1_0.STL')).toBe(true);
    const feet = profile.bodies[6].geoms.filter((g) => g.type === 'sphere');
    expect(feet).toHaveLength(4);
    expect(feet[0].size).toEqual([0.005]);
    // position actuators from class g1: kp 500, ctrlrange inherited from the joint range
    expect(profile.actuators).toHaveLength(29);
    expect(profile.actuators[3]).toMatchObject({ name: 'left_knee_joint', jointIndex: 3, kind: 'position', kp: 500 });
    expect(profile.actuators[3].ctrlRange![0]).toBeCloseTo(-0.087267, 12);
    expect(profile.actuators[3].ctrlRange![1]).toBeCloseTo(2.8798, 12);
  });

  it('takes the default pose from the stand keyframe', () => {
    expect(profile.defaultPoseSource).toBe('keyframe:stand');
    expect(profile.defaultPose.rootPosM).toEqual([0, 0, 0.79]);
    expect(profile.defaultPose.jointPosRad.slice(15, 22)).toEqual([0.2, 0.2, 0, 1.28, 0, 0, 0]);
    expect(profile.defaultPose.jointPosRad.slice(22)).toEqual([0.2, -0.2, 0, 1.28, 0, 0, 0]);
  });

  it('names the end-effectors of the metric contract', () => {
    expect(profile.endEffectorBodyIndices.map((i) => profile.bodies[i].name)).toEqual([...G1_END_EFFECTORS]);
  });

  it('reads scene.xml through its <include> to the same robot', () => {
    const scene = loadRobotProfile(MENAGERIE_SCENE);
    expect(scene.bodies.map((b) => b.name)).toEqual(MENAGERIE_G1_BODY_NAMES);
    expect(scene.joints).toEqual(profile.joints);
  });
});

describe('MJCF reader on our own G1 (assets/g1)', () => {
  it('reads our model with the canonical joints, primitive geoms only, and a stand keyframe', () => {
    const ours = loadRobotProfile(OUR_G1);
    expect(ours.bodies.map((b) => b.name)).toEqual(MENAGERIE_G1_BODY_NAMES);
    expect(ours.joints.map((j) => j.name)).toEqual([...G1_JOINT_NAMES]);
    expect(ours.actuators).toHaveLength(29);
    expect(ours.defaultPoseSource).toBe('keyframe:stand');
    const geoms = ours.bodies.flatMap((b) => b.geoms);
    expect(geoms.length).toBeGreaterThan(29);
    expect(geoms.some((g) => g.type === 'mesh')).toBe(false);
    expect(ours.bodies.every((b) => b.massKg > 0)).toBe(true);
  });
});

describe('MJCF reader errors', () => {
  const entry = 'models/g1.xml';

  it('reports a missing joint by name', () => {
    const text = MENAGERIE_TEXT.replace(/<joint name="left_elbow_joint"[^>]*\/>/, '');
    const err = captureError(() => readVirtual({ [entry]: text }, entry));
    expect(err.reason).toMatch(/missing joint: left_elbow_joint/);
    expect(err.location.file).toBe(entry);
  });

  it('reports an unknown joint name with its line and column', () => {
    const text = MENAGERIE_TEXT.replace('name="left_knee_joint"', 'name="left_knee"');
    const line = text.split('\n').findIndex((l) => l.includes('name="left_knee"')) + 1;
    const err = captureError(() => readVirtual({ [entry]: text }, entry));
    expect(err.reason).toMatch(/unknown joint name "left_knee"/);
    expect(err.location.line).toBe(line);
    expect(err.message).toContain(`${entry}:${line}:`);
  });

  it('shows the remap when the joint order differs from the canonical one', () => {
    // Swap the two arms' subtrees: right arm joints come first in document order.
    const left = MENAGERIE_TEXT.indexOf('<body name="left_shoulder_pitch_link"');
    const right = MENAGERIE_TEXT.indexOf('<body name="right_shoulder_pitch_link"');
    const end = MENAGERIE_TEXT.lastIndexOf('</body>', MENAGERIE_TEXT.indexOf('</worldbody>'));
    // The torso closes right before the pelvis closes; cut the right arm up to the torso's close.
    const torsoClose = MENAGERIE_TEXT.lastIndexOf('</body>', MENAGERIE_TEXT.lastIndexOf('</body>', end - 1) - 1);
    const leftArm = MENAGERIE_TEXT.slice(left, right);
    const rightArm = MENAGERIE_TEXT.slice(right, torsoClose);
    const text = MENAGERIE_TEXT.slice(0, left) + rightArm + leftArm + MENAGERIE_TEXT.slice(torsoClose);
    // The swapped text must still be a valid tree with both arms (checked by the remap content).
    const err = captureError(() => readVirtual({ [entry]: text }, entry));
    expect(err.reason).toMatch(/joint order differs/);
    expect(err.reason).toContain('model #15 right_shoulder_pitch_joint -> canonical #22');
    expect(err.reason).toContain('model #22 left_shoulder_pitch_joint -> canonical #15');
  });

  it('reports malformed XML with line and column', () => {
    const err = captureError(() =>
      readVirtual({ [entry]: '<mujoco>\n  <worldbody>\n    <body name="a">\n  </worldbody>\n</mujoco>' }, entry),
    );
    expect(err.location).toMatchObject({ file: entry, line: 4, column: 3 });
    expect(err.reason).toMatch(/<\/worldbody> closes <body>/);
  });

  it('reports a missing include file', () => {
    const err = captureError(() => readVirtual({ [entry]: '<mujoco><include file="robot.xml"/></mujoco>' }, entry));
    expect(err.location.file).toBe('models/robot.xml');
    expect(err.reason).toMatch(/cannot read the file/);
  });

  it('reports a model without a floating base', () => {
    const err = captureError(() =>
      readVirtual(
        { [entry]: '<mujoco><worldbody><body name="a"><joint name="j"/><geom size="1"/></body></worldbody></mujoco>' },
        entry,
      ),
    );
    expect(err.reason).toMatch(/no body has a free joint/);
  });

  it('reports an unreadable number with its attribute', () => {
    const text = MENAGERIE_TEXT.replace('range="-0.087267 2.8798"', 'range="-0.087267 abc"');
    const err = captureError(() => readVirtual({ [entry]: text }, entry));
    expect(err.location.key).toBe('range');
    expect(err.reason).toMatch(/"abc" is not a finite number/);
  });
});

describe('MJCF reader conventions', () => {
  it('converts degrees, euler angles and fromto as MuJoCo does', () => {
    const joints =
      G1_JOINT_NAMES.map(
        (n, k) => `<body name="b${k}" pos="0 0 -0.01"><joint name="${n}" range="-90 90"/><geom size="0.01"/>`,
      ).join('') + '</body>'.repeat(29);
    const xml = `<mujoco model="t"><compiler angle="degree"/><worldbody><body name="root" euler="0 0 90"><freejoint/>
      <geom type="capsule" fromto="0 0 0 0 0 0.4" size="0.05"/>${joints}</body></worldbody></mujoco>`;
    const p = readVirtual({ 't.xml': xml }, 't.xml', []);
    expect(p.joints[0].rangeRad![0]).toBeCloseTo(-Math.PI / 2, 12);
    expect(p.bodies[0].quatWxyz[0]).toBeCloseTo(Math.SQRT1_2, 12);
    expect(p.bodies[0].quatWxyz[3]).toBeCloseTo(Math.SQRT1_2, 12);
    const cap = p.bodies[0].geoms[0];
    expect(cap.posM).toEqual([0, 0, 0.2]);
    expect(cap.size).toEqual([0.05, 0.2]);
  });
});

it('profiles are plain data (structured-clone/JSON safe for the API)', () => {
  const p = loadRobotProfile(MENAGERIE_G1);
  expect(JSON.parse(JSON.stringify(p))).toEqual(p);
});
