import { Buffer } from 'node:buffer';
import type { ChildProcess } from 'node:child_process';
import WebSocket from 'ws';
import {
  EMULATOR_CONTROL_SCHEMA_NAME,
  EMULATOR_CONTROL_STATUS_ID,
  EMULATOR_CONTROL_TOPIC,
  type EmulatorControlAction,
} from '../../src/domain/robotEmulator/emulatorControl';
import { FOXGLOVE_SUBPROTOCOL, FoxgloveClient } from '../../src/services/robotLink/foxgloveWs';
import { spawnInOwnSession } from './ownSession';
import { MOTIONBENCH_BIN } from './runCli';
import { REPO_ROOT } from './sharedData';

// `motionbench emulate-robot` as a real child process for the trial tests: started on a free
// port, its ws:// URL read from its --json line, its stderr kept, and a small Foxglove client on
// its `/emulator/control` channel to play the human (human_reset) or inject faults.

export interface EmulatorProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the emulator wrote on stderr so far. */
  stderr(): string;
  /**
   * Sends a control action (the human beside the robot, or a fault) and resolves with the
   * emulator's answer, once it has applied (or refused) it: a reset the console checks right
   * after is already in the robot's state.
   */
  control(action: EmulatorControlAction): Promise<ControlAnswer>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface ControlAnswer {
  ok: boolean;
  message: string;
}

interface Waiter {
  answer(a: ControlAnswer): void;
  closed(): void;
}

/** How long an answer to a control action may take on a loaded machine. */
const CONTROL_ANSWER_TIMEOUT_MS = 15_000;

/** The robot's computer's priority here: the interlock keeper's (-10). */
const ROBOT_COMPUTER_NICE = -10;

export async function startEmulatorProcess(args: string[] = []): Promise<EmulatorProcess> {
  // The robot's own computer: a session of its own at the keeper's priority (ownSession.ts).
  const child = spawnInOwnSession(
    process.execPath,
    [MOTIONBENCH_BIN, 'emulate-robot', '--port', '0', '--json', ...args],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    { sessionNice: ROBOT_COMPUTER_NICE, threadNice: ROBOT_COMPUTER_NICE },
  );
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(
      () => reject(new Error(`emulate-robot did not print its URL within 30 s; stderr:\n${err}`)),
      30_000,
    );
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      try {
        const doc = JSON.parse(out) as { url?: string };
        if (doc.url) {
          clearTimeout(t);
          resolve(doc.url);
        }
      } catch {
        // not the whole document yet
      }
    });
    void exited.then((code) => reject(new Error(`emulate-robot exited (${code}) before listening; stderr:\n${err}`)));
  });

  // One connection for the test's control actions; the emulator answers each on it, in order.
  let controlClient: {
    client: InstanceType<typeof FoxgloveClient>;
    channel: number;
    ws: WebSocket;
    waiting: Waiter[];
  } | null = null;
  const connectControl = async () => {
    const ws = new WebSocket(url, [FOXGLOVE_SUBPROTOCOL]);
    const client = new FoxgloveClient({ ws: ws as never });
    client.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      client.on('serverInfo', () => resolve());
      ws.once('error', reject);
    });
    const channel = client.advertise({
      topic: EMULATOR_CONTROL_TOPIC,
      encoding: 'json',
      schemaName: EMULATOR_CONTROL_SCHEMA_NAME,
    });
    const waiting: Waiter[] = [];
    client.on('status', (s) => {
      if (s.id !== EMULATOR_CONTROL_STATUS_ID.ok && s.id !== EMULATOR_CONTROL_STATUS_ID.refused) return;
      waiting.shift()?.answer({ ok: s.id === EMULATOR_CONTROL_STATUS_ID.ok, message: s.message });
    });
    // kill_link closes this connection too, before its answer can be sent.
    ws.once('close', () => {
      for (const w of waiting.splice(0)) w.closed();
    });
    return { client, channel, ws, waiting };
  };

  return {
    url,
    child,
    exited,
    stderr: () => err,
    async control(action) {
      if (!controlClient || controlClient.ws.readyState !== WebSocket.OPEN) controlClient = await connectControl();
      const c = controlClient;
      return await new Promise<ControlAnswer>((resolve, reject) => {
        const w: Waiter = {
          answer: (a) => {
            clearTimeout(timer);
            resolve(a);
          },
          closed: () => {
            clearTimeout(timer);
            reject(new Error(`emulate-robot: the control connection closed before ${action.action} was answered`));
          },
        };
        const timer = setTimeout(() => {
          const i = c.waiting.indexOf(w);
          if (i >= 0) c.waiting.splice(i, 1);
          reject(new Error(`emulate-robot: no answer to ${action.action} within ${CONTROL_ANSWER_TIMEOUT_MS} ms`));
        }, CONTROL_ANSWER_TIMEOUT_MS);
        c.waiting.push(w);
        c.client.sendMessage(c.channel, Buffer.from(JSON.stringify(action), 'utf8'));
      });
    },
    async stop(signal = 'SIGTERM') {
      controlClient?.ws.terminate();
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
