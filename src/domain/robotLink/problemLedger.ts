import type { BackendProblem } from '../backend/backend';
import type { BackendProblemCode } from '../backend/problemCodes';

// Which problems a link reports and when (time comes in as data: wall-clock ms, the stamp every
// problem carries).
//
// - An incident is reported unless one of the same code was reported less than `intervalMs`
//   ago (`always` bypasses the limit, e.g. the server's own status messages); the caller counts
//   every occurrence itself, so a limited report loses nothing but a line.
// - A condition is reported when it begins and not again while it holds; `clear` ends it (the
//   caller then emits `problem_cleared`). Its onset is never rate-limited — a condition that
//   began must be visible while it holds — but its log line is, under the same interval, so a
//   flapping link does not flood the log.

export interface LedgerReport {
  problem: BackendProblem;
  /** Write a log line for it (false: the same code was logged less than intervalMs ago). */
  log: boolean;
}

export class ProblemLedger {
  private readonly lastReportAtMs = new Map<BackendProblemCode, number>();
  private readonly lastLogAtMs = new Map<BackendProblemCode, number>();
  private readonly active = new Set<BackendProblemCode>();

  /** @param intervalMs at most one report (incidents) or log line (conditions) per code this often */
  constructor(private readonly intervalMs: number) {
    if (!(intervalMs >= 0)) throw new RangeError(`problem interval must be ≥ 0 ms, got ${intervalMs}`);
  }

  /** An incident at atMs: the problem to report, or null when one of its code went out too recently. */
  incident(
    severity: BackendProblem['severity'],
    code: BackendProblemCode,
    message: string,
    atMs: number,
    always = false,
  ): LedgerReport | null {
    const last = this.lastReportAtMs.get(code);
    if (!always && last !== undefined && atMs - last < this.intervalMs) return null;
    this.lastReportAtMs.set(code, atMs);
    this.lastLogAtMs.set(code, atMs);
    return { problem: { severity, code, message, atMs }, log: true };
  }

  /** A condition begins at atMs: the problem to report, or null when it already holds. */
  raise(
    severity: BackendProblem['severity'],
    code: BackendProblemCode,
    message: string,
    atMs: number,
  ): LedgerReport | null {
    if (this.active.has(code)) return null;
    this.active.add(code);
    const lastLog = this.lastLogAtMs.get(code);
    const log = lastLog === undefined || atMs - lastLog >= this.intervalMs;
    if (log) this.lastLogAtMs.set(code, atMs);
    this.lastReportAtMs.set(code, atMs);
    return { problem: { severity, code, message, atMs }, log };
  }

  /** The condition ended: true when it held (the caller withdraws it), false when it did not. */
  clear(code: BackendProblemCode): boolean {
    return this.active.delete(code);
  }

  holds(code: BackendProblemCode): boolean {
    return this.active.has(code);
  }

  /** The conditions that hold now. */
  conditions(): BackendProblemCode[] {
    return [...this.active];
  }
}
