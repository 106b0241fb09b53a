import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { SerialPortDto } from '../../api/trialContract';

// Listing serial ports without risking the console (DESIGN §10: `SerialPort.list()` crashes
// without udev). `SerialPort.list()` on Linux spawns `udevadm info -e` and parses its output;
// where udev is not running (containers, CI, this workplace) that can fail, hang, or take the
// process down. So:
//   1. no `/run/udev` → list() is not called at all; /dev is scanned for ttyUSB*/ttyACM*
//      (what a USB-serial interlock box appears as), plus /dev/serial/by-id links if present;
//   2. otherwise list() runs in a child Node process with a timeout; whatever happens there
//      (exception, native crash, hang) we fall back to the /dev scan and report why.
// Never throws.

/** A serial port as the console lists it (the API's own shape). */
export type SerialPortEntry = SerialPortDto;

export interface SerialPortListing {
  ports: SerialPortEntry[];
  method: 'serialport' | 'dev-scan';
  /** Why SerialPort.list() was not used or did not answer. */
  note?: string;
}

export interface ListSerialPortsOptions {
  udevDir?: string;
  devDir?: string;
  timeoutMs?: number;
  /** Run SerialPort.list() (in its child process) even without /run/udev. */
  force?: boolean;
}

const CHILD_SCRIPT = `
const { SerialPort } = require(process.argv[1]);
SerialPort.list().then(
  (ports) => { process.stdout.write(JSON.stringify(ports)); },
  (err) => { process.stderr.write(String(err && err.message || err)); process.exit(3); },
);`;

export async function scanDevForSerialPorts(devDir = '/dev'): Promise<SerialPortEntry[]> {
  const out: SerialPortEntry[] = [];
  try {
    for (const name of (await readdir(devDir)).sort()) {
      if (/^tty(USB|ACM)[0-9]+$/.test(name)) out.push({ path: path.join(devDir, name) });
    }
  } catch {
    // no /dev to read: nothing found
  }
  try {
    const byId = path.join(devDir, 'serial', 'by-id');
    for (const name of (await readdir(byId)).sort()) out.push({ path: path.join(byId, name), pnpId: name });
  } catch {
    // no udev links
  }
  return out;
}

function listInChild(timeoutMs: number): Promise<SerialPortEntry[]> {
  const entry = createRequire(import.meta.url).resolve('serialport');
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', CHILD_SCRIPT, entry],
      {
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 1 << 20,
        env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      },
      (err, stdout, stderr) => {
        if (err) {
          const e = err as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null };
          const why = e.killed
            ? `no answer within ${timeoutMs} ms`
            : e.signal
              ? `crashed (${e.signal})`
              : `failed: ${String(stderr).trim().split('\n')[0] || e.message}`;
          reject(new Error(`SerialPort.list() ${why}`));
          return;
        }
        try {
          const ports = JSON.parse(stdout) as SerialPortEntry[];
          if (!Array.isArray(ports)) throw new Error('not an array');
          resolve(ports.map((p) => ({ ...p, path: String(p.path) })));
        } catch (parseErr) {
          reject(new Error(`SerialPort.list() answered something unreadable: ${(parseErr as Error).message}`));
        }
      },
    );
  });
}

export async function listSerialPorts(options: ListSerialPortsOptions = {}): Promise<SerialPortListing> {
  const udevDir = options.udevDir ?? '/run/udev';
  const devDir = options.devDir ?? '/dev';
  if (!options.force && !existsSync(udevDir)) {
    return {
      ports: await scanDevForSerialPorts(devDir),
      method: 'dev-scan',
      note: `udev is not running (${udevDir} missing): SerialPort.list() skipped, ${devDir} scanned for ttyUSB*/ttyACM*`,
    };
  }
  try {
    return { ports: await listInChild(options.timeoutMs ?? 5000), method: 'serialport' };
  } catch (err) {
    return {
      ports: await scanDevForSerialPorts(devDir),
      method: 'dev-scan',
      note: `${(err as Error).message}; ${devDir} scanned instead`,
    };
  }
}
