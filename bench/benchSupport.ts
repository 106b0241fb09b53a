// Benchmarks measure a candidate and its baseline in the same run, interleaved in rounds, and
// report the median of the rounds, so a busy machine slows both alike and the ratio stays honest.

export interface RateResult {
  label: string;
  /** Operations per second, median over rounds. */
  perSecond: number;
  rounds: number[];
}

/** Runs `op(n)` (which performs n operations) for about `ms` and returns operations/s. */
export function measureRate(op: (n: number) => void, batch: number, ms: number): number {
  const start = performance.now();
  let done = 0;
  let now = start;
  do {
    op(batch);
    done += batch;
    now = performance.now();
  } while (now - start < ms);
  return done / ((now - start) / 1000);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Interleaves the candidates over `rounds` rounds after one warm-up round. */
export function compareRates(
  candidates: { label: string; op: (n: number) => void; batch: number }[],
  rounds = 5,
  msPerRound = 400,
): RateResult[] {
  for (const c of candidates) measureRate(c.op, c.batch, msPerRound / 2);
  const samples = candidates.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++)
    candidates.forEach((c, k) => samples[k].push(measureRate(c.op, c.batch, msPerRound)));
  return candidates.map((c, k) => ({ label: c.label, perSecond: median(samples[k]), rounds: samples[k] }));
}

export const fmtRate = (v: number): string =>
  v >= 1e6 ? `${(v / 1e6).toFixed(2)} M/s` : v >= 1e3 ? `${(v / 1e3).toFixed(1)} k/s` : `${v.toFixed(1)} /s`;
