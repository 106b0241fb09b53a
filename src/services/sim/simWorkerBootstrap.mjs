// Entry of a simulator worker thread (and of the other worker threads that start the same way).
// The worker's code is TypeScript; worker threads do not inherit the tsx loader the main thread
// runs under (nor does `--import tsx` in a worker's execArgv take effect on Node 20), so it is
// loaded here: its prebuilt bundle, or the source through tsx (../entries/entryBundles.mjs).
//
// `workerData.startNice` (optional): the nice this thread lowers itself to (never raises) before
// anything else runs. A Linux thread starts at its creator's nice, and loading the worker's
// modules is the costly part of its start (tsx's hooks thread compiles each one when no fresh
// bundle exists): a worker created by a real-time thread (the onboard computer, by the
// g1-runner's) would otherwise load at the timekeepers' priority.
// Linux only (the thread id from /proc/thread-self); elsewhere, or if refused, it keeps its nice.
import fs from 'node:fs';
import os from 'node:os';
import { workerData } from 'node:worker_threads';
import { importEntry } from '../entries/entryBundles.mjs';

if (typeof workerData.startNice === 'number') {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    if (os.getPriority(tid) < workerData.startNice) os.setPriority(tid, workerData.startNice);
  } catch {
    // keeps its creator's nice
  }
}
await importEntry(workerData.entry);
