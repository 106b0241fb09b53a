import { describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/api/contract';
import { formatApiError, unstatedReasons } from '../../renderer/src/api/formatApiError';

// How the console shows an ApiError (renderer/src/api/formatApiError.ts): the location and reason of
// an input error, and a refusal's reasons — each one the message does not already say, verbatim.

describe('renderer: an ApiError as the operator reads it', () => {
  it('shows the reasons a refusal carries below its message, in order', () => {
    const e: ApiError = {
      code: 'refused',
      message: 'the robot is not standing still',
      reasons: ['joint velocity 0.2 rad/s > 0.05 rad/s', 'gyro 0.1 rad/s > 0.03 rad/s'],
    };
    expect(formatApiError(e)).toBe(
      'the robot is not standing still\n• joint velocity 0.2 rad/s > 0.05 rad/s\n• gyro 0.1 rad/s > 0.03 rad/s',
    );
  });

  it('does not repeat reasons the message already lists (a not-admitted pair names them)', () => {
    const e: ApiError = {
      code: 'refused',
      message: 'pair wave × builtin is not admitted for hardware: SR 0% < 100%; mpjpe_l 234 mm > 80 mm',
      reasons: ['SR 0% < 100%', 'mpjpe_l 234 mm > 80 mm'],
    };
    expect(unstatedReasons(e)).toEqual([]);
    expect(formatApiError(e)).toBe(e.message);
  });

  it('keeps an input error as it was: location, then reason', () => {
    const e: ApiError = {
      code: 'input_error',
      message: "walk.csv:7:3: 'x' is not a number",
      location: { file: 'walk.csv', line: 7, column: 3 },
      reason: "'x' is not a number",
    };
    expect(formatApiError(e)).toBe("walk.csv, line 7, column 3: 'x' is not a number");
  });

  it('negative control: an error without reasons is its message alone', () => {
    expect(formatApiError({ code: 'busy', message: 'another process holds the database lock' })).toBe(
      'another process holds the database lock',
    );
    expect(unstatedReasons({ code: 'refused', message: 'no', reasons: [] })).toEqual([]);
  });
});
