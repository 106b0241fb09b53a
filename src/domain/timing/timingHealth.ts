// Can this machine hold the safety timing? (issue 13 item 3; DESIGN §6): shown before a trial is
// armed, from what the console measured over the last few seconds — the largest gap between the
// interlock box's counted statuses, and between deliveries of the robot's lowstate. Both trip at
// 100 ms of silence (the interlock monitor; the safety gate's link watchdog), so a gap of half
// that already means a loaded machine or a slow link is one hiccup away from a trip.

/** Silence that trips, ms: the interlock (no status) and the robot link (no lowstate). */
export const TIMING_TRIP_LIMIT_MS = 100;
/** A measured gap above this fraction of the trip limit is a warning. */
export const TIMING_WARN_FRACTION = 0.5;
/** The window the gaps are measured over, ms. */
export const TIMING_WINDOW_MS = 5000;

export type TimingLevel = 'ok' | 'warn' | 'bad' | 'unknown';

export interface TimingFigure {
  /** The largest gap over the window (including the one still open), ms; null when not measured. */
  maxGapMs: number | null;
}

export interface TimingInput {
  /** The interlock's status gaps; null when no interlock is open. */
  interlock: TimingFigure | null;
  /** The robot link's lowstate gaps; null when no robot is connected. */
  lowstate: TimingFigure | null;
}

export interface TimingHealth {
  level: TimingLevel;
  /** Per source, what was measured and against what. */
  items: { source: 'interlock' | 'lowstate'; level: TimingLevel; maxGapMs: number | null; message: string }[];
  /** One line for the operator. */
  summary: string;
}

const ORDER: Record<TimingLevel, number> = { ok: 0, unknown: 1, warn: 2, bad: 3 };
const NAMES = { interlock: 'interlock status', lowstate: 'robot lowstate' } as const;

function judge(source: 'interlock' | 'lowstate', f: TimingFigure): TimingHealth['items'][number] {
  const name = NAMES[source];
  const warnAt = TIMING_TRIP_LIMIT_MS * TIMING_WARN_FRACTION;
  const g = f.maxGapMs;
  if (g === null) return { source, level: 'unknown', maxGapMs: null, message: `${name}: not measured yet` };
  const figures = `max gap ${g.toFixed(0)} ms over ${TIMING_WINDOW_MS / 1000} s (trip at ${TIMING_TRIP_LIMIT_MS} ms)`;
  if (g >= TIMING_TRIP_LIMIT_MS)
    return { source, level: 'bad', maxGapMs: g, message: `${name}: ${figures} — this would have tripped` };
  if (g > warnAt)
    return {
      source,
      level: 'warn',
      maxGapMs: g,
      message: `${name}: ${figures} — above ${warnAt} ms, this machine may not hold the timing`,
    };
  return { source, level: 'ok', maxGapMs: g, message: `${name}: ${figures}` };
}

/** The timing verdict: the worst of the sources measured; 'unknown' when neither is. */
export function timingHealth(input: TimingInput): TimingHealth {
  const items: TimingHealth['items'] = [];
  if (input.interlock) items.push(judge('interlock', input.interlock));
  if (input.lowstate) items.push(judge('lowstate', input.lowstate));
  if (items.length === 0) return { level: 'unknown', items, summary: 'timing: no interlock or robot to measure' };
  const level = items.reduce<TimingLevel>((w, i) => (ORDER[i.level] > ORDER[w] ? i.level : w), 'ok');
  const worst = items.filter((i) => i.level === level);
  const summary =
    level === 'ok'
      ? `timing ok: ${items.map((i) => `${NAMES[i.source]} max gap ${i.maxGapMs!.toFixed(0)} ms`).join(', ')}`
      : worst.map((i) => i.message).join('; ');
  return { level, items, summary };
}
