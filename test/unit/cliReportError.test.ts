import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/problems';
import { reportError, UsageError, type CliIo } from '../../src/cli/cliSupport';
import { toApiError } from '../../src/services/console/apiErrorMap';
import { TraceStoreError } from '../../src/services/trace/errors';
import { TrialRefusedError } from '../../src/services/trial/matchedTrialRunner';

// The CLI prints an error with the console API's message for it (src/services/console/apiErrorMap.ts),
// and the reasons that message does not already name below it.

function report(err: unknown): { code: number; stderr: string } {
  let stderr = '';
  const io: CliIo = { stdout: () => {}, stderr: (s) => void (stderr += s) };
  return { code: reportError(io, err), stderr };
}

describe('CLI error printing: the API’s messages', () => {
  it('prints the store’s own message, not a file-read guess', () => {
    const err = new TraceStoreError(
      'busy',
      '/c/campaign.sqlite',
      'open /c/campaign.sqlite: another process holds the lock',
    );
    expect(report(err)).toEqual({ code: 1, stderr: `motionbench: ${toApiError(err).message}\n` });
    expect(report(err).stderr).not.toMatch(/cannot read/);
  });

  it('prints a refusal’s reasons the message does not name, one per line', () => {
    const r = report(new TrialRefusedError('the robot is not standing still', ['joint velocity 0.2 rad/s > 0.05']));
    expect(r).toEqual({
      code: 1,
      stderr: 'motionbench: the robot is not standing still\n  - joint velocity 0.2 rad/s > 0.05\n',
    });
    const named = report(new TrialRefusedError('pair p is not admitted: SR 0 < 1', ['SR 0 < 1']));
    expect(named.stderr).toBe('motionbench: pair p is not admitted: SR 0 < 1\n');
  });

  it('prints a missing file as the API names it, and an input error with its place', () => {
    let enoent: unknown;
    try {
      fs.openSync('/nonexistent-mb/clip.csv', 'r');
    } catch (err) {
      enoent = err;
    }
    expect(report(enoent).stderr).toBe('motionbench: /nonexistent-mb/clip.csv: no such file\n');
    const input = new InputError({ file: 'a.csv', line: 2, column: 4 }, 'not a number');
    expect(report(input)).toEqual({ code: 1, stderr: 'motionbench: a.csv:2:4: not a number\n' });
  });

  it('negative control: a usage error is still exit 2 with its own text', () => {
    expect(report(new UsageError('--fps must be a frame rate'))).toEqual({
      code: 2,
      stderr: 'motionbench: --fps must be a frame rate\n',
    });
  });
});
