import type { BackendEvent, Problem } from '../../domain/backend/backend';
import type { BackendProblemCode } from '../../domain/backend/problemCodes';
import { ProblemLedger } from '../../domain/robotLink/problemLedger';
import type { LinkClock } from '../robotLink/linkClock';

// The bridge client's problems as backend events: incidents rate-limited per code (all are
// counted), conditions raised once and withdrawn when they end (the ProblemLedger of
// src/domain/robotLink/problemLedger.ts), and the conditions that describe one connection's
// server, withdrawn when a later connection is ready without them.

/** Conditions that describe one connection's server. */
const SERVER_CONDITIONS: readonly BackendProblemCode[] = [
  'unsupported_contract',
  'unsupported_encoding',
  'watch_only',
  'bad_metadata',
];

export interface LinkProblemsOptions {
  clock: LinkClock;
  /** Incidents of one code are reported at most this often, ms. */
  intervalMs: number;
  emit: (ev: BackendEvent) => void;
  log: (line: string) => void;
}

export class LinkProblems {
  private readonly ledger: ProblemLedger;
  /** Server conditions raised on the latest connection. */
  private connConditions = new Set<BackendProblemCode>();

  constructor(private readonly o: LinkProblemsOptions) {
    this.ledger = new ProblemLedger(o.intervalMs);
  }

  /** An incident (reported unless one of its code was reported recently, or `always`). */
  incident(severity: Problem['severity'], code: BackendProblemCode, message: string, always = false): void {
    const r = this.ledger.incident(severity, code, message, this.o.clock.wallNowMs(), always);
    if (!r) return;
    this.o.log(`bridge client: ${severity}: ${code}: ${message}`);
    this.o.emit({ type: 'problem', problem: r.problem });
  }

  /** A condition begins (reported once until withdrawn). */
  raise(severity: Problem['severity'], code: BackendProblemCode, message: string): void {
    const r = this.ledger.raise(severity, code, message, this.o.clock.wallNowMs());
    if (!r) return;
    if (r.log) this.o.log(`bridge client: ${severity}: ${code}: ${message}`);
    this.o.emit({ type: 'problem', problem: r.problem });
  }

  /** A condition ended. */
  withdraw(code: BackendProblemCode): void {
    if (!this.ledger.clear(code)) return;
    this.o.emit({ type: 'problem_cleared', code, atMs: this.o.clock.wallNowMs() });
  }

  /** The notice of frames dropped for a slow listener (put at the head of its next batch, never rate-limited). */
  framesDropped(sinceLastBatch: number, total: number): BackendEvent {
    return {
      type: 'problem',
      problem: {
        severity: 'warn',
        code: 'frames_dropped',
        message: `${sinceLastBatch} frames dropped: the listener fell behind the stream (${total} in all)`,
        atMs: this.o.clock.wallNowMs(),
      },
    };
  }

  /** A new connection begins: no server condition raised on it yet. */
  newConnection(): void {
    this.connConditions = new Set();
  }

  /** A condition of the current connection's server. */
  raiseServerCondition(severity: Problem['severity'], code: BackendProblemCode, message: string): void {
    this.connConditions.add(code);
    this.raise(severity, code, message);
  }

  /** The current connection's server is known: the conditions it did not raise are over. */
  serverReady(): void {
    for (const code of SERVER_CONDITIONS) if (!this.connConditions.has(code)) this.withdraw(code);
  }
}
