import { afterAll, beforeAll } from 'vitest';
import { makePtyPair, type TestPtyPair } from '../helpers/ptyPair';
import { startEmulatorProcess, type EmulatorProcess } from '../helpers/robotEmulatorProcess';

// The robot of the end-to-end files that drive one: the robot emulator (`motionbench emulate-robot`,
// its own process) holding the interlock box's end of a socat PTY pair, the console's end left for
// the Interlock panel.

export interface EmulatedRobot {
  /** The PTY pair: the box's end is the emulator's, `consolePath` the console's. */
  readonly pty: TestPtyPair;
  readonly emu: EmulatorProcess;
}

/**
 * Registers the hooks that start the pair and the emulator (`--interlock <box end> …args`) before
 * the current suite's tests and stop them after; the returned object is valid once they started.
 */
export function withEmulatedRobot(args: string[]): EmulatedRobot {
  let pty: TestPtyPair | undefined;
  let emu: EmulatorProcess | undefined;
  beforeAll(async () => {
    pty = await makePtyPair();
    emu = await startEmulatorProcess(['--interlock', pty.devicePath, ...args]);
  }, 120_000);
  afterAll(async () => {
    await emu?.stop();
    await pty?.dispose();
  });
  const started = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('the emulated robot has not started');
    return v;
  };
  return {
    get pty() {
      return started(pty);
    },
    get emu() {
      return started(emu);
    },
  };
}
