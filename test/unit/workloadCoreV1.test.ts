// core-v1: every clip passes the physical checks (joint limits with margin, feet never below the
// floor, no other body near it, contact or declared flight, no foot sliding, bounded joint
// velocity / acceleration / jerk and root motion, 5–15 s, starting and ending at rest in the
// stand pose); the groups are covered; the clips and the snapshot hash equal the frozen manifest
// bit for bit; the clips survive export to our JSON and CSV formats with the same ids.
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256HexOfString } from '../../src/domain/hash/sha256';
import { decodeLafan1Csv, encodeLafan1Csv } from '../../src/domain/motion/lafan1Csv';
import { decodeMotionbenchJson, encodeClipJson } from '../../src/domain/motion/motionbenchJson';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { quatHeading } from '../../src/domain/math/quat';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';
import { BodyModel } from '../../src/domain/workload/bodyModel';
import { CORE_V1_FPS, CORE_V1_ID, generateCoreV1, type GeneratedCoreV1 } from '../../src/domain/workload/coreV1';
import { coreV1Recipes } from '../../src/domain/workload/coreV1Recipes';
import {
  DYNAMIC_LIMITS,
  limitsForGroup,
  measureClip,
  physicsViolations,
  STANDARD_LIMITS,
  type ClipPhysicsReport,
} from '../../src/domain/workload/physicalChecks';
import { Kit } from '../../src/domain/workload/recipeKit';
import {
  CAPABILITY_GROUPS,
  groupCounts,
  snapshotDifferences,
  snapshotHash,
  type WorkloadSnapshot,
} from '../../src/domain/workload/snapshot';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { CORE_V1_MANIFEST_FILE, mismatchMessage, readFrozenCoreV1 } from '../../src/services/workload/coreV1Frozen';

const profile = loadRobotProfile();
const model = new BodyModel(profile);
const stand = profile.defaultPose.jointPosRad;
// the catalogue (names, groups) without generating, so it.each can name every clip
const catalogue = coreV1Recipes(new Kit(model)).map((r) => ({ name: r.name, group: r.group, flight: r.flight }));

let gen: GeneratedCoreV1;
const reports = new Map<string, ClipPhysicsReport>();
const byName = (name: string): MotionClip => {
  const c = gen.clips.find((x) => x.name === name);
  if (!c) throw new Error(`no clip ${name}`);
  return c;
};

beforeAll(() => {
  gen = generateCoreV1(profile);
  for (const c of gen.clips) reports.set(c.name, measureClip(c, model, stand));
});

describe('core-v1 catalogue', () => {
  it('has at least 40 clips, at least 6 in each capability group, unique names and ids', () => {
    expect(gen.clips.length).toBeGreaterThanOrEqual(40);
    const counts = groupCounts(gen.snapshot.clips);
    for (const g of CAPABILITY_GROUPS) expect(counts[g], g).toBeGreaterThanOrEqual(6);
    expect(new Set(gen.clips.map((c) => c.name)).size).toBe(gen.clips.length);
    expect(new Set(gen.clips.map((c) => c.id)).size).toBe(gen.clips.length);
    const prefix = {
      upper_body: 'ub_',
      in_place: 'ip_',
      locomotion: 'loco_',
      dynamic: 'dyn_',
      low_posture: 'lp_',
    } as const;
    for (const c of gen.clips) expect(c.name.startsWith(prefix[c.capabilityGroup!]), c.name).toBe(true);
    for (const r of gen.recipes) expect(r.description.length, r.name).toBeGreaterThan(10);
  });

  it('only dynamic clips have flight phases (jogging and jumps)', () => {
    const flight = gen.recipes.filter((r) => r.flight);
    expect(flight.map((r) => r.name).sort()).toEqual([
      'dyn_jog_forward',
      'dyn_jog_in_place',
      'dyn_jump_forward',
      'dyn_small_jumps',
    ]);
    for (const r of flight) expect(r.group).toBe('dynamic');
    // jumps leave the floor by several centimetres, the jogs by at least a centimetre
    expect(reports.get('dyn_small_jumps')!.flightHeight.value).toBeGreaterThan(0.04);
    expect(reports.get('dyn_jump_forward')!.flightHeight.value).toBeGreaterThan(0.04);
    expect(reports.get('dyn_jog_in_place')!.flightFrames).toBeGreaterThan(20);
  });

  it('the snapshot lists every clip with its metadata and a hash over them', () => {
    const s = gen.snapshot;
    expect(s).toMatchObject({ format: 'mb-workload-snapshot/1', id: CORE_V1_ID, version: '1', source: 'builtin' });
    expect(s.clips.map((c) => c.name)).toEqual(gen.clips.map((c) => c.name));
    for (const [i, m] of s.clips.entries()) {
      const c = gen.clips[i];
      expect(m).toEqual({
        id: c.id,
        name: c.name,
        group: c.capabilityGroup,
        duration_s: (c.frameCount - 1) / CORE_V1_FPS,
        frames: c.frameCount,
        fps: CORE_V1_FPS,
      });
    }
    expect(s.snapshot_hash).toBe(snapshotHash(s.clips));
  });
});

