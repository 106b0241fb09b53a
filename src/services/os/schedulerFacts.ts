import fs from 'node:fs';
import type { SchedulerFacts } from '../../domain/timing/timingHealth';

// The host scheduler's settings that decide whether the safety timing holds under load
// (src/domain/timing/timingHealth.ts SchedulerFacts). Read from /proc, cached for a few seconds:
// the services push them at 5 Hz and an operator may change the setting while the console runs.

const AUTOGROUP_FILE = '/proc/sys/kernel/sched_autogroup_enabled';
const CACHE_MS = 5000;

/** kernel.sched_autogroup_enabled as a boolean; null where the file is absent (not Linux, no such kernel). */
export function readKernelAutogroups(file = AUTOGROUP_FILE): boolean | null {
  try {
    const v = fs.readFileSync(file, 'latin1').trim();
    return v === '0' ? false : v === '1' ? true : null;
  } catch {
    return null;
  }
}

let cached: { atMs: number; facts: SchedulerFacts } | null = null;

/** The facts, read again when the cached ones are older than CACHE_MS (`nowMs`: a monotonic clock). */
export function schedulerFacts(nowMs: number): SchedulerFacts {
  if (cached === null || nowMs - cached.atMs > CACHE_MS || nowMs < cached.atMs)
    cached = { atMs: nowMs, facts: { kernelAutogroups: readKernelAutogroups() } };
  return cached.facts;
}

/** One line for a log where the setting puts the safety timing at risk; null when it does not. */
export function autogroupWarning(facts: SchedulerFacts = { kernelAutogroups: readKernelAutogroups() }): string | null {
  if (facts.kernelAutogroups !== true) return null;
  return (
    "kernel.sched_autogroup_enabled = 1: under load the kernel workers that carry the interlock box's serial bytes " +
    'wait behind whole sessions (100–260 ms measured); set it to 0 on the machine that runs trials (docs/ROBOT_SETUP.md)'
  );
}
