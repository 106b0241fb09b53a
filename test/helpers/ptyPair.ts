import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startPtyPair, type PtyPair } from '../../src/services/interlock/ptyPair';

// A real pseudo-terminal pair for the interlock tests:
//   socat -d -d pty,raw,echo=0,link=<tmp>/a pty,raw,echo=0,link=<tmp>/b
// waits for both links; `a` is the console's end, `b` the box's (the emulator's).
// dispose() stops socat (this pid only) and removes the temporary folder.

export interface TestPtyPair extends PtyPair {
  readonly dir: string;
  dispose(): Promise<void>;
}

export async function makePtyPair(): Promise<TestPtyPair> {
  const dir = await mkdtemp(path.join(tmpdir(), 'mb-pty-'));
  let pair: PtyPair;
  try {
    pair = await startPtyPair({ consoleLink: path.join(dir, 'a'), deviceLink: path.join(dir, 'b') });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    ...pair,
    dir,
    async dispose() {
      await pair.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until `cond()` holds, polling every 2 ms; throws after `timeoutMs`. */
export async function waitFor(cond: () => boolean, timeoutMs = 2000, what = 'condition'): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** p-th percentile, numpy 'linear'. */
export function pct(values: readonly number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  const i = (s.length - 1) * (p / 100);
  const lo = Math.floor(i);
  return lo + 1 < s.length ? s[lo] + (s[lo + 1] - s[lo]) * (i - lo) : s[lo];
}

export const fmt = (values: readonly number[]): string =>
  `n=${values.length} min ${Math.min(...values).toFixed(2)} p50 ${pct(values, 50).toFixed(2)} p90 ${pct(values, 90).toFixed(2)} p99 ${pct(values, 99).toFixed(2)} max ${Math.max(...values).toFixed(2)} ms`;
