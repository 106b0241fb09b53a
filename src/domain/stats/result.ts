// Shared result and error types of src/domain/stats, and input validation.
//
// Two kinds of "no number" are kept apart:
//   • A caller bug — NaN or ±Infinity in the data, a percentile outside [0, 100], a confidence
//     level outside (0, 1), B < 1, x and y of different lengths, a ragged rating matrix — throws
//     a StatsError with a `code`. NaN is never passed through silently: a reading that could not
//     be computed must arrive here as "left out", not as NaN.
//   • A statistically undefined result on valid data — no values, one cluster, a constant
//     ranking for Spearman, zero variance for an ICC — is returned as `Unavailable` with a
//     `code` and a human-readable `reason`, so a results table can show "unavailable (reason)".
// The plain descriptive building blocks (mean, median, sampleStd, percentile) return a number and
// throw StatsError('empty' | 'too-few') instead, because an empty input there is a caller bug.

export type StatsErrorCode = 'non-finite' | 'invalid-argument' | 'length-mismatch' | 'empty' | 'too-few' | 'ragged';

/** Default confidence level of every interval in src/domain/stats. */
export const DEFAULT_CONFIDENCE_LEVEL = 0.95;

export class StatsError extends Error {
  override readonly name = 'StatsError';
  constructor(
    readonly code: StatsErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export type UnavailableCode = 'empty' | 'too-few' | 'zero-variance' | 'degenerate';

export interface Unavailable {
  readonly available: false;
  readonly code: UnavailableCode;
  readonly reason: string;
}

export function unavailable(code: UnavailableCode, reason: string): Unavailable {
  return { available: false, code, reason };
}

/** Throws StatsError('non-finite') naming the first NaN/±Infinity entry of `values`. */
export function assertAllFinite(values: ArrayLike<number>, what: string): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new StatsError(
        'non-finite',
        `${what}[${i}] is ${String(v)}: statistics take finite numbers only (leave unavailable readings out instead)`,
      );
    }
  }
}

/** A confidence level strictly between 0 and 1. */
export function assertLevel(level: number): void {
  if (!(typeof level === 'number' && level > 0 && level < 1)) {
    throw new StatsError('invalid-argument', `confidence level must be in (0, 1), got ${String(level)}`);
  }
}

/** A positive integer no larger than `max`. */
export function assertPositiveInteger(value: number, what: string, max = Number.MAX_SAFE_INTEGER): void {
  if (!(Number.isInteger(value) && value >= 1 && value <= max)) {
    throw new StatsError('invalid-argument', `${what} must be an integer in [1, ${max}], got ${String(value)}`);
  }
}

export function assertSameLength(x: ArrayLike<number>, y: ArrayLike<number>, what: string): void {
  if (x.length !== y.length) {
    throw new StatsError('length-mismatch', `${what}: x has ${x.length} values, y has ${y.length}`);
  }
}
