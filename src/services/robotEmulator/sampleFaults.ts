import { performance } from 'node:perf_hooks';
import type { ScheduledFault } from '../../domain/robotEmulator';

// The faults both emulated robots inject into their own sample stream: freeze (the last sample's
// values repeated for a while), nan (a non-finite joint position in the next samples) and stall
// (the process blocked); and the --fault schedule that applies control actions at set times.

/** Freeze and NaN faults on a stream of samples `S`; each emulator applies them to its own format. */
export class SampleFaults<S> {
  private frozen: S | null = null;
  private freezeUntilMs = 0;
  private nanLeft = 0;

  /** Repeats `sample`'s values (a copy the caller made; null: nothing to repeat) for `ms`. */
  freeze(sample: S | null, ms: number): void {
    this.frozen = sample;
    this.freezeUntilMs = performance.now() + ms;
  }

  /** The frozen sample while the freeze lasts at `nowMs`; null once it is over (and it is then forgotten). */
  frozenAt(nowMs: number): S | null {
    if (this.frozen && nowMs < this.freezeUntilMs) return this.frozen;
    this.frozen = null;
    return null;
  }

  /** The next `frames` samples carry a non-finite joint position. */
  addNan(frames: number): void {
    this.nanLeft += frames;
  }

  /** Whether the sample about to go out carries the NaN (counted down). */
  takeNan(): boolean {
    if (this.nanLeft <= 0) return false;
    this.nanLeft--;
    return true;
  }
}

/** Blocks this process's event loop for `ms`: a stalled robot computer. */
export function stallProcess(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // the event loop is blocked on purpose
  }
}

/** Applies each fault's control action at its time after now; returns the timers (clear them on close). */
export function scheduleFaults(
  faults: readonly ScheduledFault[],
  apply: (f: ScheduledFault) => void,
): NodeJS.Timeout[] {
  return faults.map((f) => setTimeout(() => apply(f), f.atMs));
}

/** A control action's answer, as the control channel sends it back. */
export type ControlResult = { ok: boolean; message: string };

/**
 * Parses a control channel's JSON text with `decode`; a refusal names the topic and what is wrong.
 */
export function parseControl<A>(
  topic: string,
  text: string,
  decode: (doc: unknown) => { ok: true; value: A } | { ok: false; reason: string },
): { ok: true; value: A } | { ok: false; message: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `${topic}: not JSON: ${(err as Error).message}` };
  }
  const d = decode(doc);
  return d.ok ? d : { ok: false, message: `${topic}: ${d.reason}` };
}
