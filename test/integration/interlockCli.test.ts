import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { reportError, type Command } from '../../src/cli/cliSupport';
import { emulateInterlockCommand, interlockMonitorCommand } from '../../src/cli/commands/interlockCommand';
import type { InterlockTrip } from '../../src/domain/interlock';
import { startInterlockEmulator } from '../../src/services/interlock/interlockEmulator';
import { listSerialPorts } from '../../src/services/interlock/listSerialPorts';
import { openInterlock, type InterlockLink } from '../../src/services/interlock/serialInterlock';
import { makePtyPair, waitFor, type TestPtyPair } from '../helpers/ptyPair';
import { MOTIONBENCH_BIN, motionbench } from '../helpers/runCli';
import { REPO_ROOT } from '../helpers/sharedData';

// The interlock commands as an operator runs them, and the emulator as a separate process: the
// console (this process) and the box (a `motionbench emulate-interlock` child) talk over a real
// socat pty pair; killing the box's process is "interlock lost".

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function pair(): Promise<TestPtyPair> {
  const p = await makePtyPair();
  cleanups.push(() => p.dispose());
  return p;
}

function startEmulatorProcess(args: string[]): {
  child: ChildProcessWithoutNullStreams;
  ready: Promise<Record<string, unknown>>;
  stderr: () => string;
} {
  const child = spawn(process.execPath, [MOTIONBENCH_BIN, 'emulate-interlock', ...args, '--json'], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      try {
        resolve(JSON.parse(out));
      } catch {
        // not complete yet
      }
    });
    child.once('exit', (code) => reject(new Error(`emulate-interlock exited ${code}: ${err}`)));
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
  });
  return { child, ready, stderr: () => err };
}

