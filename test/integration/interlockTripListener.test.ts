// The runner's e-stop socket (interlockTripListener.ts) over a real Unix-domain socket: an
// `ESTOP <detail>` line is an e-stop; another line (negative control) is ignored and traced; a
// line beyond MAX_LINE_BYTES closes that connection at once, without an e-stop, in bounded time
// and memory; a file in the way that is not a socket is not removed.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  listenForInterlockTrips,
  MAX_LINE_BYTES,
  type InterlockTripListener,
} from '../../src/services/g1Runner/interlockTripListener';

let dir: string;
let listener: InterlockTripListener;
const estops: string[] = [];
const traces: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mb-trip-sock-'));
  listener = await listenForInterlockTrips(
    path.join(dir, 'runner.sock'),
    (d) => estops.push(d),
    (l) => traces.push(l),
  );
});

afterAll(async () => {
  listener?.close();
  await rm(dir, { recursive: true, force: true });
});

function connect(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(listener.path, () => resolve(s));
    s.once('error', reject);
  });
}

const until = async (cond: () => boolean, ms = 2000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
};

describe('g1-runner interlock e-stop socket', () => {
  it('ESTOP lines are e-stops; another line (negative control) is ignored and traced', async () => {
    const s = await connect();
    s.write('HELLO there\nESTOP EV ESTOP: the e-stop was pressed\nEST');
    s.write('OP\n');
    await until(() => estops.length >= 2);
    expect(estops).toEqual(['EV ESTOP: the e-stop was pressed', 'e-stop']);
    expect(traces.some((l) => /ignored a line that is not an e-stop \(11 bytes\)/.test(l))).toBe(true);
    s.destroy();
  });

  it(`a line longer than ${MAX_LINE_BYTES} bytes closes the connection, no e-stop, bounded time and memory`, async () => {
    const before = estops.length;
    const s = await connect();
    const closed = new Promise<void>((r) => s.once('close', () => r()));
    s.on('error', () => {});
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    // 64 MiB offered without a newline: the listener must stop reading after ~1 KiB.
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    for (let i = 0; i < 1024 && !s.destroyed; i++) s.write(chunk);
    await closed;
    const ms = performance.now() - t0;
    const rssMiB = (process.memoryUsage().rss - rss0) / 2 ** 20;
    console.log(`over-long line refused: connection closed after ${ms.toFixed(1)} ms, RSS +${rssMiB.toFixed(1)} MiB`);
    expect(estops.length).toBe(before);
    expect(traces.some((l) => l.includes(`longer than ${MAX_LINE_BYTES} bytes`))).toBe(true);
    expect(ms).toBeLessThan(2000);
  });

  it('a regular file in the way is not removed: the listen is refused', async () => {
    const regular = path.join(dir, 'not-a-socket');
    await writeFile(regular, 'keep me');
    await expect(
      listenForInterlockTrips(
        regular,
        () => {},
        () => {},
      ),
    ).rejects.toThrow(/EADDRINUSE/);
    expect(await readFile(regular, 'utf8')).toBe('keep me');
  });
});
