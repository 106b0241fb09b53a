import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createStateFrame, type StateFrame } from '../src/domain/robot/stateFrame';
import { sha256HexOfString } from '../src/domain/hash/sha256';
import { availableReading, MB_METRICS_1, type EpisodeMetrics } from '../src/domain/metrics';
import { makeBuiltinBinding } from '../src/domain/sim/builtinBinding';
import { roundToFloat32 } from '../src/domain/robotEmulator/sensorModel';
import { DEFAULT_ADAPTER_VERSION } from '../src/domain/trace/parentTrace';
import { executedJsonMessage } from '../src/services/episode/episodeWriter';
import { openCampaign, RECORDER_FLUSH_POLICY } from '../src/services/trace';

// Trace write throughput: 60 s of a 500 Hz × 29-joint robot state stream
// (30,000 StateFrames, delivered in batches of 25 = 50 ms) recorded into a real-robot campaign
// episode by the EpisodeRecorder — as a G1 publishes it: the measured joints and IMU are float32
// values (benchFrames), so the recorder stores each frame as a `motionbench-episode/2`
// motionbench.RobotState (protobuf, float32 measured fields, no double copy), MCAP chunks zstd
// compressed, closed every 250 frames and fdatasync'ed, SQLite begin/finish commits
// (synchronous=FULL) and the closing summary included — reported as frames/s, × real time and
// bytes per frame. Baselines in the same run, on the same frames:
//   raw:        JSON.stringify of the message object the `/1` JSON writer builds + fs.writeSync
//               per frame, no fsync (the least any JSON trace writer must do);
//   raw+sync:   the same with fdatasync every 250 frames (the recorder's durability).
// Rounds alternate recorder / raw / raw+sync (3 each after a warm-up); medians are compared.
export const TRACE_RT_TARGET = 10;
const RATE_HZ = 500;
const SECONDS = 60;
const N = RATE_HZ * SECONDS;
const BATCH = 25;

/**
 * 60 s of 500 Hz robot state with the measured joints and IMU rounded to float32, as a G1's
 * lowstate carries them (unitree_hg MotorState/IMUState are float32); root pose in double.
 */
export function benchFrames(): StateFrame[] {
  const out: StateFrame[] = [];
  for (let i = 0; i < N; i++) {
    const f = createStateFrame(true);
    const t = i / RATE_HZ;
    f.timeS = t;
    f.tick = i;
    f.rootPosM!.set([0.01 * Math.sin(t), 0.02 * t, 0.78]);
    f.rootQuatWxyz!.set([Math.cos(0.01 * t), 0, 0, Math.sin(0.01 * t)]);
    for (let j = 0; j < 29; j++) {
      f.jointPosRad[j] = 0.3 * Math.sin((1 + 0.1 * j) * t + j);
      f.jointVelRadS[j] = 0.3 * (1 + 0.1 * j) * Math.cos((1 + 0.1 * j) * t + j);
      f.jointTauNm[j] = 5 * Math.sin(2 * t - j);
    }
    f.imu.quatWxyz.set(f.rootQuatWxyz!);
    f.imu.gyroRadS.set([0.01 * Math.sin(t), 0.02, 0.03]);
    f.imu.accelMS2.set([0.1, 0.1 * Math.cos(t), 9.81]);
    for (const a of [f.jointPosRad, f.jointVelRadS, f.jointTauNm, f.imu.quatWxyz, f.imu.gyroRadS, f.imu.accelMS2])
      roundToFloat32(a);
    out.push(f);
  }
  return out;
}

const fps = (v: number): string => `${(v / 1e3).toFixed(1)} k frames/s`;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const metrics: EpisodeMetrics = {
  contract: MB_METRICS_1.id,
  K: 3001,
  failure: availableReading(null),
  progressSoft: availableReading(1),
  progressStop: availableReading(null),
  mpjpeLMm: availableReading(40),
  jointPosRmseRad: availableReading(0.05),
  jointVelRmseRadS: availableReading(0.4),
  jointAccRmsRadS2: availableReading(10),
  jointAccP95RadS2: availableReading(20),
  jointJerkRmsRadS3: availableReading(300),
  jointJerkP95RadS3: availableReading(700),
};

