import { describe, expect, it } from 'vitest';
import { makeEmulateRobotCommand } from '../../src/cli/commands/emulateRobotCommand';
import { UsageError } from '../../src/cli/cliSupport';

// Options of `emulate-robot --dds`, refused before anything is loaded or opened.
const cmd = makeEmulateRobotCommand({ untilStopped: () => Promise.resolve('test') });
const io = { stdout: () => {}, stderr: () => {} };
const run = (argv: string[]) => cmd.run(argv, io);

describe('emulate-robot --dds options', () => {
  it('refuses --dds without an interface, a domain outside 0..232, and g1-bridge-only options', async () => {
    await expect(run(['--dds'])).rejects.toThrow(/--dds needs --interface <name>/);
    await expect(run(['--dds', '--interface', ' '])).rejects.toThrow(UsageError);
    await expect(run(['--dds', '--interface', 'lo', '--domain', '233'])).rejects.toThrow(
      /--domain must be a DDS domain id in 0\.\.232, got "233"/,
    );
    await expect(run(['--dds', '--interface', 'lo', '--mode-machine', '256'])).rejects.toThrow(/--mode-machine/);
    await expect(run(['--dds', '--interface', 'lo', '--mocap'])).rejects.toThrow(/--mocap is not available with --dds/);
    await expect(run(['--dds', '--interface', 'lo', '--interlock', '/dev/null'])).rejects.toThrow(/--interlock/);
    await expect(run(['--dds', '--interface', 'lo', '--fault', 'drop@1s'])).rejects.toThrow(
      /--fault: .*needs a duration/,
    );
  });

  it('refuses the DDS options without --dds (the g1-bridge/1 emulator is unchanged)', async () => {
    await expect(run(['--port', '0', '--interface', 'lo'])).rejects.toThrow(/--interface needs --dds/);
    await expect(run(['--port', '0', '--gantry'])).rejects.toThrow(/--gantry needs --dds/);
    await expect(run(['--json'])).rejects.toThrow(/--port is required/);
  });
});
