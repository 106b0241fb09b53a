import { spawn } from 'node:child_process';
import { raiseThreadPriority, setAutogroupNice } from '../os/threadPriority';
import { lstat, readlink } from 'node:fs/promises';

// A pseudo-terminal pair made by socat: two serial-like devices whose bytes cross over, so the
// console can open one end with serialport exactly as it opens a USB-serial interlock box and
// the emulator opens the other. Used by the tests and by `motionbench emulate-interlock --make-pty`.
//
//   socat -d -d pty,raw,echo=0,link=<consoleLink> pty,raw,echo=0,link=<deviceLink>
//
// Ready when socat reports its transfer loop and both links exist. Killing socat (or closing
// it) makes both ends disappear: whoever has them open sees the port close.

export interface PtyPair {
  /** The end the console opens (a symlink to /dev/pts/N). */
  readonly consolePath: string;
  /** The end the emulator (the "box") opens. */
  readonly devicePath: string;
  readonly pid: number;
  /** Resolves when socat exits, however it exits. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** socat's diagnostic output so far (bounded). */
  stderr(): string;
  /** Sends a signal to socat (this pid only). */
  kill(signal?: NodeJS.Signals): void;
  /** Stops socat (SIGTERM, then SIGKILL after 2 s) and waits for it. */
  close(): Promise<void>;
}

export interface PtyPairOptions {
  consoleLink: string;
  deviceLink: string;
  socat?: string;
  timeoutMs?: number;
}

const exists = async (p: string): Promise<boolean> => {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
};

export async function startPtyPair(options: PtyPairOptions): Promise<PtyPair> {
  const { consoleLink, deviceLink } = options;
  const timeoutMs = options.timeoutMs ?? 5000;
  const child = spawn(
    options.socat ?? 'socat',
    ['-d', '-d', `pty,raw,echo=0,link=${consoleLink}`, `pty,raw,echo=0,link=${deviceLink}`],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      // A session of its own, whose scheduling weight can be raised (below).
      detached: true,
    },
  );
  // The relay stands for the serial wire, which never waits for a CPU: ask for it, and its
  // session, to run before ordinary work (at a nice alone it waited up to 162 ms on a loaded
  // machine). Not SCHED_FIFO: a stand-in that may spin once its peer is gone must not be able to
  // take a core from everything else. spawn returns after socat's exec, so it has its session now.
  if (child.pid !== undefined) {
    raiseThreadPriority(-10, child.pid);
    setAutogroupNice(-10, child.pid);
  }
  let err = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (s: string) => {
    err = (err + s).slice(-8192);
  });
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));

  const pair: PtyPair = {
    consolePath: consoleLink,
    devicePath: deviceLink,
    pid: child.pid ?? -1,
    exited,
    stderr: () => err,
    kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (exitInfo === null && child.pid !== undefined) child.kill(signal);
    },
    async close() {
      if (exitInfo !== null || child.pid === undefined) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(t);
    },
  };

  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failed = await Promise.race([spawnError, new Promise<null>((r) => setTimeout(() => r(null), 5))]);
    if (failed) {
      const e = failed as NodeJS.ErrnoException;
      throw new Error(
        e.code === 'ENOENT' ? `socat not found (install it: apt-get install -y socat)` : `socat: ${e.message}`,
      );
    }
    if (exitInfo !== null)
      throw new Error(
        `socat exited (${JSON.stringify(exitInfo)}) before the pty pair was ready: ${err.trim().split('\n').slice(-3).join(' | ')}`,
      );
    if (err.includes('starting data transfer loop') && (await exists(consoleLink)) && (await exists(deviceLink))) {
      // Both links resolve to /dev/pts/N devices.
      await readlink(consoleLink);
      await readlink(deviceLink);
      return pair;
    }
    if (Date.now() > deadline) {
      await pair.close();
      throw new Error(`socat did not create ${consoleLink} and ${deviceLink} within ${timeoutMs} ms: ${err.trim()}`);
    }
  }
}