describe.each(catalogue)('core-v1 clip $name ($group)', ({ name, group, flight }) => {
  it('passes the physical checks', () => {
    const rep = reports.get(name)!;
    const v = physicsViolations(rep, limitsForGroup(group), flight);
    expect(
      v.map((x) => x.message),
      `${name}: ${v.map((x) => x.message).join('; ')}`,
    ).toEqual([]);
  });

  it('is 50 fps, 5–15 s, unit quaternions, and starts at rest in the stand pose at the origin, heading 0', () => {
    const c = byName(name);
    expect(c.fps).toBe(50);
    expect(c.capabilityGroup).toBe(group);
    const d = (c.frameCount - 1) / c.fps;
    expect(d).toBeGreaterThanOrEqual(5);
    expect(d).toBeLessThanOrEqual(15);
    expect(c.jointPosRad.length).toBe(c.frameCount * G1_NUM_JOINTS);
    for (let k = 0; k < c.frameCount; k++) {
      const q = c.rootQuatWxyz.subarray(4 * k, 4 * k + 4);
      expect(Math.abs(Math.hypot(q[0], q[1], q[2], q[3]) - 1)).toBeLessThan(1e-12);
    }
    // first frame: origin, heading 0, the model's stand keyframe (root height from the feet: 0.7929)
    expect(Math.abs(c.rootPosM[0])).toBeLessThan(1e-5);
    expect(Math.abs(c.rootPosM[1])).toBeLessThan(1e-12);
    expect(c.rootPosM[2]).toBeCloseTo(profile.defaultPose.rootPosM[2], 4);
    expect(Array.from(c.rootQuatWxyz.subarray(0, 4))).toEqual([1, 0, 0, 0]);
    expect(Array.from(c.jointPosRad.subarray(0, G1_NUM_JOINTS))).toEqual(Array.from(stand));
    // the first and last half second are still
    const N = c.frameCount;
    for (const k of [1, 24, N - 25, N - 2]) {
      for (let j = 0; j < G1_NUM_JOINTS; j++)
        expect(c.jointPosRad[k * G1_NUM_JOINTS + j]).toBe(c.jointPosRad[(k < N / 2 ? 0 : N - 1) * G1_NUM_JOINTS + j]);
    }
    // last frame: the stand pose, upright, feet on the floor
    expect(Array.from(c.jointPosRad.subarray((N - 1) * G1_NUM_JOINTS))).toEqual(Array.from(stand));
    expect(c.rootPosM[3 * (N - 1) + 2]).toBeCloseTo(profile.defaultPose.rootPosM[2], 4);
  });
});

