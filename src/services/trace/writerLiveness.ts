// Who is writing a running episode, and is that process still alive? Opening a campaign marks a
// `running` episode interrupted only when its writer is certainly gone: another process of this
// machine that is still alive (same pid *and* same start time, so a reused pid is not mistaken
// for the writer) keeps its episode; this process keeps the episodes its recorders hold.

import fs from 'node:fs';
import os from 'node:os';
import type { WriterIdentity } from '../../domain/trace/records';

/** Linux: state (field 3) and start time (field 22, clock ticks since boot) from /proc/<pid>/stat; null elsewhere. */
function procStat(pid: number): { state: string; start: string } | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may contain spaces and parentheses: fields after the last ')' are fixed.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0], start: rest[19] }; // field 3 is rest[0], so field 22 is rest[19]
  } catch {
    return null;
  }
}

export function processStartOf(pid: number): string | null {
  return procStat(pid)?.start ?? null;
}

let self: WriterIdentity | null = null;

export function currentWriter(): WriterIdentity {
  self ??= { host: os.hostname(), pid: process.pid, start: processStartOf(process.pid) };
  return self;
}

/** Run ids being recorded by this process, per database file (realpath). */
const active = new Map<string, Set<string>>();

export function markActive(dbFile: string, runId: string): void {
  let s = active.get(dbFile);
  if (!s) active.set(dbFile, (s = new Set()));
  s.add(runId);
}

export function markInactive(dbFile: string, runId: string): void {
  active.get(dbFile)?.delete(runId);
}

export function activeRuns(dbFile: string): string[] {
  return [...(active.get(dbFile) ?? [])];
}

export type WriterState = 'alive' | 'dead' | 'unknown';

/**
 * Whether a process is alive, independent of any episode: 'self' for this process, 'dead' for a
 * process of this host that no longer exists (or is a zombie, or whose pid now belongs to a later
 * process: its start time differs), 'alive' otherwise; 'unknown' for another host.
 */
export function processState(w: WriterIdentity): 'self' | WriterState {
  const me = currentWriter();
  if (w.host !== me.host) return 'unknown';
  if (w.pid === me.pid && (w.start === null || w.start === me.start)) return 'self';
  try {
    process.kill(w.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return 'dead';
    // EPERM: a process with that pid exists (another user's); fall through to the start time.
  }
  const now = procStat(w.pid);
  if (now) {
    // A zombie (killed, not yet reaped by its parent) writes nothing any more.
    if (now.state === 'Z' || now.state === 'X') return 'dead';
    if (w.start !== null && now.start !== w.start) return 'dead';
  } else if (w.start !== null && fs.existsSync('/proc/self/stat')) {
    return 'dead';
  }
  return 'alive';
}

/**
 * 'dead' when the writer is certainly gone: this process without a recorder for the run, or a
 * process of this host that no longer exists (or whose pid now belongs to a later process).
 * 'unknown' for another host (a shared folder): left alone unless recovery is forced.
 */
export function writerState(w: WriterIdentity, dbFile: string, runId: string): WriterState {
  const s = processState(w);
  if (s === 'self') return active.get(dbFile)?.has(runId) ? 'alive' : 'dead';
  return s;
}
