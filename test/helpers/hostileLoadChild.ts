// `node --import tsx test/helpers/hostileLoadChild.ts <mode> <file> [fps]`: reads a hostile file
// with one of the services' readers in this fresh process and prints one JSON line (see
// readInChild in hostileFiles.ts): whether it was accepted, the error, RSS before, the process's
// peak RSS (getrusage: catches a peak inside a synchronous read that no timer could sample) and
// arrayBuffers after.
//
// A watchdog thread guards the machine against the readers this suite attacks: if the read runs
// away (RSS beyond WATCHDOG_RSS_MIB, or longer than WATCHDOG_MS, e.g. a blocking read of a FIFO)
// it writes a report itself and SIGKILLs the process, so an old reader fails the test instead of
// exhausting memory or hanging the run.

import { Worker } from 'node:worker_threads';
import { readEpisodeFile } from '../../src/services/episode/episodeReader';
import { readProfileMesh } from '../../src/services/console/meshFiles';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { resolveBindingSpec } from '../../src/services/sim/bindingSpec';
import { fileSha256 } from '../../src/services/trace/parentInputs';
import { loadOnnxBinding } from '../../src/services/wbc/loadOnnxBinding';
import { loadFolderWorkload } from '../../src/services/workload/folderWorkload';
import type { RobotProfile } from '../../src/domain/robot/robotProfile';

export const WATCHDOG_RSS_MIB = 1024;
export const WATCHDOG_MS = 15_000;

const [mode, file, fps] = process.argv.slice(2);
const MiB = 1024 * 1024;
// MuJoCo's runtime module (its WASM build) is imported before the baseline, and only for its mode.
const mujocoRuntime = mode === 'mujoco' ? await import('../../src/services/mujoco/mujocoRuntime') : null;
const rssBeforeMiB = process.memoryUsage().rss / MiB;

// The watchdog runs plain JS (eval) in its own thread: it keeps running while the main thread is
// stuck in a synchronous read, and writes with fs.writeSync (a worker's process.stdout goes
// through the main thread, which may be blocked).
const watchdog = new Worker(
  `const { workerData: w } = require('node:worker_threads');
   const fs = require('node:fs');
   const t0 = Date.now();
   setInterval(() => {
     const rss = process.memoryUsage.rss() / 1048576;
     const late = Date.now() - t0 > w.ms;
     if (rss - w.before > w.rssMiB || late) {
       fs.writeSync(1, JSON.stringify({ ok: false, error: late ? 'watchdog: still reading after ' + w.ms + ' ms' : 'watchdog: RSS grew past ' + w.rssMiB + ' MiB', rssBeforeMiB: w.before, peakRssMiB: rss, arrayBuffersMiB: -1, ms: Date.now() - t0, killed: true }) + '\\n');
       process.kill(process.pid, 'SIGKILL');
     }
   }, 20);`,
  { eval: true, workerData: { before: rssBeforeMiB, rssMiB: WATCHDOG_RSS_MIB, ms: WATCHDOG_MS } },
);
watchdog.unref();

/** A profile whose only mesh is `meshFile` (robot.getMesh serves files the profile names). */
const meshProfile = (meshFile: string): RobotProfile =>
  ({
    modelName: 'hostile',
    bodies: [{ geoms: [{ type: 'mesh', mesh: { name: 'm', file: meshFile } }] }],
  }) as unknown as RobotProfile;

async function read(): Promise<void> {
  switch (mode) {
    case 'clip':
      loadClipFile(file, fps !== undefined ? { fps: Number(fps) } : {});
      return;
    case 'mjcf':
      loadRobotProfile(file);
      return;
    case 'mujoco':
      (await mujocoRuntime!.loadMujocoModel(file)).dispose();
      return;
    case 'onnx':
      await loadOnnxBinding(file);
      return;
    case 'binding':
      await resolveBindingSpec(file);
      return;
    case 'workload':
      loadFolderWorkload(file);
      return;
    case 'episode':
      await readEpisodeFile(file);
      return;
    case 'hash':
      fileSha256(file);
      return;
    case 'mesh':
      readProfileMesh(meshProfile(file), 'm');
      return;
    default:
      throw new Error(`unknown mode ${mode}`);
  }
}

const t0 = performance.now();
let ok = true;
let error: string | undefined;
try {
  await read();
} catch (err) {
  ok = false;
  error = (err as Error).message;
}
const ms = performance.now() - t0;
process.stdout.write(
  `${JSON.stringify({ ok, ...(error !== undefined && { error }), rssBeforeMiB, peakRssMiB: process.resourceUsage().maxRSS / 1024, arrayBuffersMiB: process.memoryUsage().arrayBuffers / MiB, ms })}\n`,
);
process.exit(0);