describe('core-v1 motions go where their names say', () => {
  const endPose = (c: MotionClip) => {
    const k = c.frameCount - 1;
    const q = c.rootQuatWxyz;
    return {
      x: c.rootPosM[3 * k],
      y: c.rootPosM[3 * k + 1],
      heading: quatHeading([q[4 * k], q[4 * k + 1], q[4 * k + 2], q[4 * k + 3]]),
    };
  };
  it('walks forward, backward, sideways, turns and arcs; in-place clips stay in place', () => {
    expect(endPose(byName('loco_walk_forward')).x).toBeCloseTo(2.0, 1);
    expect(endPose(byName('loco_walk_backward')).x).toBeCloseTo(-1.08, 1);
    expect(endPose(byName('loco_sidestep_left')).y).toBeCloseTo(0.64, 1);
    expect(endPose(byName('loco_sidestep_right')).y).toBeCloseTo(-0.64, 1);
    expect(endPose(byName('loco_turn_left_in_place')).heading).toBeCloseTo(Math.PI / 2, 6);
    expect(endPose(byName('loco_turn_right_in_place')).heading).toBeCloseTo((-3 * Math.PI) / 4, 6);
    const arc = endPose(byName('loco_walk_arc_left'));
    expect(arc.heading).toBeCloseTo(1.8 / 1.2, 6);
    expect(arc.y).toBeGreaterThan(0.5);
    expect(endPose(byName('dyn_jog_forward')).x).toBeGreaterThan(3);
    expect(endPose(byName('dyn_jump_forward')).x).toBeCloseTo(0.4, 4);
    for (const c of gen.clips.filter((x) => x.capabilityGroup === 'upper_body' || x.capabilityGroup === 'in_place')) {
      const e = endPose(c);
      expect(Math.hypot(e.x, e.y), c.name).toBeLessThan(1e-4);
    }
  });

  it('low-posture clips go low: the pelvis drops at least 0.15 m below the stand height', () => {
    for (const c of gen.clips.filter((x) => x.capabilityGroup === 'low_posture')) {
      let zMin = Infinity;
      for (let k = 0; k < c.frameCount; k++) zMin = Math.min(zMin, c.rootPosM[3 * k + 2]);
      expect(profile.defaultPose.rootPosM[2] - zMin, c.name).toBeGreaterThan(0.15);
    }
  });
});

describe('core-v1 limits and measured maxima', () => {
  it('stay inside the documented limits with the standard set tighter than the dynamic one', () => {
    const max = (names: string[], f: (r: ClipPhysicsReport) => number) =>
      Math.max(...names.map((n) => f(reports.get(n)!)));
    const dyn = catalogue.filter((c) => c.group === 'dynamic').map((c) => c.name);
    const std = catalogue.filter((c) => c.group !== 'dynamic').map((c) => c.name);
    expect(max(std, (r) => r.jointVel.value)).toBeLessThan(STANDARD_LIMITS.jointVelRadS);
    expect(max(std, (r) => r.jointAcc.value)).toBeLessThan(STANDARD_LIMITS.jointAccRadS2);
    expect(max(std, (r) => r.jointJerk.value)).toBeLessThan(STANDARD_LIMITS.jointJerkRadS3);
    expect(max(dyn, (r) => r.jointVel.value)).toBeLessThan(DYNAMIC_LIMITS.jointVelRadS);
    expect(max(dyn, (r) => r.jointAcc.value)).toBeLessThan(DYNAMIC_LIMITS.jointAccRadS2);
    expect(max(dyn, (r) => r.jointJerk.value)).toBeLessThan(DYNAMIC_LIMITS.jointJerkRadS3);
    // dynamic clips really are faster than the rest
    expect(max(dyn, (r) => r.jointVel.value)).toBeGreaterThan(max(std, (r) => r.jointVel.value));
    expect(STANDARD_LIMITS).toMatchObject({ jointVelRadS: 6, jointAccRadS2: 60, jointLimitMarginRad: 0.05 });
  });
});

