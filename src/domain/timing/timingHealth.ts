// Can this machine hold the safety timing? (DESIGN §6): shown before a trial is armed, from what
// the console measured over the last few seconds — the largest gap between the interlock box's
// counted statuses, and between deliveries of the robot's lowstate. Both trip at 100 ms of
// silence (the interlock monitor; the safety gate's link watchdog), so a gap of half that already
// means a loaded machine or a slow link is one hiccup away from a trip. Beside them, a kernel
// setting known to produce such gaps under load (SchedulerFacts) is a warning before any gap shows.

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

/** What the host's kernel says about its scheduler (read from /proc by the services). */
export interface SchedulerFacts {
  /**
   * kernel.sched_autogroup_enabled: 1 (true) shares the CPUs between sessions first. The kernel's
   * own workers (the ones that move a serial port's and a pty's bytes, `flush_to_ldisc`) are in no
   * session and wait behind whole sessions: measured 100–260 ms under a loaded console
   * (docs/G1_RUNNER.md "A matched pair through the console"), enough to trip the interlock. null: not known (not Linux).
   */
  kernelAutogroups: boolean | null;
}

export interface TimingInput {
  /** The interlock's status gaps; null when no interlock is open. */
  interlock: TimingFigure | null;
  /** The robot link's lowstate gaps; null when no robot is connected. */
  lowstate: TimingFigure | null;
  /** The host's scheduler settings; judged only beside a measured source (absent or null: not judged). */
  scheduler?: SchedulerFacts | null;
}

/** The setting's name and the value the robot PC needs (docs/ROBOT_SETUP.md). */
export const AUTOGROUP_SETTING = 'kernel.sched_autogroup_enabled';

export interface TimingHealth {
  level: TimingLevel;
  /** Per source, what was measured and against what. */
  items: { source: TimingSource; level: TimingLevel; maxGapMs: number | null; message: string }[];
  /** One line for the operator. */
  summary: string;
}

export type TimingSource = 'interlock' | 'lowstate' | 'scheduler';

const ORDER: Record<TimingLevel, number> = { ok: 0, unknown: 1, warn: 2, bad: 3 };
const NAMES = { interlock: 'interlock status', lowstate: 'robot lowstate', scheduler: 'kernel scheduler' } as const;

/** The scheduler item: a warning while autogroups are on; nothing when not known. */
function judgeScheduler(f: SchedulerFacts): TimingHealth['items'][number] | null {
  if (f.kernelAutogroups === null) return null;
  if (!f.kernelAutogroups)
    return { source: 'scheduler', level: 'ok', maxGapMs: null, message: `kernel scheduler: ${AUTOGROUP_SETTING} = 0` };
  return {
    source: 'scheduler',
    level: 'warn',
    maxGapMs: null,
    message: `kernel scheduler: ${AUTOGROUP_SETTING} = 1 — the kernel workers that carry the interlock's serial bytes wait behind whole sessions under load (100–260 ms measured); set it to 0 (docs/ROBOT_SETUP.md)`,
  };
}

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
  const sched = input.scheduler ? judgeScheduler(input.scheduler) : null;
  if (sched) items.push(sched);
  const level = items.reduce<TimingLevel>((w, i) => (ORDER[i.level] > ORDER[w] ? i.level : w), 'ok');
  const worst = items.filter((i) => i.level === level);
  const summary =
    level === 'ok'
      ? `timing ok: ${items
          .filter((i) => i.maxGapMs !== null)
          .map((i) => `${NAMES[i.source]} max gap ${i.maxGapMs!.toFixed(0)} ms`)
          .join(', ')}`
      : worst.map((i) => i.message).join('; ');
  return { level, items, summary };
}
