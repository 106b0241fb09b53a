import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { decodeLafan1Csv } from '../../src/domain/motion/lafan1Csv';
import { resampleClip } from '../../src/domain/motion/resample';
import { InputError } from '../../src/domain/problems';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';

// Third-party clips in <repo>/../shared/data (see its SOURCES.md, sections 3 and 4). They are read
// in place, never copied into the repo.
const SHARED = path.resolve(import.meta.dirname, '../../../shared/data');
const MOTIONS = path.join(SHARED, 'motions');
const present = fs.existsSync(MOTIONS);
if (!present)
  console.warn(
    `clipsSharedData: skipped — ${MOTIONS} is absent (shared data is expected beside the repo at <repo>/../shared/data)`,
  );

interface Expected {
  frames: number;
  fps: number;
  sha16: string;
  /** How the fps is found without --fps: 'file', inferred from a source matching the regex, or none. */
  fps_from: 'file' | RegExp | null;
}

// From SOURCES.md §3 and §4.
const EXPECTED: Record<string, Expected> = {
  'lafan1_g1_csv/dance1_subject2.csv': { frames: 3945, fps: 30, sha16: '1793edcd8345fa47', fps_from: /LAFAN1/ },
  'lafan1_g1_csv/walk1_subject1.csv': { frames: 7840, fps: 30, sha16: '79e1c935af738bf2', fps_from: /LAFAN1/ },
  'lafan1_g1_csv/sprint1_subject2.csv': { frames: 8194, fps: 30, sha16: '9cb69b37f8b46ca4', fps_from: /LAFAN1/ },
  'lafan1_g1_csv/jumps1_subject1.csv': { frames: 7334, fps: 30, sha16: '9a2bea65f7f4f0d1', fps_from: /LAFAN1/ },
  'lafan1_g1_csv/fallAndGetUp3_subject1.csv': { frames: 3066, fps: 30, sha16: 'f89b5635acc83085', fps_from: /LAFAN1/ },
  'lafan1_g1_csv/dance2_subject1.csv': { frames: 6771, fps: 30, sha16: 'bf592a42c2b46f03', fps_from: /LAFAN1/ },
  'g1_moves/csv/J_Dance18_TikTok.csv': { frames: 1077, fps: 60, sha16: 'f212906a16173d3c', fps_from: null },
  'g1_moves/csv/J_Dance20_DWG.csv': { frames: 938, fps: 60, sha16: '0bfa848c6c499387', fps_from: null },
  'g1_moves/csv/B_HandsUp.csv': { frames: 442, fps: 60, sha16: '82f19171cc007275', fps_from: /npz[\\/]B_HandsUp\.npz/ },
  'g1_moves/csv/B_Fence2.csv': { frames: 638, fps: 60, sha16: '3387562bdb606ae7', fps_from: /npz[\\/]B_Fence2\.npz/ },
  'g1_moves/csv/M_ShortMove14.csv': { frames: 393, fps: 60, sha16: 'd617d1b2f946864b', fps_from: null },
  'g1_moves/npz/B_HandsUp.npz': { frames: 441, fps: 60, sha16: '3ab87ea66159be43', fps_from: 'file' },
  'g1_moves/npz/B_Fence2.npz': { frames: 637, fps: 60, sha16: 'b256476162119dd8', fps_from: 'file' },
};

// MJCF joint ranges from SOURCES.md's canonical joint table.
const MJCF_LIMITS: [number, number][] = [
  [-2.5307, 2.8798],
  [-0.5236, 2.9671],
  [-2.7576, 2.7576],
  [-0.087267, 2.8798],
  [-0.87267, 0.5236],
  [-0.2618, 0.2618],
  [-2.5307, 2.8798],
  [-2.9671, 0.5236],
  [-2.7576, 2.7576],
  [-0.087267, 2.8798],
  [-0.87267, 0.5236],
  [-0.2618, 0.2618],
  [-2.618, 2.618],
  [-0.52, 0.52],
  [-0.52, 0.52],
  [-3.0892, 2.6704],
  [-1.5882, 2.2515],
  [-2.618, 2.618],
  [-1.0472, 2.0944],
  [-1.97222, 1.97222],
  [-1.61443, 1.61443],
  [-1.61443, 1.61443],
  [-3.0892, 2.6704],
  [-2.2515, 1.5882],
  [-2.618, 2.618],
  [-1.0472, 2.0944],
  [-1.97222, 1.97222],
  [-1.61443, 1.61443],
  [-1.61443, 1.61443],
];

function motionFiles(): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(csv|npz|json)$/i.test(e.name)) out.push(path.relative(MOTIONS, p).split(path.sep).join('/'));
    }
  };
  walk(MOTIONS);
  return out.sort();
}

