// STOP while the host works: with the loopback host in its own process
// (test/helpers/hostChild.ts), a client starts heavy work — clips.load of a 200 MB CSV, of the NPZ
// amplification files, qualification.open on /proc/x/campaign — and another client sends the
// operator's STOP (`trial.stop {all: true}`) every 50 ms meanwhile. Each STOP must be answered
// within STOP_BOUND_MS: the requirement is 50 ms; the bound is generous because this 2-core machine
// is shared, and the measured figures are printed. Before the fix, the first STOP sent during a
// 200 MB CSV load waited for the whole decode (~9 s), and qualification.open on /proc never answered.
//
// A wall-clock test: it runs in the `realtime` project (vitest.config.ts), one file at a time.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { WsResponse } from '../../src/api/contract';
import { amplificationNpz, hostileDir, writeBigCsv } from '../helpers/hostileFiles';
import { REPO_ROOT } from '../helpers/sharedData';
import { nodeArgsFor } from '../helpers/tsChild';

/** Longest a STOP may take to be answered here (the requirement: 50 ms on an unloaded machine). */
const STOP_BOUND_MS = 250;
/** Longest qualification.open on a hostile path may take to answer (it used to spin forever). */
const OPEN_BOUND_MS = 10_000;
/** A STOP unanswered this long fails the test at once (a host whose event loop is stuck never answers). */
const STOP_GIVE_UP_MS = 30_000;

let tmp: { dir: string; cleanup(): void };
let host: ChildProcessWithoutNullStreams;
let lines: AsyncIterator<string>;
let port = 0;
let token = '';
let csv = '';
let csvFrames = 0;

const nextLine = async (): Promise<string> => {
  const r = await lines.next();
  if (r.done) throw new Error('the host process ended');
  return r.value;
};

beforeAll(async () => {
  tmp = hostileDir('mb-stop-latency-');
  csv = path.join(tmp.dir, 'big.csv');
  csvFrames = writeBigCsv(csv, 200 * 1024 * 1024);
  host = spawn(process.execPath, [...nodeArgsFor(path.join(REPO_ROOT, 'test/helpers/hostChild.ts'))], {
    cwd: REPO_ROOT,
  });
  host.stderr.on('data', (d: Buffer) => process.stderr.write(`host: ${d.toString()}`));
  lines = createInterface({ input: host.stdout })[Symbol.asyncIterator]();
  ({ port, token } = JSON.parse(await nextLine()) as { port: number; token: string });
}, 120_000);

afterAll(async () => {
  if (host && host.exitCode === null) {
    const exited = new Promise((r) => host.once('exit', r));
    host.kill('SIGTERM');
    const t = setTimeout(() => host.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
  tmp?.cleanup();
});

function connect(maxPayload = 1 << 20): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api?token=${token}`, {
      headers: { Origin: `http://127.0.0.1:${port}` },
      maxPayload,
    });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** The host's event-loop delay since the previous call. */
async function hostLoopStats(): Promise<{ loopDelayMaxMs: number; p99Ms: number }> {
  host.stdin.write('stats\n');
  return JSON.parse(await nextLine()) as { loopDelayMaxMs: number; p99Ms: number };
}

type Outcome = { response: WsResponse } | { large: true };

/**
 * One request on a fresh connection whose maxPayload is 1 MiB, sent on the first `send()` (which
 * returns its outcome; later calls return the same): an error answer arrives as a message; a clip
 * (~180 MB of JSON) overflows it, which says it arrived without this process having to receive
 * and parse it (that would stall this test's own event loop, not the host's).
 */
async function requestOnce(method: string, params: unknown): Promise<{ send(): Promise<Outcome>; close(): void }> {
  const ws = await connect();
  let outcome: Promise<Outcome> | undefined;
  return {
    send: () =>
      (outcome ??= new Promise<Outcome>((resolve, reject) => {
        ws.once('message', (d) => resolve({ response: JSON.parse(String(d)) as WsResponse }));
        ws.once('error', (err) =>
          /Max payload size exceeded/.test(err.message) ? resolve({ large: true }) : reject(err),
        );
        ws.send(JSON.stringify({ id: 'work', method, params }));
      })),
    close: () => ws.terminate(),
  };
}

/**
 * Connects the STOP client, then starts the work, then sends trial.stop {all: true} every 50 ms
 * until the work settles; returns each answer's latency, ms.
 */
