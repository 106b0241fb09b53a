import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { spawnInOwnSession } from './ownSession';
import { MOTIONBENCH_BIN } from './runCli';
import { REPO_ROOT } from './sharedData';

// `motionbench emulate-robot --dds` on loopback as a real child process (the G1 on the wire for the
// runner's tests): started on the given DDS domain, its control channel's URL read from its --json
// document, its stderr kept (its last line summarises the session, CRC errors included).

export interface DdsG1EmulatorProcess {
  readonly child: ChildProcess;
  /** ws:// URL of its control channel (sendEmulatorControl). */
  readonly controlUrl: string;
  /** Everything it wrote on stderr so far. */
  stderr(): string;
  /** SIGINT (it prints its summary and exits), then waits for the exit; nothing when already gone. */
  stop(): Promise<void>;
}

/** The robot's computer's priority in a session of its own: robotEmulatorProcess.ts's (-10). */
const ROBOT_COMPUTER_NICE = -10;

export interface DdsG1EmulatorOptions {
  /**
   * Run it as the robot's own computer: a session of its own at ROBOT_COMPUTER_NICE
   * (ownSession.ts), so that it does not share the test's session (the console's, in a test that
   * runs the console's trial machinery) and its CPU share. Default: in the test's session.
   */
  ownSession?: boolean;
}

export async function startDdsG1Emulator(
  domainId: number,
  args: string[] = [],
  options: DdsG1EmulatorOptions = {},
): Promise<DdsG1EmulatorProcess> {
  const argv = [
    MOTIONBENCH_BIN,
    'emulate-robot',
    '--dds',
    '--interface',
    'lo',
    '--domain',
    String(domainId),
    '--json',
    ...args,
  ];
  const spawnOptions = { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] } satisfies SpawnOptions;
  const child = options.ownSession
    ? spawnInOwnSession(process.execPath, argv, spawnOptions, {
        sessionNice: ROBOT_COMPUTER_NICE,
        threadNice: ROBOT_COMPUTER_NICE,
      })
    : spawn(process.execPath, argv, spawnOptions);
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  let out = '';
  const controlUrl = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      try {
        resolve((JSON.parse(out) as { control_url: string }).control_url);
      } catch {
        // not the whole document yet
      }
    });
    child.once('exit', (code) => reject(new Error(`emulate-robot --dds exited ${code}: ${err}`)));
  });
  return {
    child,
    controlUrl,
    stderr: () => err,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await gone;
    },
  };
}