describe.skipIf(!present)('shared third-party clips (../shared/data/motions)', () => {
  const files = present ? motionFiles() : [];

  it('the folder holds every clip SOURCES.md lists', () => {
    for (const f of Object.keys(EXPECTED)) expect(files, f).toContain(f);
  });

  it.each(files)('%s loads', (rel) => {
    const p = path.join(MOTIONS, rel);
    const exp = EXPECTED[rel];
    const folderFps = rel.startsWith('lafan1') ? 30 : 60;
    let clip;
    if (exp && exp.fps_from === null) {
      // no fps hint available: an error asking for --fps, then it loads with --fps
      expect(() => loadClipFile(p)).toThrow(/fps is unknown.*--fps/);
      clip = loadClipFile(p, { fps: exp.fps, jointLimitsRad: MJCF_LIMITS });
      expect(clip.provenance.fpsSource).toBe('user');
    } else if (exp) {
      clip = loadClipFile(p, { jointLimitsRad: MJCF_LIMITS });
      if (exp.fps_from === 'file') {
        expect(clip.provenance.fpsSource).toBe('file');
      } else {
        expect(clip.provenance.fpsSource).toBe('inferred');
        const w = clip.warnings.find((x) => x.code === 'fps_inferred');
        expect(w?.message).toMatch(exp.fps_from as RegExp);
      }
    } else {
      // a clip SOURCES.md does not list (e.g. added later): it must load, with --fps if needed
      try {
        clip = loadClipFile(p);
      } catch (e) {
        if (!(e instanceof InputError) || e.location.key !== 'fps') throw e;
        clip = loadClipFile(p, { fps: folderFps });
      }
    }
    if (exp) {
      expect(clip.frameCount).toBe(exp.frames);
      expect(clip.fps).toBe(exp.fps);
      expect(clip.provenance.fileSha256.slice(0, 16)).toBe(exp.sha16);
      // within the MJCF ranges (the SOURCES.md remark about excursions does not hold at 1e-6 rad)
      expect(clip.warnings.filter((w) => w.code === 'joint_limit')).toEqual([]);
    }
    expect(clip.jointPosRad.length).toBe(clip.frameCount * G1_NUM_JOINTS);
    expect(clip.id).toMatch(/^clip-[0-9a-f]{16}$/);
    let zMin = Infinity;
    let zMax = -Infinity;
    for (let k = 0; k < clip.frameCount; k++) {
      const z = clip.rootPosM[k * 3 + 2];
      zMin = Math.min(zMin, z);
      zMax = Math.max(zMax, z);
      const o = k * 4;
      const q = clip.rootQuatWxyz;
      expect(Math.abs(Math.hypot(q[o], q[o + 1], q[o + 2], q[o + 3]) - 1)).toBeLessThan(1e-12);
      if (k > 0)
        expect(
          q[o] * q[o - 4] + q[o + 1] * q[o - 3] + q[o + 2] * q[o - 2] + q[o + 3] * q[o - 1],
        ).toBeGreaterThanOrEqual(0);
    }
    expect(zMin).toBeGreaterThan(0.1); // SOURCES.md: root z 0.13–0.93 m
    expect(zMax).toBeLessThan(1.0);
    // resampling to the contract rate covers the same duration
    const r = resampleClip(clip, 50);
    expect(r.frameCount).toBe(Math.floor((50 * (clip.frameCount - 1)) / clip.fps + 1e-9) + 1);
  });

  it('B_HandsUp: NPZ joint_pos equals the CSV joints and the root poses agree (frame i = row i)', () => {
    const csv = loadClipFile(path.join(MOTIONS, 'g1_moves/csv/B_HandsUp.csv'));
    const npz = loadClipFile(path.join(MOTIONS, 'g1_moves/npz/B_HandsUp.npz'));
    expect(npz.frameCount).toBe(csv.frameCount - 1);
    expect(npz.jointVelRadS?.length).toBe(npz.frameCount * G1_NUM_JOINTS);
    expect(npz.bodyPosW?.bodyCount).toBe(30);
    let dq = 0;
    let dp = 0;
    let dr = 0;
    for (let i = 0; i < npz.jointPosRad.length; i++)
      dq = Math.max(dq, Math.abs(npz.jointPosRad[i] - csv.jointPosRad[i]));
    for (let i = 0; i < npz.rootPosM.length; i++) dp = Math.max(dp, Math.abs(npz.rootPosM[i] - csv.rootPosM[i]));
    for (let i = 0; i < npz.rootQuatWxyz.length; i++)
      dr = Math.max(dr, Math.abs(npz.rootQuatWxyz[i] - csv.rootQuatWxyz[i]));
    expect(dq).toBeLessThan(1e-5);
    expect(dp).toBeLessThan(1e-6);
    expect(dr).toBeLessThan(1e-5); // the CSV's xyzw quaternion is the NPZ's wxyz one
    // initial yaw about −90° (SOURCES.md §4a)
    const [w, , , z] = csv.rootQuatWxyz.subarray(0, 4);
    expect((2 * Math.atan2(z, w) * 180) / Math.PI).toBeCloseTo(-87, -1);
  });

  it('parses the largest CSV (sprint1_subject2, 8194 rows) quickly', () => {
    const bytes = new Uint8Array(fs.readFileSync(path.join(MOTIONS, 'lafan1_g1_csv/sprint1_subject2.csv')));
    decodeLafan1Csv(bytes, { file: 'warm-up', fps: 30 });
    const t0 = performance.now();
    const clip = decodeLafan1Csv(bytes, { file: 'sprint1_subject2.csv', fps: 30 });
    const ms = performance.now() - t0;
    expect(clip.frameCount).toBe(8194);
    // ~60 ms here; the bound leaves room for a slow CI machine
    expect(ms).toBeLessThan(1000);
  });

  it('joint limits tighter than the data produce capped joint_limit warnings', () => {
    const limits = MJCF_LIMITS.map(() => [-1, 1] as [number, number]);
    const clip = loadClipFile(path.join(MOTIONS, 'lafan1_g1_csv/dance2_subject1.csv'), { jointLimitsRad: limits });
    const lim = clip.warnings.filter((w) => w.code === 'joint_limit');
    expect(lim.length).toBe(100);
    expect(clip.warnings.some((w) => w.code === 'joint_limit_more')).toBe(true);
  });
});
