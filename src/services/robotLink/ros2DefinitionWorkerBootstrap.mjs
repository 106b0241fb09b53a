// Entry of the ROS 2 definition checker's worker thread (ros2DefinitionOffThread.ts). Like
// src/services/sim/simWorkerBootstrap.mjs it loads the TypeScript worker module (its bundle, or
// the source through tsx: ../entries/entryBundles.mjs), but first lowers this thread's priority
// (Linux niceness is per thread, and the threads and processes it starts — tsx's loader thread,
// esbuild — inherit it): loading the worker's modules is the costly part of its start, and on a
// loaded machine it must not take CPU from the services' main thread, which carries STOP. Where the OS refuses, the thread keeps its priority.
import fs from 'node:fs';
import os from 'node:os';
import { workerData } from 'node:worker_threads';

/** The niceness of this thread (and of what it starts). */
const WORKER_NICE = 10;
try {
  const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) os.setPriority(tid, Math.max(os.getPriority(tid), WORKER_NICE));
} catch {
  // Not Linux, or not allowed: the worker starts at the process's priority.
}
const { importEntry } = await import('../entries/entryBundles.mjs');
await importEntry(workerData.entry);