export async function benchTraceWrite(): Promise<{ pass: boolean; lines: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-trace-bench-'));
  const fs500 = benchFrames();
  const store = await openCampaign(path.join(dir, 'campaign'), { create: true });
  try {
    const parent = store.ensureParentTrace({
      binding: makeBuiltinBinding(),
      clipId: 'clip-bench00000000000',
      referenceSha256: sha256HexOfString('bench reference'),
      modelSha256: sha256HexOfString('bench model'),
      adapterVersion: DEFAULT_ADAPTER_VERSION,
      bodySet: ['pelvis'],
      contractId: MB_METRICS_1.id,
      calibrationId: null,
    });
    let bytes = 0;
    let chunks = 0;
    let copies = 0;
    const recorder = async (): Promise<number> => {
      const t0 = performance.now();
      const rec = await store.beginEpisode({
        parentTraceId: parent.id,
        executionDomain: 'real_robot',
        backendId: 'bench',
        robotUnit: 'bench-unit',
        seed: 0,
      });
      for (let i = 0; i < N; i += BATCH) await rec.frames(fs500.slice(i, i + BATCH));
      const ep = await rec.finish(
        {
          runId: rec.runId,
          outcome: 'completed',
          reason: 'bench',
          frames: N,
          simSeconds: (N - 1) / RATE_HZ,
          wallSeconds: 0,
        },
        metrics,
      );
      const s = (performance.now() - t0) / 1000;
      bytes = ep.mcapBytes ?? 0;
      chunks = rec.stats().chunks;
      copies = rec.stats().exactCopies;
      fs.rmSync(store.episodeFile(rec.runId));
      return N / s;
    };
    const enc = new TextEncoder();
    let rawBytes = 0;
    const raw = (sync: boolean) => (): number => {
      const file = path.join(dir, `raw-${sync}.jsonl`);
      const t0 = performance.now();
      const fd = fs.openSync(file, 'w');
      let total = 0;
      for (let i = 0; i < N; i++) {
        const b = enc.encode(JSON.stringify(executedJsonMessage(fs500[i], null)));
        fs.writeSync(fd, b);
        total += b.length;
        if (sync && i % 250 === 249) fs.fdatasyncSync(fd);
      }
      if (sync) fs.fsyncSync(fd);
      fs.closeSync(fd);
      const s = (performance.now() - t0) / 1000;
      rawBytes = total;
      fs.rmSync(file);
      return N / s;
    };
    await recorder();
    raw(false)();
    const r: number[] = [];
    const b: number[] = [];
    const bs: number[] = [];
    for (let round = 0; round < 3; round++) {
      r.push(await recorder());
      b.push(raw(false)());
      bs.push(raw(true)());
    }
    const rec = median(r);
    const base = median(b);
    const baseSync = median(bs);
    const rt = rec / RATE_HZ;
    const pass = rt >= TRACE_RT_TARGET;
    const perFrame = (v: number) => `${Math.round(v / N).toLocaleString('en')} B/frame`;
    return {
      pass,
      lines: [
        `trace write, ${RATE_HZ} Hz x 29 joints, ${SECONDS} s (${N.toLocaleString('en')} float32 StateFrames) into a real-robot campaign episode (MCAP /2, RobotState, ${chunks} zstd chunks of ${RECORDER_FLUSH_POLICY.everyFrames} frames, fdatasync each, SQLite begin+finish): ` +
          `${fps(rec)} = ${rt.toFixed(1)}x real time (${(bytes / 1e6).toFixed(1)} MB, ${perFrame(bytes)}, ${copies} double copies, ${((bytes / 1e6) * (rec / N)).toFixed(1)} MB/s); ` +
          `baseline raw fs.writeSync of the /1 JSON messages (${(rawBytes / 1e6).toFixed(1)} MB, ${perFrame(rawBytes)}) ${fps(base)} = ${(base / RATE_HZ).toFixed(1)}x real time, ratio ${(rec / base).toFixed(2)}x; ` +
          `raw + fdatasync every 250 frames ${fps(baseSync)}, ratio ${(rec / baseSync).toFixed(2)}x (target >= ${TRACE_RT_TARGET}x real time) ${pass ? 'PASS' : 'BELOW TARGET'}`,
        `trace write: rounds recorder ${r.map(fps).join(' / ')}, raw ${b.map(fps).join(' / ')}, raw+sync ${bs.map(fps).join(' / ')} (medians compared)`,
      ],
    };
  } finally {
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// `npx tsx bench/traceBench.ts` runs this benchmark alone.
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const r = await benchTraceWrite();
  r.lines.forEach((l) => console.log(l));
  process.exitCode = r.pass ? 0 : 1;
}