describe('motionbench emulate-interlock (a separate process) against the console', () => {
  it('e-stop via its stdin trips the console; killing the box process trips it for silence', async () => {
    const p = await pair();
    const emu = startEmulatorProcess(['--pty', p.devicePath]);
    const doc = await emu.ready;
    expect(doc).toMatchObject({ device: p.devicePath, console_path: null, watchdog_ms: 100, trip_to: 'safe' });
    const trips: { trip: InterlockTrip; at: number }[] = [];
    const link: InterlockLink = await openInterlock({
      path: p.consolePath,
      onTrip: (trip) => trips.push({ trip, at: performance.now() }),
      log: () => {},
    });
    cleanups.push(() => link.close());
    await waitFor(() => link.state === 'safe', 3000, 'SAFE from the emulator process');
    expect(await link.arm()).toMatchObject({ ok: true });

    let t0 = performance.now();
    emu.child.stdin.write('estop\n');
    await waitFor(() => trips.some((t) => t.trip.reason === 'estop_event'), 1000, 'the e-stop trip');
    const estopMs = trips.find((t) => t.trip.reason === 'estop_event')!.at - t0;
    emu.child.stdin.write('reset\n');
    await waitFor(() => link.state === 'safe', 1000, 'SAFE after reset');
    expect(link.isArmedAndFresh()).toBe(false);
    await waitFor(() => emu.stderr().includes('box SAFE'), 1000, 'the emulator to report SAFE');
    expect(await link.arm()).toMatchObject({ ok: true });

    const from = trips.length;
    t0 = performance.now();
    emu.child.kill('SIGKILL');
    await waitFor(() => trips.length > from, 1000, 'the trip after the box process died');
    const { trip, at } = trips[from];
    expect(trip).toMatchObject({ reason: 'silence', wasArmed: true, toState: 'lost' });
    console.log(
      `box process (CLI): stdin "estop" → onTrip ${estopMs.toFixed(2)} ms (incl. the process hop); SIGKILL → onTrip ${(at - t0).toFixed(2)} ms, ${trip.sinceLastStatusMs!.toFixed(2)} ms after the last status`,
    );
    expect(trip.sinceLastStatusMs!).toBeGreaterThan(100);
    expect(at - t0).toBeLessThanOrEqual(160);
  });

  it('--make-pty creates the pair itself; interlock monitor --arm --json runs against it and exits 0', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'mb-ilk-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const link = path.join(dir, 'interlock');
    const emu = startEmulatorProcess(['--make-pty', link]);
    expect(await emu.ready).toMatchObject({ device: `${link}.box`, console_path: link });
    const res = await motionbench('interlock', 'monitor', '--device', link, '--duration', '0.6', '--arm', '--json');
    expect(res.stderr).toContain('armed');
    expect(res.code).toBe(0);
    const summary = JSON.parse(res.stdout);
    expect(summary).toMatchObject({ device: link, stopped: 'duration', arm: { ok: true }, trips: [], state: 'safe' });
    expect(summary.freshness.rttSamples).toBeGreaterThan(20);
    emu.child.stdin.write('quit\n');
    const code = await new Promise((r) => emu.child.once('exit', r));
    expect(code).toBe(0);
  });

  it('interlock monitor exits 1 with the reason when the interlock trips', async () => {
    const p = await pair();
    const emu = await startInterlockEmulator({ path: p.devicePath });
    cleanups.push(() => emu.close());
    setTimeout(() => emu.setSilent(true), 700);
    const res = await motionbench('interlock', 'monitor', '--device', p.consolePath, '--duration', '1.2');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/TRIP silence/);
    expect(res.stderr).toMatch(/motionbench: the interlock tripped \(silence\)/);
  });

  it('usage errors exit 2 with a one-line reason (in process, as main() runs a command)', async () => {
    const run = async (cmd: Command, argv: string[]) => {
      let stderr = '';
      const io = { stdout: () => {}, stderr: (x: string) => (stderr += x) };
      let code: number;
      try {
        code = await cmd.run(argv, io);
      } catch (err) {
        code = reportError(io, err);
      }
      return { code, stderr };
    };
    const a = await run(emulateInterlockCommand, []);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/give exactly one of --pty and --make-pty/);
    expect(await run(emulateInterlockCommand, ['--pty', 'x', '--trip-to', 'later'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--trip-to must be safe or estop/),
    });
    const b = await run(interlockMonitorCommand, ['--duration', '1']);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/--device is required/);
    const c = await run(interlockMonitorCommand, ['--device', '/nonexistent/tty', '--duration', '1']);
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/cannot open \/nonexistent\/tty/);
  });
});

describe('serial port listing without udev', () => {
  it('does not call SerialPort.list() when /run/udev is missing; scans /dev instead', async () => {
    const dev = await mkdtemp(path.join(tmpdir(), 'mb-dev-'));
    cleanups.push(() => rm(dev, { recursive: true, force: true }));
    for (const n of ['ttyUSB0', 'ttyACM3', 'ttyS0', 'null', 'ttyUSBx']) await writeFile(path.join(dev, n), '');
    await mkdir(path.join(dev, 'serial', 'by-id'), { recursive: true });
    await writeFile(path.join(dev, 'serial', 'by-id', 'usb-Interlock_Box_123-if00'), '');
    const listing = await listSerialPorts({ udevDir: path.join(dev, 'no-udev-here'), devDir: dev });
    expect(listing.method).toBe('dev-scan');
    expect(listing.note).toMatch(/udev is not running/);
    expect(listing.ports.map((x) => path.relative(dev, x.path))).toEqual([
      'ttyACM3',
      'ttyUSB0',
      path.join('serial', 'by-id', 'usb-Interlock_Box_123-if00'),
    ]);
  });

  it('runs SerialPort.list() in a child process when asked, and never throws', async () => {
    const listing = await listSerialPorts({ force: true, timeoutMs: 10_000 });
    expect(['serialport', 'dev-scan']).toContain(listing.method);
    expect(Array.isArray(listing.ports)).toBe(true);
    const cli = await motionbench('interlock', 'list', '--json');
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toHaveProperty('method');
    console.log(`interlock list --json: ${cli.stdout.replace(/\s+/g, ' ').slice(0, 200)}`);
  });
});
