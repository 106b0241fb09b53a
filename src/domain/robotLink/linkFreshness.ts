import type { Presence } from '../backend/backend';

// The freshness of a robot link as a pure state machine: what the link's presence is, given when
// it was last fresh and the time now. Time comes in as data (console monotonic ms); the services
// side (src/services/robotLink/freshnessMonitor.ts) owns the timers that feed it.
//
//   reduceFreshness(state, input, config) → { state, effects }     pure, never mutates
//
// Rules (DESIGN §6; docs/G1_BRIDGE.md §10):
// - `connecting` until the server is known (`ready`: it said what it is and advertised lowstate);
//   then `present`.
// - A connected, once-present link ages from its last fresh message: `present` while the age is
//   below `staleAfterMs`, `stale` from there, `lost` from `lostAtAgeMs` (= lostAfterMs −
//   lostMarginMs, never below staleAfterMs: the loss is declared a margin early so that a timer
//   firing late still declares it within lostAfterMs). A threshold is crossed exactly when the
//   age reaches it (age ≥ limit).
// - A fresh message makes a stale or lost (but still connected) link `present` again at once.
// - A closed socket is `lost` at once if the link was ever present (else it stays as it is: a
//   failed connect); `lost` lasts until a fresh message or the next connection's `ready`.
// - A silence verdict (to stale or lost) is taken in two steps: a `check` finds it due and asks
//   for a verification once the socket has been read (`verifyAfterIo`); the `check` with
//   `afterIo: true` then takes it. Timers run before I/O in a loop turn, so after a pause of the
//   console itself, messages that arrived in time may still sit unread; they are read (and make
//   the link fresh) before the verification.

export interface FreshnessConfig {
  /** Presence becomes `stale` when the freshness age reaches this, ms. */
  staleAfterMs: number;
  /** … and `lost` when it reaches this, ms (lostAfterMs − lostMarginMs, ≥ staleAfterMs). */
  lostAtAgeMs: number;
}

/** Checks the thresholds and derives the age at which the loss is declared; throws RangeError on nonsense. */
export function resolveFreshnessConfig(
  o: { staleAfterMs: number; lostAfterMs: number; lostMarginMs: number },
  name = 'link',
): FreshnessConfig {
  if (!(o.staleAfterMs > 0 && o.lostAfterMs >= o.staleAfterMs))
    throw new RangeError(`${name}: need 0 < staleAfterMs ≤ lostAfterMs, got ${o.staleAfterMs} and ${o.lostAfterMs}`);
  if (!(o.lostMarginMs >= 0)) throw new RangeError(`${name}: lostMarginMs must be ≥ 0, got ${o.lostMarginMs}`);
  return { staleAfterMs: o.staleAfterMs, lostAtAgeMs: Math.max(o.staleAfterMs, o.lostAfterMs - o.lostMarginMs) };
}

export interface FreshnessState {
  readonly presence: Presence;
  /** The link has been present at least once (a closed socket before that is a failed connect, not a loss). */
  readonly everPresent: boolean;
  /** A socket is attached (opening or open): only an attached link ages. */
  readonly attached: boolean;
  /** When the link was last fresh, console monotonic ms; null before the first time. */
  readonly lastFreshAtMs: number | null;
  /** close() was called: `disconnected` for good. */
  readonly closed: boolean;
}

export type FreshnessInput =
  /** A new socket is being opened. */
  | { type: 'attach' }
  /** The server is known (serverInfo read, lowstate advertised): present and fresh as of atMs. */
  | { type: 'ready'; atMs: number }
  /** A message that keeps the link fresh arrived at atMs. */
  | { type: 'fresh'; atMs: number }
  /** Is a threshold crossed at atMs? `afterIo`: the socket has been read since the check found a verdict due. */
  | { type: 'check'; atMs: number; afterIo: boolean }
  /** The socket closed (or was dropped). */
  | { type: 'detach' }
  /** The backend is closed. */
  | { type: 'close' };

export interface FreshnessEffects {
  /** The new presence, when it changed. */
  presence: Presence | null;
  /** A silence verdict taken now (presence went stale or lost by age), with the age it was taken at. */
  verdict: { to: 'stale' | 'lost'; ageMs: number } | null;
  /** A verdict is due: check again (afterIo) once the socket has been read. */
  verifyAfterIo: boolean;
  /** When the next threshold of the current age falls due, ms; null while the link does not age. */
  deadlineAtMs: number | null;
}

export function initialFreshness(): FreshnessState {
  return { presence: 'connecting', everPresent: false, attached: false, lastFreshAtMs: null, closed: false };
}

/** True while the link ages: attached, once present, not lost, with a last fresh time. */
function ages(s: FreshnessState): boolean {
  return !s.closed && s.attached && s.everPresent && s.presence !== 'lost' && s.lastFreshAtMs !== null;
}

/** The presence the age alone implies (present, stale or lost). */
export function presenceByAge(ageMs: number, cfg: FreshnessConfig): 'present' | 'stale' | 'lost' {
  return ageMs < cfg.staleAfterMs ? 'present' : ageMs < cfg.lostAtAgeMs ? 'stale' : 'lost';
}

/** When the state's next threshold falls due (stale while present, lost while stale), or null. */
export function freshnessDeadlineMs(s: FreshnessState, cfg: FreshnessConfig): number | null {
  if (!ages(s)) return null;
  return (s.lastFreshAtMs as number) + (s.presence === 'stale' ? cfg.lostAtAgeMs : cfg.staleAfterMs);
}

export function reduceFreshness(
  s: FreshnessState,
  input: FreshnessInput,
  cfg: FreshnessConfig,
): { state: FreshnessState; effects: FreshnessEffects } {
  let next: FreshnessState = s;
  let verdict: FreshnessEffects['verdict'] = null;
  let verifyAfterIo = false;
  if (s.closed) return done(s, s, cfg, null, false);
  switch (input.type) {
    case 'attach':
      next = { ...s, attached: true };
      break;
    case 'ready':
      if (s.presence !== 'present')
        next = { ...s, presence: 'present', everPresent: true, attached: true, lastFreshAtMs: input.atMs };
      break;
    case 'fresh':
      next = {
        ...s,
        lastFreshAtMs: input.atMs,
        presence: s.presence !== 'present' && s.everPresent && s.attached ? 'present' : s.presence,
      };
      break;
    case 'check': {
      if (!ages(s)) break;
      const ageMs = input.atMs - (s.lastFreshAtMs as number);
      const byAge = presenceByAge(ageMs, cfg);
      if (byAge === s.presence) break;
      if (!input.afterIo) {
        verifyAfterIo = true;
        break;
      }
      next = { ...s, presence: byAge };
      if (byAge !== 'present') verdict = { to: byAge, ageMs };
      break;
    }
    case 'detach':
      next = { ...s, attached: false, presence: s.everPresent ? 'lost' : s.presence };
      break;
    case 'close':
      next = { ...s, closed: true, attached: false, presence: 'disconnected' };
      break;
  }
  return done(s, next, cfg, verdict, verifyAfterIo);
}

function done(
  before: FreshnessState,
  state: FreshnessState,
  cfg: FreshnessConfig,
  verdict: FreshnessEffects['verdict'],
  verifyAfterIo: boolean,
): { state: FreshnessState; effects: FreshnessEffects } {
  return {
    state,
    effects: {
      presence: state.presence !== before.presence ? state.presence : null,
      verdict,
      verifyAfterIo,
      // While a verification is pending nothing is armed: the verification re-arms.
      deadlineAtMs: verifyAfterIo ? null : freshnessDeadlineMs(state, cfg),
    },
  };
}