async function stopsDuring(start: () => Promise<unknown>): Promise<number[]> {
  const stopper = await connect();
  const work = start();
  let done = false;
  void work.finally(() => (done = true)).catch(() => undefined);
  const latencies: number[] = [];
  try {
    let id = 0;
    while (!done) {
      const t0 = performance.now();
      const r = await new Promise<WsResponse>((resolve, reject) => {
        const late = setTimeout(
          () => reject(new Error(`a STOP was not answered within ${STOP_GIVE_UP_MS} ms`)),
          STOP_GIVE_UP_MS,
        );
        stopper.once('message', (d) => {
          clearTimeout(late);
          resolve(JSON.parse(String(d)) as WsResponse);
        });
        stopper.send(JSON.stringify({ id: ++id, method: 'trial.stop', params: { all: true } }));
      });
      latencies.push(performance.now() - t0);
      expect(r).toMatchObject({ id, result: { stopped: [] } });
      await new Promise((res) => setTimeout(res, 50));
    }
  } finally {
    stopper.close();
  }
  return latencies;
}

const summary = (l: number[]) => {
  const s = [...l].sort((a, b) => a - b);
  return {
    stops: s.length,
    maxMs: Number(s[s.length - 1].toFixed(1)),
    medianMs: Number(s[Math.floor(s.length / 2)].toFixed(1)),
  };
};

describe('STOP is answered while the host does heavy file work', () => {
  it(`answers trial.stop within ${STOP_BOUND_MS} ms while clips.load decodes a 200 MB CSV`, async () => {
    await hostLoopStats();
    const load = await requestOnce('clips.load', { path: csv, fps: 30 });
    let t0 = 0;
    const latencies = await stopsDuring(() => {
      t0 = performance.now();
      return load.send();
    });
    const loadMs = performance.now() - t0;
    const outcome = await load.send();
    load.close();
    const loop = await hostLoopStats();
    const s = summary(latencies);
    console.log(
      `200 MB CSV (${(fs.statSync(csv).size / 1048576).toFixed(0)} MiB, ${csvFrames} frames) loaded in ${loadMs.toFixed(0)} ms; ` +
        `${s.stops} STOPs answered, max ${s.maxMs} ms, median ${s.medianMs} ms; host event-loop delay max ${loop.loopDelayMaxMs.toFixed(1)} ms, p99 ${loop.p99Ms.toFixed(1)} ms`,
    );
    expect(outcome, JSON.stringify(outcome).slice(0, 300)).toEqual({ large: true });
    expect(s.stops).toBeGreaterThanOrEqual(5);
    expect(s.maxMs).toBeLessThan(STOP_BOUND_MS);
  });

  it('answers trial.stop while clips.load refuses the NPZ amplification files with input_error', async () => {
    for (const [name, mismatch, reason] of [
      ['bomb.npz', false, /budget for one NPZ/],
      ['bomb_mismatch.npz', true, /has \d+ frames but joint_pos has \d+/],
    ] as const) {
      const file = path.join(tmp.dir, name);
      fs.writeFileSync(file, await amplificationNpz({ mismatch }));
      const load = await requestOnce('clips.load', { path: file });
      const latencies = await stopsDuring(() => load.send());
      const outcome = await load.send();
      load.close();
      console.log(`${name}: ${JSON.stringify(summary(latencies))}`);
      expect(outcome).toMatchObject({
        response: {
          id: 'work',
          error: { code: 'input_error', location: { file }, reason: expect.stringMatching(reason) },
        },
      });
      expect(Math.max(...latencies)).toBeLessThan(STOP_BOUND_MS);
    }
  });

  it('answers qualification.open on /proc/x/campaign (where a recursive mkdir spins) promptly with an error, and STOP meanwhile', async () => {
    const open = await requestOnce('qualification.open', { campaignDir: '/proc/x/campaign', create: true });
    let t0 = 0;
    let bounded: Promise<Outcome> | undefined;
    const latencies = await stopsDuring(() => {
      t0 = performance.now();
      bounded = Promise.race([
        open.send(),
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`qualification.open did not answer within ${OPEN_BOUND_MS} ms`)),
            OPEN_BOUND_MS,
          ),
        ),
      ]);
      return bounded;
    });
    const outcome = await bounded!;
    const ms = performance.now() - t0;
    open.close();
    console.log(
      `qualification.open /proc/x/campaign answered in ${ms.toFixed(0)} ms; STOPs ${JSON.stringify(summary(latencies))}`,
    );
    expect(outcome).toMatchObject({
      response: {
        id: 'work',
        error: {
          code: 'input_error',
          field: 'params.campaignDir',
          message: expect.stringMatching(/\/proc\/x\/campaign is under \/proc, a virtual file system of the kernel/),
        },
      },
    });
    expect(Math.max(...latencies)).toBeLessThan(STOP_BOUND_MS);
  });
});
