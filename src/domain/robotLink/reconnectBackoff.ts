// When a link tries to connect again after a failed connect or a loss: exponential backoff,
// first after initialDelayMs, doubling up to maxDelayMs, reset once a connection succeeds (the
// server became known, not merely a socket opening). After maxAttempts consecutive attempts
// without success it gives up (default: never). Pure: the services side owns the timer.

export interface ReconnectPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  /** Consecutive attempts without success before giving up; Infinity never gives up. */
  maxAttempts: number;
}

export interface ReconnectState {
  /** Attempts scheduled since the last success. */
  readonly attempts: number;
  /** The delay of the next attempt, ms. */
  readonly nextDelayMs: number;
}

export type ReconnectDecision =
  | { kind: 'retry'; delayMs: number; attempt: number; state: ReconnectState }
  | { kind: 'give_up'; attempts: number; state: ReconnectState };

/** Checks a policy; throws RangeError naming what is wrong. */
export function checkReconnectPolicy(p: ReconnectPolicy): ReconnectPolicy {
  if (!(Number.isFinite(p.initialDelayMs) && p.initialDelayMs > 0))
    throw new RangeError(`reconnect initial delay must be > 0 ms, got ${p.initialDelayMs}`);
  if (!(p.maxDelayMs >= p.initialDelayMs))
    throw new RangeError(
      `reconnect max delay must be ≥ the initial delay (${p.initialDelayMs} ms), got ${p.maxDelayMs}`,
    );
  if (!(p.maxAttempts === Infinity || (Number.isInteger(p.maxAttempts) && p.maxAttempts >= 0)))
    throw new RangeError(`reconnect max attempts must be an integer ≥ 0 or Infinity, got ${p.maxAttempts}`);
  return p;
}

/** The state after a success (and at the start). */
export function reconnectReset(p: ReconnectPolicy): ReconnectState {
  return { attempts: 0, nextDelayMs: p.initialDelayMs };
}

/** The link failed (again): when to try next, or that the attempts are used up. */
export function nextReconnect(s: ReconnectState, p: ReconnectPolicy): ReconnectDecision {
  if (s.attempts >= p.maxAttempts) return { kind: 'give_up', attempts: s.attempts, state: s };
  const attempt = s.attempts + 1;
  return {
    kind: 'retry',
    delayMs: s.nextDelayMs,
    attempt,
    state: { attempts: attempt, nextDelayMs: Math.min(p.maxDelayMs, s.nextDelayMs * 2) },
  };
}