describe('core-v1 is frozen', () => {
  it('regenerates bit-identically: every clip id and the snapshot hash equal assets/workloads/core-v1.json', () => {
    const frozen = readFrozenCoreV1();
    const diffs = snapshotDifferences(frozen as unknown as WorkloadSnapshot, gen.snapshot);
    // On failure the message says what changed, with which engine and model core-v1 was frozen,
    // and how to re-freeze deliberately (never silently).
    expect(diffs, diffs.length ? mismatchMessage(frozen, diffs) : '').toEqual([]);
    expect(frozen.snapshot_hash).toBe(gen.snapshot.snapshot_hash);
    expect(frozen.clips.map((c) => c.id)).toEqual(gen.clips.map((c) => c.id));
  });

  it('the manifest is consistent: its hash is the hash of its clip list', () => {
    const frozen = readFrozenCoreV1(CORE_V1_MANIFEST_FILE);
    expect(snapshotHash(frozen.clips as WorkloadSnapshot['clips'])).toBe(frozen.snapshot_hash);
    expect(frozen).toMatchObject({ id: 'core-v1', version: '1', source: 'builtin', hash_scheme: 'mb-workload-hash/1' });
  });

  it('a mismatch message explains the V8/model risk and how to re-freeze', () => {
    const frozen = readFrozenCoreV1();
    const msg = mismatchMessage(frozen, ['clip ub_wave_right: id clip-0 (frozen) ≠ clip-1 (now)']);
    expect(msg).toMatch(/ub_wave_right/);
    expect(msg).toMatch(/V8/);
    expect(msg).toMatch(/core-v2/);
    expect(msg).toMatch(/refreezeCoreV1\.ts --write/);
  });

  // Pinned from the recipes as they were written as code, before they became a data table
  // interpreted by one function: the table must reproduce every frame of every clip, every
  // recipe's metadata and the snapshot exactly (the JSON export prints every float in full).
  it('the whole generated workload (every frame of every clip, the recipe metadata, the snapshot) has the pinned content hash', () => {
    const text = [
      ...gen.clips.map((c) => encodeClipJson(c)),
      JSON.stringify(gen.recipes),
      JSON.stringify(gen.snapshot),
    ].join('\n');
    expect(gen.clips).toHaveLength(47);
    expect(sha256HexOfString(text)).toBe('706b10680ba949655343ea6f6be6b8bcf41aa3ef94371de1fbf2658c7e0fadc0');
  });

  it('generating a clip again gives the same id (no hidden state between clips)', () => {
    const again = generateCoreV1(profile, { only: ['dyn_side_kick_right', 'ub_wave_right'], withFileSha256: false });
    expect(again.clips.map((c) => c.id)).toEqual([byName('ub_wave_right').id, byName('dyn_side_kick_right').id]);
  });
});

describe('core-v1 clips as files', () => {
  it('provenance names the clip and hashes its JSON export; JSON round-trips to the same id', () => {
    for (const name of ['ub_wave_right', 'loco_walk_arc_left', 'dyn_small_jumps']) {
      const c = byName(name);
      const text = encodeClipJson(c);
      expect(c.provenance).toEqual({
        file: `builtin:core-v1/${name}.json`,
        format: 'motionbench-json',
        fileSha256: sha256HexOfString(text),
        fpsSource: 'file',
      });
      const back = decodeMotionbenchJson(text, { file: `${name}.json` });
      expect(back.id).toBe(c.id);
      expect(back.capabilityGroup).toBe(c.capabilityGroup);
      expect(back.name).toBe(name);
    }
  });

  it('LAFAN1-G1 CSV (xyzw, no fps) round-trips to the same id at --fps 50', () => {
    const c = byName('lp_kneel_like');
    const back = decodeLafan1Csv(encodeLafan1Csv(c), { file: 'kneel.csv', fps: 50 });
    expect(back.id).toBe(c.id);
  });
});
