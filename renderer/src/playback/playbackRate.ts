// What speed playback achieves. The loop (playback.ts) advances the playhead by
// the wall time between two display frames, at most MAX_TICK_S a frame so that a stall (a hidden
// tab, a long frame) is not played as a jump. When rendering takes longer than that per frame —
// software GL on a busy machine — the clip plays slower than asked, silently. The meter measures
// clip seconds advanced per wall second over the last RATE_WINDOW_MS, and the timeline says so
// when that falls below SLOW_SHARE of the requested speed. Pure: unit-tested with a fake clock in
// test/unit/rendererPlaybackLoop.test.ts.

/** Most clip time one display frame may advance, s (÷ speed): longer frames are played short. */
export const MAX_TICK_S = 0.25;
/** The window the achieved speed is measured over, ms. */
export const RATE_WINDOW_MS = 2000;
/** No verdict before the window spans this much wall time, ms. */
export const RATE_MIN_SPAN_MS = 1000;
/** Below this share of the requested speed, playback is reported as slow. */
export const SLOW_SHARE = 0.9;

export class PlaybackRateMeter {
  /** Wall time of each tick and the clip seconds it advanced, oldest first. */
  private ticks: { atMs: number; clipS: number }[] = [];

  reset(): void {
    this.ticks = [];
  }

  /** One display frame at wall time `nowMs` that advanced the playhead by `clipS` (the first of a run: 0). */
  tick(nowMs: number, clipS: number): void {
    this.ticks.push({ atMs: nowMs, clipS });
    while (this.ticks.length > 2 && nowMs - this.ticks[1].atMs >= RATE_WINDOW_MS) this.ticks.shift();
  }

  /** Clip seconds per wall second over the window (1 = real time); null until it spans RATE_MIN_SPAN_MS. */
  rate(): number | null {
    const n = this.ticks.length;
    if (n < 2) return null;
    const spanMs = this.ticks[n - 1].atMs - this.ticks[0].atMs;
    if (spanMs < RATE_MIN_SPAN_MS) return null;
    // The first tick's advance covers the time before the window: not counted.
    let clipS = 0;
    for (let i = 1; i < n; i++) clipS += this.ticks[i].clipS;
    return clipS / (spanMs / 1000);
  }
}

/** "0.31× real time (1× asked) — rendering cannot keep up", or null when playback keeps the requested speed. */
export function slowPlaybackNote(achieved: number | null, requested: number): string | null {
  if (achieved === null || achieved >= SLOW_SHARE * requested) return null;
  return `${Number(achieved.toPrecision(2))}× real time (${requested}× asked) — rendering cannot keep up`;
}
