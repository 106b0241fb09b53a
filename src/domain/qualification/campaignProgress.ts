// The figures of a long run's progress, one arithmetic for the CLI line and the board: the
// fraction done, the observed rate in clip-seconds per wall second, and the time left at that
// rate.

export interface ProgressCounts {
  /** Clip-seconds the run plans to simulate, and has simulated so far (partial rollouts included). */
  clipSecondsPlanned: number;
  clipSecondsDone: number;
  /** Wall seconds since the run started. */
  elapsedS: number;
  /** Pairs decided so far and in all (the fraction when nothing is to be simulated). */
  pairsDone: number;
  pairsTotal: number;
}

export interface ProgressRates {
  /** 0..1 of the planned clip-seconds (of the pairs when none are planned). */
  fraction: number;
  /** Clip-seconds simulated per wall second so far; null until something was simulated. */
  clipSecondsPerS: number | null;
  /** Wall seconds left at that rate; null while the rate is unknown. */
  etaS: number | null;
}

export function progressRates(c: ProgressCounts): ProgressRates {
  const done = Math.min(c.clipSecondsPlanned, Math.max(0, c.clipSecondsDone));
  const fraction =
    c.clipSecondsPlanned > 0 ? done / c.clipSecondsPlanned : c.pairsTotal > 0 ? c.pairsDone / c.pairsTotal : 1;
  const clipSecondsPerS = done > 0 && c.elapsedS > 0 ? done / c.elapsedS : null;
  const etaS = clipSecondsPerS !== null ? Math.max(0, (c.clipSecondsPlanned - done) / clipSecondsPerS) : null;
  return { fraction, clipSecondsPerS, etaS };
}

/** m:ss, or h:mm:ss from an hour; "--:--" when unknown. */
export function formatDuration(s: number | null): string {
  if (s === null || !Number.isFinite(s)) return '--:--';
  const t = Math.round(Math.max(0, s));
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = t % 60;
  return h > 0
    ? `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}`
    : `${m}:${String(sec).padStart(2, '0')}`;
}

export interface ProgressLineInput extends ProgressCounts {
  rolloutsDone: number;
  rolloutsPlanned: number;
}

/** "5/36 rollouts · 2/12 pairs · 52/358 clip-s · 14.5 clip-s/s · 0:21 left". */
export function progressLine(p: ProgressLineInput): string {
  const r = progressRates(p);
  return [
    `${p.rolloutsDone}/${p.rolloutsPlanned} rollouts`,
    `${p.pairsDone}/${p.pairsTotal} pairs`,
    `${p.clipSecondsDone.toFixed(0)}/${p.clipSecondsPlanned.toFixed(0)} clip-s`,
    `${r.clipSecondsPerS === null ? '--' : r.clipSecondsPerS.toFixed(1)} clip-s/s`,
    `${formatDuration(r.etaS)} left`,
  ].join(' · ');
}
