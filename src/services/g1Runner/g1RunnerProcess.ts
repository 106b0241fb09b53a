import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { g1RunnerArgs, type G1DdsSpec, type G1RunnerEstopSocket } from '../../domain/g1Runner/g1DdsConnection';

// `motionbench g1-runner` as a child process of the console services ("G1 over DDS" in the
// Connections panel): started on a free loopback port, its ws:// URL read from its --json line,
// its stderr forwarded line by line. It runs in a session of its own (spawn's `detached`) so that
// it can raise its session's scheduling weight above the console's (docs/G1_RUNNER.md "Threads"),
// and so that a signal to the console's process group does not reach it unannounced: the
// services stop it with SIGTERM (the runner damps, then exits), and SIGKILL only if it has not
// exited STOP_GRACE_MS later. A services process that exits sends SIGTERM to every runner it started.

const BIN = new URL('../../../bin/motionbench.mjs', import.meta.url);
/** How long the runner may take to open DDS and listen, ms. */
export const RUNNER_START_TIMEOUT_MS = 30_000;
/** How long a stopping runner may take to damp and exit before SIGKILL, ms. */
export const STOP_GRACE_MS = 3_000;
/** The stdout the services read before the URL line (the --json document is far smaller). */
const MAX_STDOUT_CHARS = 64 * 1024;
/** stderr kept for an error message. */
const STDERR_TAIL_CHARS = 4096;

export interface G1RunnerProcess {
  readonly url: string;
  readonly pid: number;
  /** Resolves with the exit code (null when killed by a signal) once the runner has exited. */
  readonly exited: Promise<number | null>;
  /** SIGTERM (the runner damps and exits), SIGKILL after STOP_GRACE_MS; resolves once it has exited. */
  stop(): Promise<void>;
}

export interface StartG1RunnerProcessOptions extends G1DdsSpec, Partial<G1RunnerEstopSocket> {
  /** One line of the runner's stderr (default: the services' stderr, prefixed). */
  log?: (line: string) => void;
  startTimeoutMs?: number;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGTERM');
  });
}

export async function startG1RunnerProcess(options: StartG1RunnerProcessOptions): Promise<G1RunnerProcess> {
  const args = g1RunnerArgs(options);
  const log = options.log ?? ((line: string) => process.stderr.write(`g1-runner[${options.interfaceName}]: ${line}\n`));
  const child = spawn(process.execPath, [fileURLToPath(BIN), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
  });
  installExitHook();
  running.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  child.on('error', (err) => log(`process: ${err.message}`));
  let tail = '';
  let partial = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    tail = (tail + d).slice(-STDERR_TAIL_CHARS);
    const lines = (partial + d).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) log(line);
  });

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  };

  const timeoutMs = options.startTimeoutMs ?? RUNNER_START_TIMEOUT_MS;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(
        () => reject(new Error(`the runner did not listen within ${timeoutMs} ms; its stderr: ${tail.trim()}`)),
        timeoutMs,
      );
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (d: string) => {
        if (out.length > MAX_STDOUT_CHARS) return;
        out += d;
        try {
          // The --json document (indented over several lines): parsed once it is whole.
          const doc = JSON.parse(out) as { url?: unknown };
          if (typeof doc.url === 'string' && /^ws:\/\/127\.0\.0\.1:\d+/.test(doc.url)) {
            clearTimeout(timer);
            resolve(doc.url);
          }
        } catch {
          // not the whole line yet
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        const why = tail.trim().split('\n').at(-1) ?? '';
        reject(new Error(`the runner exited (${code ?? 'signal'}) before listening${why ? `: ${why}` : ''}`));
      });
    });
    return { url, pid: child.pid!, exited, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
