import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { StateFrame } from '../src/domain/backend/stateFrame';
import { roundToFloat32 } from '../src/domain/robotEmulator/sensorModel';
import { readEpisodeFile } from '../src/services/episode/episodeReader';
import { EpisodeWriter, type EpisodeWriterOptions } from '../src/services/episode/episodeWriter';
import { loadRobotProfile } from '../src/services/robot/loadRobotProfile';
import { RECORDER_FLUSH_POLICY } from '../src/services/trace';
import { benchFrames } from './traceBench';

// Episode format (issue 15 item 5): the same 60 s of 500 Hz robot state (the trace bench's
// frames, rounded to float32 as a G1's lowstate carries them) written by the episode writer as
// `motionbench-episode/1` (JSON, uncompressed: the format before issue 15, the same-run baseline)
// and as `/2` (protobuf RobotState, zstd), with the recorder's flush policy (a chunk every 250
// frames, fdatasync each). Reported: bytes per 500 Hz frame and write rate, as ratios of /2 to /1
// (targets: bytes <= 20 %, rate >= 2x), rounds alternating, medians compared; and the time to
// read a 10-minute /2 episode (300,000 frames, with the 3D tracks a trial records) back with the
// program's reader, the step the gap review starts with.
export const BYTES_TARGET = 0.2;
export const RATE_TARGET = 2;
const BATCH = 25;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function lowstate(frames: StateFrame[]): StateFrame[] {
  for (const f of frames)
    for (const a of [f.jointPosRad, f.jointVelRadS, f.jointTauNm, f.imu.quatWxyz, f.imu.gyroRadS, f.imu.accelMS2])
      roundToFloat32(a);
  return frames;
}

async function write(file: string, frames: readonly StateFrame[], options: Partial<EpisodeWriterOptions>) {
  const t0 = performance.now();
  const w = await EpisodeWriter.create(file, {
    episode: {},
    flush: { ...RECORDER_FLUSH_POLICY, fsync: true },
    ...options,
  });
  for (let i = 0; i < frames.length; i += BATCH) await w.writeFrames(frames.slice(i, i + BATCH));
  const r = await w.close({ outcome: 'completed' });
  return { s: (performance.now() - t0) / 1000, bytes: r.bytes, exactCopies: w.stats().exactCopies };
}

export async function benchEpisodeFormat(): Promise<{ pass: boolean; lines: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-episode-bench-'));
  try {
    const frames = lowstate(benchFrames());
    const n = frames.length;
    const json = { encoding: 'json' } as const;
    const pb = { measuredPrecision: 'float32' } as const;
    await write(path.join(dir, 'warm-json.mcap'), frames, json);
    await write(path.join(dir, 'warm-pb.mcap'), frames, pb);
    const rj: number[] = [];
    const rp: number[] = [];
    let bj = 0;
    let bp = 0;
    let copies = 0;
    for (let round = 0; round < 3; round++) {
      const a = await write(path.join(dir, `json-${round}.mcap`), frames, json);
      const b = await write(path.join(dir, `pb-${round}.mcap`), frames, pb);
      rj.push(n / a.s);
      rp.push(n / b.s);
      bj = a.bytes;
      bp = b.bytes;
      copies = b.exactCopies;
    }
    const bytesRatio = bp / bj;
    const rateRatio = median(rp) / median(rj);

    // 10 minutes: the 60 s of frames ten times over, times shifted
    const ten = path.join(dir, 'ten-minutes.mcap');
    // as a trial records it: with the robot's model, so the 3D tracks are in the file too
    const w = await EpisodeWriter.create(ten, { episode: {}, measuredPrecision: 'float32', robot: loadRobotProfile() });
    for (let rep = 0; rep < 10; rep++)
      for (let i = 0; i < n; i += BATCH)
        await w.writeFrames(
          frames.slice(i, i + BATCH).map((f) => ({ ...f, timeS: f.timeS + 60 * rep, tick: f.tick + n * rep })),
        );
    const tenBytes = (await w.close({ outcome: 'completed' })).bytes;
    const t0 = performance.now();
    const ep = await readEpisodeFile(ten);
    const readS = (performance.now() - t0) / 1000;

    const pass =
      bytesRatio <= BYTES_TARGET && rateRatio >= RATE_TARGET && copies === 0 && ep.executed.length === 10 * n;
    const fmt = (v: number) => `${(v / 1e3).toFixed(1)} k frames/s`;
    return {
      pass,
      lines: [
        `episode format, ${n.toLocaleString('en')} frames of 500 Hz float32 robot state, recorder flush policy: ` +
          `/1 JSON ${(bj / n).toFixed(0)} B/frame ${fmt(median(rj))}; /2 protobuf+zstd ${(bp / n).toFixed(0)} B/frame ${fmt(median(rp))} ` +
          `(${copies} double copies): bytes ${(100 * bytesRatio).toFixed(1)} % (target <= ${100 * BYTES_TARGET} %), ` +
          `write rate ${rateRatio.toFixed(2)}x (target >= ${RATE_TARGET}x) ${pass ? 'PASS' : 'BELOW TARGET'}`,
        `episode format: rounds /1 ${rj.map(fmt).join(' / ')}, /2 ${rp.map(fmt).join(' / ')} (medians compared); ` +
          `a 10-minute /2 episode with its 3D tracks (${(10 * n).toLocaleString('en')} frames, ${(tenBytes / 1e6).toFixed(1)} MB, ${(tenBytes / 10 / 1e6).toFixed(1)} MB per minute) read in ${readS.toFixed(2)} s`,
      ],
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// `npx tsx bench/episodeFormatBench.ts` runs this benchmark alone.
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const r = await benchEpisodeFormat();
  r.lines.forEach((l) => console.log(l));
  process.exitCode = r.pass ? 0 : 1;
}
