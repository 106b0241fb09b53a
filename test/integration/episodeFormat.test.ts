// `motionbench-episode/2` read back independently: a real simulated
// episode is opened with @mcap/core's indexed reader, @mcap/support's decompressors and protobufjs
// built from the FileDescriptorSet stored in the file alone (test/helpers/traceMcap.ts), never
// with the program's schemas or its episode reader, and must reproduce the recorder's in-memory
// frames bit for bit; its FrameTransforms are FK of each frame snapped to the stated grids and
// compose to FK within the stated bound (trackPrecision.ts); a float32 robot stream is
// stored exactly; and /1 and /2 of the same frames read the same through the program's reader.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import protobuf from 'protobufjs';
import 'protobufjs/ext/descriptor.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateFrame } from '../../src/domain/robot/stateFrame';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { resampleClip } from '../../src/domain/motion/resample';
import { BodyFrameTree } from '../../src/domain/robot/bodyTransforms';
import { ForwardKinematics } from '../../src/domain/robot/forwardKinematics';
import type { RobotProfile } from '../../src/domain/robot/robotProfile';
import { roundToFloat32 } from '../../src/domain/robotEmulator/sensorModel';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { clipHead } from '../../src/domain/sim/clipWindow';
import { readEpisodeFile, trajectorySha256OfEpisode } from '../../src/services/episode/episodeReader';
import { TOPICS } from '../../src/services/episode/episodeSchemas';
import { EpisodeWriter } from '../../src/services/episode/episodeWriter';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { runSimEpisode, type SimEpisodeResult } from '../../src/services/sim/runSimEpisode';
import {
  TRACK_POSITION_STEP_M,
  TRACK_QUATERNION_STEP,
  TRACK_WORLD_POSITION_BOUND_M,
  TRACK_WORLD_ROTATION_BOUND_RAD,
  movingFrames,
} from '../../src/services/episode/trackPrecision';
import { messagesOf, storedTreeDeviations, treeError, type Obj } from '../helpers/episodeReadBack';
import { withIndexedMcap } from '../helpers/traceMcap';
import { OUR_G1, sharedData } from '../helpers/sharedData';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-episode-format-'));
const file = path.join(dir, 'sim.mcap');
let sim: EmbeddedSimulator;
let result: SimEpisodeResult;
let profile: RobotProfile;
let clip: MotionClip;

