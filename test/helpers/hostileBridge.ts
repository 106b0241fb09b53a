import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { REPO_ROOT } from './sharedData';
import { nodeArgsFor } from './tsChild';

// A robot-like g1-bridge/1 server in its own process — well-behaved until a test says otherwise (bench/robotLinkPublisher.ts: 500 Hz
// lowstate, wbc_status heartbeat, acks) that a test can turn hostile or broken: malformed
// protocol messages sent verbatim, acks delayed or never sent, the state stream frozen, the
// whole process hung. Every command it receives is recorded, so "no start reached the robot"
// and "stop and damp arrived" are facts a test can check.

export interface ReceivedCommand {
  command: string | null;
  seq: number | null;
  reason: string | null;
  outcome: string | null;
  /** performance.timeOrigin + performance.now() of this test process when the line was read, ms. */
  atUnixMs: number;
}

export interface HostileBridge {
  readonly url: string;
  readonly child: ChildProcessWithoutNullStreams;
  /** Every command received, in order. */
  readonly commands: ReceivedCommand[];
  /** Sends `text` verbatim as a WebSocket text frame to every connected client. */
  raw(text: string): void;
  /** Stops the lowstate stream (the heartbeat and acks go on) / starts it again. */
  freeze(): void;
  resume(): void;
  /** Answers `command` only after `ms` (Infinity: never). */
  delayAck(command: string, ms: number): void;
  /** Blocks the server's event loop for `ms`: nothing is sent or read meanwhile. */
  stall(ms: number): void;
  /** Leaves `n` lowstate ticks out once (a gap in the stream). */
  skip(n: number): void;
  /** Names of the commands received so far. */
  names(): (string | null)[];
  stop(): Promise<void>;
}

export async function startHostileBridge(rateHz = 500): Promise<HostileBridge> {
  const child = spawn(
    process.execPath,
    [...nodeArgsFor(path.join(REPO_ROOT, 'bench/robotLinkPublisher.ts')), '--rate', String(rateHz)],
    { cwd: REPO_ROOT },
  );
  const commands: ReceivedCommand[] = [];
  let stderr = '';
  let url: string | null = null;
  child.stderr.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`the hostile bridge did not listen within 20 s: ${stderr}`)), 20_000);
    readline.createInterface({ input: child.stdout }).on('line', (l) => {
      const doc = JSON.parse(l) as Record<string, unknown>;
      if (url === null && typeof doc.url === 'string') {
        url = doc.url;
        clearTimeout(t);
        resolve();
        return;
      }
      commands.push({
        command: (doc.command as string | null) ?? null,
        seq: (doc.seq as number | null) ?? null,
        reason: (doc.reason as string | null) ?? null,
        outcome: (doc.outcome as string | null) ?? null,
        atUnixMs: performance.timeOrigin + performance.now(),
      });
    });
    void exited.then(() => reject(new Error(`the hostile bridge exited before listening: ${stderr}`)));
  });
  const send = (line: string): void => {
    child.stdin.write(`${line}\n`);
  };
  return {
    url: url as unknown as string,
    child,
    commands,
    raw: (text) => send(`raw ${text.replace(/\n/g, ' ')}`),
    freeze: () => send('freeze'),
    resume: () => send('resume'),
    delayAck: (command, ms) => send(ms === Infinity ? `no-ack ${command}` : `ack-delay ${command} ${Math.round(ms)}`),
    stall: (ms) => send(`stall ${Math.round(ms)}`),
    skip: (n) => send(`skip ${Math.round(n)}`),
    names: () => commands.map((c) => c.command),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
