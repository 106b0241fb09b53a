// The simulator's episode engine in-thread on real MuJoCo: the floor solve, gain overrides and
// their restoration, the recorded frame layout, and the in-thread/worker equivalence of results.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resampleClip } from '../../src/domain/motion/resample';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { BuiltinTracker } from '../../src/domain/sim/builtinTracker';
import { clipHead } from '../../src/domain/sim/clipWindow';
import { initialStateFromClipFrame } from '../../src/domain/sim/initialState';
import { TrajectoryHasher } from '../../src/domain/sim/trajectoryHash';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { SimEngine } from '../../src/services/sim/simEngine';
import type { FrameBatch } from '../../src/services/sim/simProtocol';
import { MENAGERIE_SCENE, OUR_G1, sharedData } from '../helpers/sharedData';

const dance = clipHead(loadClipFile(sharedData('motions/lafan1_g1_csv/dance1_subject2.csv')), 2);

function collect(engine: SimEngine, binding: ReturnType<typeof makeBuiltinBinding>, clip = dance) {
  const batches: FrameBatch[] = [];
  const end = engine.run(
    { clip, binding, controller: new BuiltinTracker(binding, 29), seed: 0, initial: initialStateFromClipFrame(clip) },
    { emit: (b) => batches.push(b), stopRequested: () => 0 },
  );
  return { end, batches };
}

describe('SimEngine (in-thread)', () => {
  let ours: SimEngine;
  let menagerie: SimEngine;
  beforeAll(async () => {
    ours = await SimEngine.load(OUR_G1);
    menagerie = await SimEngine.load(MENAGERIE_SCENE);
  });
  afterAll(() => {
    ours?.dispose();
    menagerie?.dispose();
  });

  it('placeOnFloor puts the lowest collision point on the floor, from above or below', () => {
    for (const engine of [ours, menagerie]) {
      for (const dz of [0.3, 0, -0.2]) {
        const s = initialStateFromClipFrame(dance);
        s.rootPosM = [s.rootPosM[0], s.rootPosM[1], s.rootPosM[2] + dz];
        const r = engine.applyInitialState(s);
        expect(Math.abs(engine.lowestContactPoint())).toBeLessThan(1e-9);
        expect(r.rootPosM[2]).toBeGreaterThan(0.6);
        expect(r.rootPosM[0]).toBe(s.rootPosM[0]);
      }
      // without placeOnFloor the height is kept as given
      const s = { ...initialStateFromClipFrame(dance), placeOnFloor: false };
      expect(engine.applyInitialState(s).rootPosM[2]).toBe(s.rootPosM[2]);
    }
  });

  it('binding gains override the servos for that episode only; the model gains come back', () => {
    const model = collect(ours, makeBuiltinBinding());
    const L = ours.layout;
    const modelKp = Array.from(model.batches[0].data.subarray(L.kp, L.kp + 29));
    expect(modelKp[0]).toBe(350); // hip pitch kp in assets/g1
    expect(modelKp[3]).toBe(500); // knee
    const stiff = collect(ours, makeBuiltinBinding({ gains: { kp: 400, kd: 12 } }));
    expect(Array.from(stiff.batches[0].data.subarray(L.kp, L.kp + 29))).toEqual(new Array(29).fill(400));
    expect(Array.from(stiff.batches[0].data.subarray(L.kd, L.kd + 29))).toEqual(new Array(29).fill(12));
    const again = collect(ours, makeBuiltinBinding());
    expect(Array.from(again.batches[0].data.subarray(L.kp, L.kp + 29))).toEqual(modelKp);
    const hash = (bs: FrameBatch[]) => {
      const h = new TrajectoryHasher(29);
      for (const b of bs) for (let i = 0; i < b.count; i++) h.addPacked(b.data, i * L.width);
      return h.digestHex();
    };
    expect(hash(again.batches)).toBe(hash(model.batches));
    expect(hash(stiff.batches)).not.toBe(hash(model.batches));
  });

  it('records 50 Hz frames on the clip timeline with commands, assist wrench and live metrics', () => {
    const { end, batches } = collect(ours, makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) }));
    const L = ours.layout;
    expect(end).toMatchObject({ outcome: 'completed', frames: 101, plannedFrames: 101, simSeconds: 2 });
    const all = batches.flatMap((b) =>
      Array.from({ length: b.count }, (_, i) => b.data.subarray(i * L.width, (i + 1) * L.width)),
    );
    expect(all.length).toBe(101);
    all.forEach((f, k) => {
      expect(f[L.time]).toBe(k / 50);
      expect(f[L.tick]).toBe(k);
      expect(Number.isFinite(f[L.wrench]) || k === 100).toBe(true);
      expect(f[L.liveFailFrame]).toBe(-1);
    });
    // frame 0 is the initial state: reference frame 0's joints, placed on the floor
    for (let j = 0; j < 29; j++) expect(all[0][L.q + j]).toBeCloseTo(dance.jointPosRad[j], 12);
    // the command at frame k targets reference frame k + 1 (resampled to 50 Hz)
    const ref50 = resampleClip(dance, 50);
    for (const k of [0, 10, 99])
      for (let j = 0; j < 29; j++) expect(all[k][L.target + j]).toBe(ref50.jointPosRad[29 * (k + 1) + j]);
    expect(all[50][L.liveMpjpe]).toBeGreaterThan(0);
  });
});
