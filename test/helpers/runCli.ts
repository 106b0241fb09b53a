import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './sharedData';

// Runs the `motionbench` command as a user does: a child process of bin/motionbench.mjs, with
// its exit code, stdout and stderr returned instead of thrown.
const run = promisify(execFile);
export const MOTIONBENCH_BIN = path.join(REPO_ROOT, 'bin/motionbench.mjs');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function motionbench(...args: string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MOTIONBENCH_BIN, ...args], {
      cwd: REPO_ROOT,
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * `motionbench` killed (SIGKILL) after `timeoutMs`: for hostile inputs that an old reader would
 * read forever. A killed run has code null and `killed` set.
 */
export async function motionbenchWithin(
  timeoutMs: number,
  ...args: string[]
): Promise<CliResult & { killed?: boolean }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MOTIONBENCH_BIN, ...args], {
      cwd: REPO_ROOT,
      maxBuffer: 64 << 20,
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string; killed?: boolean };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr, ...(e.killed && { killed: true }) };
  }
}
