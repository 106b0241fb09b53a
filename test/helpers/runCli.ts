import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { main } from '../../src/cli/main';
import { REPO_ROOT } from './sharedData';

// Runs the `motionbench` command with its exit code, stdout and stderr returned instead of thrown:
// `motionbench` as a user does (a child process of bin/motionbench.mjs), or
// `motionbenchInProcess` through the same entry the bin calls, in this process (no node start, no
// tsx compile: most CLI cases need only the command's own work).
const run = promisify(execFile);
export const MOTIONBENCH_BIN = path.join(REPO_ROOT, 'bin/motionbench.mjs');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `motionbench` as a child process of bin/motionbench.mjs, stdout and stderr piped, for tests that act while it runs. */
export function spawnMotionbench(args: string[]): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(process.execPath, [MOTIONBENCH_BIN, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `motionbench trial` on a pair with a robot and an interlock, as an operator names them. */
export function trialCliArgs(t: { campaign: string; robot: string; interlock: string; pair: string }): string[] {
  return ['trial', '--campaign', t.campaign, '--robot', t.robot, '--interlock', t.interlock, '--pair', t.pair];
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

/** Resources that keep a Node process alive, by kind ("Timeout", "TCPServerWrap", …), counted. */
function aliveResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

function grownSince(before: Map<string, number>): string[] {
  const now = aliveResources();
  return [...now].filter(([k, n]) => n > (before.get(k) ?? 0)).map(([k, n]) => `${k} ×${n - (before.get(k) ?? 0)}`);
}

let running = 0;
let aliveBefore = new Map<string, number>();

/**
 * `motionbench <args>` in this process, through src/cli/main.ts as the bin runs it, with the same
 * working folder as `motionbench` (REPO_ROOT). Its stdin is empty, and no process signal reaches it
 * (they stay the test runner's; it hears only its own emitter's). When the last of the calls running at once returns,
 * nothing it started may still hold the process alive (a server, a worker, a timer): a command that
 * leaked one would keep the real `motionbench` from exiting, so the call fails with their kinds.
 */
export function motionbenchInProcess(...args: string[]): Promise<CliResult> {
  return runInProcess(args, new EventEmitter());
}

/**
 * `motionbenchInProcess`, sent SIGTERM (on its own signal emitter) after `timeoutMs`: for a command
 * that must refuse before it starts serving; `killed` says whether it had to be stopped.
 */
export async function motionbenchInProcessWithin(
  timeoutMs: number,
  ...args: string[]
): Promise<CliResult & { killed: boolean }> {
  const signals = new EventEmitter();
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    signals.emit('SIGTERM');
  }, timeoutMs);
  try {
    const r = await runInProcess(args, signals);
    return { ...r, killed };
  } finally {
    clearTimeout(timer);
  }
}

async function runInProcess(args: string[], signals: EventEmitter): Promise<CliResult> {
  if (process.cwd() !== REPO_ROOT) throw new Error(`motionbenchInProcess runs in ${REPO_ROOT}, not ${process.cwd()}`);
  if (running++ === 0) aliveBefore = aliveResources();
  let stdout = '';
  let stderr = '';
  let code: number;
  try {
    code = await main(args, {
      stdout: (s) => void (stdout += s),
      stderr: (s) => void (stderr += s),
      signals,
      stdin: Readable.from([]),
      exit: (c) => {
        throw new Error(`motionbench ${args.join(' ')} asked to quit at once (exit ${c})`);
      },
    });
  } finally {
    running--;
  }
  if (running === 0) {
    let leaked = grownSince(aliveBefore);
    // A handle closed in the last turn (a worker's exit, a socket's close) is gone a moment later.
    for (let k = 0; k < 20 && leaked.length > 0; k++) {
      await new Promise((r) => setTimeout(r, 50));
      leaked = grownSince(aliveBefore);
    }
    if (leaked.length > 0)
      throw new Error(`motionbench ${args.join(' ')} returned ${code} but left alive: ${leaked.join(', ')}`);
  }
  return { code, stdout, stderr };
}