beforeAll(async () => {
  sim = new EmbeddedSimulator({ modelFile: OUR_G1, workers: 1 });
  await sim.ready();
  profile = loadRobotProfile(OUR_G1);
  clip = clipHead(loadClipFile(sharedData('motions/lafan1_g1_csv/dance1_subject2.csv')), 3);
  result = await runSimEpisode(sim, {
    clip,
    binding: makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) }),
    profile,
    seed: 3,
    out: file,
  });
});
afterAll(async () => {
  await sim?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Index of the first element whose float64 bits differ (-1: bit-identical, same length). */
function firstBitDifference(got: unknown, want: ArrayLike<number> | null): number {
  const a = Float64Array.from((got as number[] | null | undefined) ?? []);
  const b = Float64Array.from(want ?? []);
  if (a.length !== b.length) return Math.min(a.length, b.length);
  const ua = new BigUint64Array(a.buffer);
  const ub = new BigUint64Array(b.buffer);
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) return i;
  return -1;
}

const STATE_FIELDS = ['rootPosM', 'rootQuatWxyz', 'jointPosRad', 'jointVelRadS', 'jointTauNm'] as const;

/** The fields of an executed message that differ in bits from `f` (empty: identical). */
function executedDifferences(m: Obj, f: StateFrame): string[] {
  const bad: string[] = [];
  if (!Object.is(m.timeS, f.timeS)) bad.push('timeS');
  if (m.tick !== f.tick) bad.push('tick');
  for (const k of STATE_FIELDS) if (firstBitDifference(m[k], f[k]) >= 0) bad.push(k);
  const imu = m.imu as Obj;
  for (const k of ['quatWxyz', 'gyroRadS', 'accelMS2'] as const)
    if (firstBitDifference(imu[k], f.imu[k]) >= 0) bad.push(`imu.${k}`);
  return bad;
}

describe('motionbench-episode/2, read back from the file alone', () => {
  it('every executed frame, reference frame, command and live reading is bit-exact against the recorder’s in-memory values', async () => {
    const executed = await messagesOf(file, TOPICS.executed);
    expect(executed.length).toBe(result.frames.length);
    expect(new Set(executed.map((e) => e.schema))).toEqual(new Set(['motionbench.StateFrame']));
    const bad: string[] = [];
    executed.forEach(({ msg }, k) => {
      const f = result.frames[k];
      for (const d of executedDifferences(msg, f)) bad.push(`frame ${k}: ${d}`);
      if ((msg.referenceFrame ?? null) !== f.referenceFrame) bad.push(`frame ${k}: referenceFrame`);
      const contacts = ((msg.contacts as Obj | null)?.items ?? []) as Obj[];
      const want = f.contacts ?? [];
      if (
        contacts.length !== want.length ||
        contacts.some(
          (c, i) => c.body !== want[i].body || c.other !== want[i].other || !Object.is(c.forceN, want[i].forceN),
        )
      )
        bad.push(`frame ${k}: contacts`);
      const x = result.extras[k];
      if (firstBitDifference(msg.rootLinVelMps, x.rootLinVelMps) >= 0) bad.push(`frame ${k}: rootLinVelMps`);
      if (firstBitDifference(msg.rootAngVelRadS, x.rootAngVelRadS) >= 0) bad.push(`frame ${k}: rootAngVelRadS`);
    });
    expect(bad).toEqual([]);
    // the negative control of the comparison: one bit off is seen
    const probe = { ...executed[7].msg, jointPosRad: [...(executed[7].msg.jointPosRad as number[])] };
    (probe.jointPosRad as number[])[12] = Math.fround((probe.jointPosRad as number[])[12]) + 2 ** -40;
    expect(executedDifferences(probe, result.frames[7])).toEqual(['jointPosRad']);

    const ref50 = resampleClip(clip, 50);
    const reference = await messagesOf(file, TOPICS.reference);
    expect(reference.length).toBe(ref50.frameCount);
    reference.forEach(({ msg }, k) => {
      expect(msg.frame).toBe(k);
      expect(firstBitDifference(msg.jointPosRad, ref50.jointPosRad.subarray(29 * k, 29 * k + 29))).toBe(-1);
      expect(firstBitDifference(msg.rootPosM, ref50.rootPosM.subarray(3 * k, 3 * k + 3))).toBe(-1);
      expect(firstBitDifference(msg.rootQuatWxyz, ref50.rootQuatWxyz.subarray(4 * k, 4 * k + 4))).toBe(-1);
    });

    const commands = await messagesOf(file, TOPICS.commands);
    expect(commands.length).toBe(result.extras.length);
    commands.forEach(({ msg }, k) => {
      const c = result.extras[k].command;
      expect(firstBitDifference(msg.jointTargetRad, c.jointTargetRad)).toBe(-1);
      expect(firstBitDifference(msg.kp, c.kp)).toBe(-1);
      expect(firstBitDifference(msg.kd, c.kd)).toBe(-1);
      const w = msg.rootAssistWrench as Obj | null;
      const a = result.extras[k].assistWrench;
      if (!a || !w) expect([w, a]).toEqual([null, null]);
      else expect(firstBitDifference([...(w.forceN as number[]), ...(w.torqueNm as number[])], a)).toBe(-1);
    });

    const live = await messagesOf(file, TOPICS.metricsLive);
    expect(live.length).toBe(result.extras.length);
    live.forEach(({ msg }, k) => {
      const l = result.extras[k].live;
      expect(msg.mpjpeLMm ?? null).toBe(l.mpjpeLMm);
      expect(msg.jointRmseRad ?? null).toBe(l.jointRmseRad);
      expect(msg.firstFailureFrame).toBe(l.firstFailureFrame);
    });
  });

  it('both robots’ transform trees are there, in the schemas Foxglove’s 3D panel renders, stored as FK snapped to the stated grids, and compose to FK of each frame within the stated bound', async () => {
    await withIndexedMcap(file, async (reader) => {
      const byTopic = new Map([...reader.channelsById.values()].map((c) => [c.topic, c]));
      for (const [topic, schema] of [
        [TOPICS.execTransforms, 'foxglove.FrameTransforms'],
        [TOPICS.refTransforms, 'foxglove.FrameTransforms'],
        [TOPICS.execScene, 'foxglove.SceneUpdate'],
        [TOPICS.refScene, 'foxglove.SceneUpdate'],
      ] as const) {
        const ch = byTopic.get(topic)!;
        expect(ch.messageEncoding).toBe('protobuf');
        const s = reader.schemasById.get(ch.schemaId)!;
        expect(s.name).toBe(schema);
        // field names as in Foxglove's published schema (snake_case), not the program's
        const root = protobuf.Root.fromDescriptor(s.data, { keepCase: true });
        expect(root.lookupType('foxglove.FrameTransform').fieldsArray.map((f) => f.name)).toEqual([
          'timestamp',
          'parent_frame_id',
          'child_frame_id',
          'translation',
          'rotation',
        ]);
      }
      // each transforms channel names the grids its values are on
      for (const topic of [TOPICS.execTransforms, TOPICS.refTransforms])
        expect(Object.fromEntries(byTopic.get(topic)!.metadata)).toEqual({
          position_step_m: String(TRACK_POSITION_STEP_M),
          quaternion_step: String(TRACK_QUATERNION_STEP),
        });
    });

    // Stored value by value: the exact tree of the frame (BodyFrameTree, FK in each parent's
    // frame) with its moving values snapped to the grids, every constant value bit-exact.
    const tree = new BodyFrameTree(profile);
    const moving = movingFrames(tree, profile);
    const grids = { positionStepM: TRACK_POSITION_STEP_M, quaternionStep: TRACK_QUATERNION_STEP };
    const exactPos = new Float64Array(3 * tree.frames.length);
    const exactQuat = new Float64Array(4 * tree.frames.length);
    // the root and the 29 hinges move; for the G1 no hinge's anchor is off its body's origin
    expect([moving.rotation.length, moving.translation.length]).toEqual([30, 1]);

    // Composed from `world` (each rotation normalised, as Foxglove's panel draws it): every
    // body's world pose against ForwardKinematics.
    const fk = new ForwardKinematics(profile);
    const nb = profile.bodies.length;
    const fkPos = new Float64Array(3 * nb);
    const fkQuat = new Float64Array(4 * nb);
    const exec = await messagesOf(file, TOPICS.execTransforms);
    expect(exec.length).toBe(result.frames.length);
    let worst = { posM: 0, rotRad: 0 };
    const deviations: string[] = [];
    exec.forEach(({ msg }, k) => {
      const f = result.frames[k];
      tree.compute(f.rootPosM!, f.rootQuatWxyz!, f.jointPosRad, exactPos, exactQuat);
      deviations.push(
        ...storedTreeDeviations(msg, tree, moving, grids, exactPos, exactQuat).map((d) => `exec ${k}: ${d}`),
      );
      fk.compute(f.rootPosM!, f.rootQuatWxyz!, f.jointPosRad, fkPos, fkQuat);
      const e = treeError(msg, profile, 'exec', 'world', fkPos, fkQuat);
      worst = { posM: Math.max(worst.posM, e.posM), rotRad: Math.max(worst.rotRad, e.rotRad) };
    });

    const ref50 = resampleClip(clip, 50);
    const ref = await messagesOf(file, TOPICS.refTransforms);
    expect(ref.length).toBe(ref50.frameCount);
    ref.forEach(({ msg }, k) => {
      const at = (a: Float64Array, n: number) => a.subarray(n * k, n * k + n);
      tree.compute(at(ref50.rootPosM, 3), at(ref50.rootQuatWxyz, 4), at(ref50.jointPosRad, 29), exactPos, exactQuat);
      deviations.push(
        ...storedTreeDeviations(msg, tree, moving, grids, exactPos, exactQuat).map((d) => `ref ${k}: ${d}`),
      );
      fk.compute(ref50.rootPosM, ref50.rootQuatWxyz, ref50.jointPosRad, fkPos, fkQuat, 3 * k, 4 * k, 29 * k);
      const e = treeError(msg, profile, 'ref', 'world', fkPos, fkQuat);
      worst = { posM: Math.max(worst.posM, e.posM), rotRad: Math.max(worst.rotRad, e.rotRad) };
    });
    expect(deviations).toEqual([]);
    console.log(
      `exec and ref trees vs FK over ${exec.length} + ${ref.length} frames: ${worst.posM.toExponential(2)} m, ${worst.rotRad.toExponential(2)} rad ` +
        `(bound ${TRACK_WORLD_POSITION_BOUND_M} m, ${TRACK_WORLD_ROTATION_BOUND_RAD} rad)`,
    );
    // The 3D tracks are for drawing, which needs no more than this (the joint vectors on
    // /executed/state and /reference are exact, checked bit for bit above).
    expect(worst.posM).toBeLessThan(TRACK_WORLD_POSITION_BOUND_M);
    expect(worst.rotRad).toBeLessThan(TRACK_WORLD_ROTATION_BOUND_RAD);

    // Negative controls. Value by value: one moving component a grid step off, and one constant
    // offset changed in its last bit, are each seen.
    const f20 = result.frames[20];
    tree.compute(f20.rootPosM!, f20.rootQuatWxyz!, f20.jointPosRad, exactPos, exactQuat);
    const withTransform = (i: number, edit: (t: Obj) => Obj): Obj => ({
      transforms: (exec[20].msg.transforms as Obj[]).map((t, j) => (j === i ? edit(t) : t)),
    });
    const hinge = moving.rotation[5];
    const stepOff = withTransform(hinge, (t) => {
      const r = t.rotation as { w: number };
      return { ...t, rotation: { ...r, w: r.w - TRACK_QUATERNION_STEP } };
    });
    expect(storedTreeDeviations(stepOff, tree, moving, grids, exactPos, exactQuat)).toEqual([
      expect.stringContaining(`${tree.frames[hinge].name}.rotation.w:`),
    ]);
    const fixed = tree.frames.findIndex((_, i) => !moving.translation.includes(i) && exactPos[3 * i] !== 0);
    const ulpOff = withTransform(fixed, (t) => {
      const tr = t.translation as { x: number };
      return { ...t, translation: { ...tr, x: tr.x + Math.abs(tr.x) * 2 ** -52 } };
    });
    expect(storedTreeDeviations(ulpOff, tree, moving, grids, exactPos, exactQuat)).toEqual([
      expect.stringContaining(`${tree.frames[fixed].name}.translation.x:`),
    ]);

    // Composed: a tree off by twice the bound, in position or in rotation, and the tree of the
    // same frame with the joints in the wrong order, are all caught.
    fk.compute(f20.rootPosM!, f20.rootQuatWxyz!, f20.jointPosRad, fkPos, fkQuat);
    const root = moving.translation[0];
    const shifted = withTransform(root, (t) => {
      const tr = t.translation as { x: number };
      return { ...t, translation: { ...tr, x: tr.x + 2 * TRACK_WORLD_POSITION_BOUND_M } };
    });
    expect(treeError(shifted, profile, 'exec', 'world', fkPos, fkQuat).posM).toBeGreaterThan(
      TRACK_WORLD_POSITION_BOUND_M,
    );
    const turned = withTransform(root, (t) => {
      // the root turned by 2 × the bound about its own z axis: q ⊗ (cos b, 0, 0, sin b)
      const { x, y, z, w } = t.rotation as { x: number; y: number; z: number; w: number };
      const c = Math.cos(TRACK_WORLD_ROTATION_BOUND_RAD);
      const s = Math.sin(TRACK_WORLD_ROTATION_BOUND_RAD);
      return { ...t, rotation: { w: w * c - z * s, x: x * c + y * s, y: y * c - x * s, z: z * c + w * s } };
    });
    expect(treeError(turned, profile, 'exec', 'world', fkPos, fkQuat).rotRad).toBeGreaterThan(
      TRACK_WORLD_ROTATION_BOUND_RAD,
    );
    fk.compute(f20.rootPosM!, f20.rootQuatWxyz!, Float64Array.from(f20.jointPosRad).reverse(), fkPos, fkQuat);
    expect(treeError(exec[20].msg, profile, 'exec', 'world', fkPos, fkQuat).posM).toBeGreaterThan(1e-3);

    // the geometry: one entity per body, locked to its frame; the reference translucent
    for (const [topic, prefix, opaque] of [
      [TOPICS.execScene, 'exec', true],
      [TOPICS.refScene, 'ref', false],
    ] as const) {
      const [scene] = await messagesOf(file, topic);
      const entities = scene.msg.entities as Obj[];
      expect(entities.map((e) => e.frameId)).toEqual(profile.bodies.map((b) => `${prefix}/${b.name}`));
      expect(entities.every((e) => e.frameLocked === true)).toBe(true);
      const prims = entities.flatMap((e) => [
        ...(e.spheres as Obj[]),
        ...(e.cubes as Obj[]),
        ...(e.cylinders as Obj[]),
      ]);
      const visualGeoms = profile.bodies.flatMap((b) => b.geoms.filter((g) => g.group <= 2));
      const capsules = visualGeoms.filter((g) => g.type === 'capsule').length;
      expect(prims.length).toBe(visualGeoms.length + 2 * capsules);
      const alphas = new Set(prims.map((p) => (p.color as { a: number }).a));
      expect(alphas.size).toBe(1);
      expect([...alphas][0] === 1).toBe(opaque);
    }
  });

  it('a float32 robot stream is stored as motionbench.RobotState exactly, without double copies; a value that is not float32 keeps its double copy (negative control)', async () => {
    // the robot's lowstate: the simulator's frames rounded as the emulator's lowstateFloat32 does
    const lowstate = result.frames.map((f) => {
      const g: StateFrame = {
        ...f,
        jointPosRad: f.jointPosRad.slice(),
        jointVelRadS: f.jointVelRadS.slice(),
        jointTauNm: f.jointTauNm.slice(),
        imu: { quatWxyz: f.imu.quatWxyz.slice(), gyroRadS: f.imu.gyroRadS.slice(), accelMS2: f.imu.accelMS2.slice() },
      };
      for (const a of [g.jointPosRad, g.jointVelRadS, g.jointTauNm, g.imu.quatWxyz, g.imu.gyroRadS, g.imu.accelMS2])
        roundToFloat32(a);
      return g;
    });
    const write = async (name: string, frames: StateFrame[], robot: RobotProfile | null = profile) => {
      const out = path.join(dir, name);
      const w = await EpisodeWriter.create(out, { episode: {}, measuredPrecision: 'float32', robot });
      await w.writeFrames(frames);
      const stats = w.stats();
      await w.close({ outcome: 'completed' });
      return { out, stats };
    };
    const exact = await write('robot-f32.mcap', lowstate);
    expect(exact.stats.exactCopies).toBe(0);
    const msgs = await messagesOf(exact.out, TOPICS.executed);
    expect(new Set(msgs.map((m) => m.schema))).toEqual(new Set(['motionbench.RobotState']));
    expect(msgs.filter((m) => m.msg.exact !== null)).toEqual([]);
    expect(msgs.flatMap(({ msg }, k) => executedDifferences(msg, lowstate[k]).map((d) => `${k}: ${d}`))).toEqual([]);

    // one joint angle that is not a float32 (a bridge that computed it in double)
    const off = lowstate.map((f) => f);
    off[5] = { ...lowstate[5], jointPosRad: lowstate[5].jointPosRad.slice() };
    off[5].jointPosRad[3] += 1e-12;
    const copied = await write('robot-off.mcap', off);
    expect(copied.stats.exactCopies).toBe(1);
    const m2 = await messagesOf(copied.out, TOPICS.executed);
    expect(m2.map((m, k) => (m.msg.exact !== null ? k : -1)).filter((k) => k >= 0)).toEqual([5]);
    // the float32 fields alone lose the value; the copy holds it exactly
    expect(executedDifferences(m2[5].msg, off[5])).toEqual(['jointPosRad']);
    expect(executedDifferences(m2[5].msg.exact as Obj, off[5])).toEqual([]);
    // and our reader takes the copy
    const ep = await readEpisodeFile(copied.out);
    expect(firstBitDifference(ep.executed[5].jointPosRad, off[5].jointPosRad)).toBe(-1);

    const json = path.join(dir, 'robot-json.mcap');
    const wj = await EpisodeWriter.create(json, { episode: {}, encoding: 'json' });
    await wj.writeFrames(lowstate);
    await wj.close({ outcome: 'completed' });
    const noTracks = await write('robot-f32-no3d.mcap', lowstate, null);
    console.log(
      `robot-state stream, ${lowstate.length} frames: JSON ${fs.statSync(json).size} B, /2 ${fs.statSync(noTracks.out).size} B ` +
        `(${((100 * fs.statSync(noTracks.out).size) / fs.statSync(json).size).toFixed(1)} %), with 3D tracks ${fs.statSync(exact.out).size} B`,
    );
  });

  it('/1 and /2 of the same frames read back the same through the program’s reader', async () => {
    const ref50 = resampleClip(clip, 50);
    const reference = {
      frameCount: ref50.frameCount,
      rateHz: 50,
      rootPosM: ref50.rootPosM,
      rootQuatWxyz: ref50.rootQuatWxyz,
      jointPosRad: ref50.jointPosRad,
    };
    const files: Record<string, string> = {};
    for (const encoding of ['json', 'protobuf'] as const) {
      const out = path.join(dir, `same-${encoding}.mcap`);
      const w = await EpisodeWriter.create(out, {
        episode: { seed: 3 },
        encoding,
        reference,
        robot: profile,
        startMs: 1e12,
      });
      await w.writeFrames(result.frames, result.extras);
      await w.writeEvent(1, 'problem', 'a note', { detail: 1 });
      await w.writeFinalMetrics(3, { mpjpe_l_mm: 12.5 });
      await w.close({ outcome: 'completed' });
      files[encoding] = out;
    }
    const a = await readEpisodeFile(files.json);
    const b = await readEpisodeFile(files.protobuf);
    expect(a.metadata.episode.format).toBe('motionbench-episode/1');
    expect(b.metadata.episode.format).toBe('motionbench-episode/2');
    expect(b.executed).toEqual(a.executed);
    expect(b.reference).toEqual(a.reference);
    expect(b.commands).toEqual(a.commands);
    expect(b.events).toEqual(a.events);
    expect(b.metrics).toEqual(a.metrics);
    expect(b.metrics.filter((m) => m.kind === 'live').length).toBe(result.frames.length);
    const ratio = fs.statSync(files.protobuf).size / fs.statSync(files.json).size;
    console.log(
      `simulator episode, ${result.frames.length} frames: JSON ${fs.statSync(files.json).size} B, /2 with 3D tracks ${fs.statSync(files.protobuf).size} B (${(100 * ratio).toFixed(1)} %)`,
    );
    // Measured: 53.2 % on this 3 s clip, 47.2 % on 20 s (bench/episodeFormatBench.ts prints it; the
    // issue's target there is 50 %); without the 3D tracks 25–27 %. With the trees in full double
    // precision this clip took 65.5 %: the bound below holds the saving of the stated precision.
    expect(ratio).toBeLessThan(0.56);
  });

  it('the robot after the clip: its own channel, read back apart; the clip’s frames and trajectory hash untouched', async () => {
    const clipFrames = result.frames.slice(0, 100);
    const clipEndS = clipFrames.at(-1)!.timeS;
    // the robot after the clip: the last pose, tipping about x, timed after the clip's end
    const afterFrames = result.frames.slice(100, 140).map((f, k) => ({
      ...f,
      timeS: clipEndS + (k + 1) * 0.02,
      referenceFrame: null,
      imu: { ...f.imu, quatWxyz: Float64Array.of(Math.cos(k * 0.02), Math.sin(k * 0.02), 0, 0) },
    }));
    const write = async (encoding: 'json' | 'protobuf', name: string, after: boolean) => {
      const out = path.join(dir, name);
      const w = await EpisodeWriter.create(out, { episode: {}, encoding, robot: profile, startMs: 1e12 });
      await w.writeFrames(clipFrames, result.extras.slice(0, 100));
      if (after) await w.writeAfterClipFrames(afterFrames);
      await w.close({ outcome: 'completed' });
      return out;
    };
    const without = await readEpisodeFile(await write('protobuf', 'no-after.mcap', false));
    expect(without.afterClip).toEqual([]);
    expect(without.channels.map((c) => c.topic)).not.toContain(TOPICS.afterClip);
    for (const encoding of ['protobuf', 'json'] as const) {
      const out = await write(encoding, `after-${encoding}.mcap`, true);
      const ep = await readEpisodeFile(out);
      expect(ep.executed).toEqual(without.executed);
      expect(trajectorySha256OfEpisode(ep)).toBe(trajectorySha256OfEpisode(without));
      expect(ep.afterClip.map((m) => m.timeS)).toEqual(afterFrames.map((f) => f.timeS));
      expect(ep.afterClip.map((m) => m.imu.quatWxyz)).toEqual(afterFrames.map((f) => Array.from(f.imu.quatWxyz)));
      expect(ep.afterClip.map((m) => m.tick)).toEqual(afterFrames.map((f) => f.tick));
      // the after-clip channel carries the message type of /executed/state
      const channels = await messagesOf(out, TOPICS.afterClip);
      const executed = await messagesOf(out, TOPICS.executed);
      expect(new Set(channels.map((m) => m.schema))).toEqual(new Set(executed.map((m) => m.schema)));
      if (encoding === 'protobuf') {
        // the 3D track goes on after the clip: one tree per after-clip frame (50 Hz here)
        const trees = await messagesOf(out, TOPICS.execTransforms);
        const withoutTrees = await messagesOf(path.join(dir, 'no-after.mcap'), TOPICS.execTransforms);
        expect(trees.length - withoutTrees.length).toBe(afterFrames.length);
      }
    }
  });
});
