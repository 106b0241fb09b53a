// STOP under hostile input: the loopback host in its own process (test/helpers/hostChild.ts, a
// fresh one per class, so a host frozen by one class cannot hide or spoil the next), one client
// sends a hostile request — a hostile motion file (clips.load), a hostile policy (policies.open),
// a hostile ROS 2 robot (connections.add of a robot whose foxglove server, in a process of its
// own, advertises a hostile /lowstate definition), a tampered campaign (the board's reads of it),
// a huge mesh of the robot model (robot.getMesh, on a host started with that model) — and a second
// client sends the operator's STOP (`trial.stop {all: true}`) every 50 ms meanwhile. For each class:
// every STOP is answered, the slowest within STOP_BOUND_MS, the host process is alive afterwards,
// and the hostile request is answered within REQUEST_BOUND_MS: with an error (the robot link: the
// connection reports a problem), or, for the mesh and the campaign's reads, with its result.
// The hostile inputs are made by test/helpers/hostileStopInputs.ts.
//
// A wall-clock test: it runs in the `realtime` project (vitest.config.ts), one file at a time.

import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { ConnectionInfo, WsResponse } from '../../src/api/contract';
import { hostileDir } from '../helpers/hostileFiles';
import {
  c3Onnx,
  HOSTILE_ROBOT_CHILD,
  HUGE_MESH_NAME,
  hugeMeshModel,
  m2Motion,
  m3Motion,
  tamperedCampaign,
} from '../helpers/hostileStopInputs';
import { REPO_ROOT } from '../helpers/sharedData';
import { nodeArgsFor } from '../helpers/tsChild';

/** Longest a STOP may take to be answered (the requirement: 50 ms on an unloaded machine). */
const STOP_BOUND_MS = 250;
/** A STOP unanswered this long fails the case at once (a host whose event loop is stuck never answers). */
const STOP_GIVE_UP_MS = 30_000;
/** Longest a hostile request may take to be answered. */
const REQUEST_BOUND_MS = 45_000;
/** How long STOPs are sent after a hostile robot is added (its link decodes what it advertises meanwhile). */
const LINK_WINDOW_MS = 6_000;

let tmp: { dir: string; cleanup(): void };
const figures: string[] = [];

beforeAll(() => {
  tmp = hostileDir('mb-stop-hostile-');
});
afterAll(() => {
  tmp?.cleanup();
  console.log(`STOP under hostile input:\n${figures.join('\n')}`);
});

interface Host {
  proc: ChildProcessWithoutNullStreams;
  port: number;
  token: string;
}

const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(t);
  }
});

async function startHost(modelFile?: string): Promise<Host> {
  const proc = spawn(process.execPath, [...nodeArgsFor(path.join(REPO_ROOT, 'test/helpers/hostChild.ts'))], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...(modelFile && { MB_HOST_MODEL: modelFile }) },
  });
  children.push(proc);
  proc.stderr.on('data', (d: Buffer) => process.stderr.write(`host: ${d.toString()}`));
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error('the host process ended before listening');
  const { port, token } = JSON.parse(first.value as string) as { port: number; token: string };
  return { proc, port, token };
}

/** The hostile ROS 2 robot (c1 or c2) in its own process; its foxglove server's URL. */
async function startHostileRobot(which: 'c1' | 'c2'): Promise<string> {
  const proc = spawn(process.execPath, [...nodeArgsFor(HOSTILE_ROBOT_CHILD), 'ros2-robot', which], {
    cwd: REPO_ROOT,
  });
  children.push(proc);
  proc.stderr.on('data', (d: Buffer) => process.stderr.write(`robot ${which}: ${d.toString()}`));
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error(`the hostile robot ${which} ended before listening`);
  return (JSON.parse(first.value as string) as { url: string }).url;
}

function connect(host: Host, maxPayload = 1 << 20): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${host.port}/api?token=${host.token}`, {
      headers: { Origin: `http://127.0.0.1:${host.port}` },
      maxPayload,
    });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

type Outcome = { response: WsResponse; ms: number } | { large: true; ms: number };

/** One request on its own connection, answered within REQUEST_BOUND_MS or rejected. */
async function request(host: Host, method: string, params: unknown): Promise<Outcome> {
  const ws = await connect(host);
  const t0 = performance.now();
  try {
    return await new Promise<Outcome>((resolve, reject) => {
      const late = setTimeout(
        () => reject(new Error(`${method} was not answered within ${REQUEST_BOUND_MS} ms`)),
        REQUEST_BOUND_MS,
      );
      const done = (o: Outcome) => {
        clearTimeout(late);
        resolve(o);
      };
      ws.on('message', (d) => {
        const m = JSON.parse(String(d)) as WsResponse & { event?: unknown };
        if (m.event === undefined) done({ response: m, ms: performance.now() - t0 });
      });
      ws.once('error', (err) =>
        /Max payload size exceeded/.test(err.message) ? done({ large: true, ms: performance.now() - t0 }) : reject(err),
      );
      ws.send(JSON.stringify({ id: 'work', method, params }));
    });
  } finally {
    ws.terminate();
  }
}

interface StopRun<T> {
  /** Each answered STOP's latency, ms. */
  latencies: number[];
  /** A STOP went unanswered for STOP_GIVE_UP_MS (the host's loop is stuck): the STOPs ended there. */
  missing: boolean;
  /** The work's value, or why it failed (not answered in time, …). */
  outcome: { ok: true; value: T } | { ok: false; error: Error };
}

/**
 * Sends trial.stop {all: true} every 50 ms from its own client until `work` settles (or a STOP goes
 * unanswered); never throws, so the figures of a failing class are reported too.
 */
async function stopsDuring<T>(host: Host, work: () => Promise<T>): Promise<StopRun<T>> {
  const stopper = await connect(host);
  let settled: StopRun<T>['outcome'] | undefined;
  const running = work().then(
    (value) => (settled = { ok: true, value }),
    (error: unknown) => (settled = { ok: false, error: error instanceof Error ? error : new Error(String(error)) }),
  );
  const latencies: number[] = [];
  let missing = false;
  let id = 0;
  while (!settled) {
    const t0 = performance.now();
    const r = await new Promise<WsResponse | null>((resolve) => {
      const late = setTimeout(() => {
        stopper.off('message', onMessage);
        resolve(null);
      }, STOP_GIVE_UP_MS);
      // Pushes (safety.status, …) reach every client; the STOP's answer is the message with an id.
      const onMessage = (d: unknown): void => {
        const m = JSON.parse(String(d)) as WsResponse & { event?: unknown };
        if (m.event !== undefined) return;
        clearTimeout(late);
        stopper.off('message', onMessage);
        resolve(m);
      };
      stopper.on('message', onMessage);
      stopper.send(JSON.stringify({ id: ++id, method: 'trial.stop', params: { all: true } }));
    });
    if (r === null) {
      missing = true;
      break;
    }
    latencies.push(performance.now() - t0);
    expect(r).toMatchObject({ id, result: { stopped: [] } });
    await new Promise((res) => setTimeout(res, 50));
  }
  stopper.terminate();
  if (!missing) await running;
  return {
    latencies,
    missing,
    outcome: settled ?? { ok: false, error: new Error('abandoned: a STOP went unanswered meanwhile') },
  };
}

function report(name: string, run: StopRun<unknown>, extra: string): { max: number } {
  const s = [...run.latencies].sort((a, b) => a - b);
  const max = run.missing ? Infinity : (s[s.length - 1] ?? NaN);
  const stops = run.missing
    ? `${s.length} STOPs answered, then one unanswered for ${STOP_GIVE_UP_MS / 1000} s`
    : `${s.length} STOPs, max ${max.toFixed(1)} ms, median ${(s[Math.floor(s.length / 2)] ?? NaN).toFixed(1)} ms`;
  figures.push(`  ${name}: ${stops}; ${extra}`);
  return { max };
}

const outcomeText = (run: StopRun<Outcome>, what: string): string =>
  run.outcome.ok
    ? `${what} answered in ${run.outcome.value.ms.toFixed(0)} ms (${codeOf(run.outcome.value)})`
    : `${what}: ${run.outcome.error.message}`;

/** The error code of an answer, 'ok' for a result, 'large result' for one over the client's 1 MiB. */
const codeOf = (o: Outcome): string =>
  !('response' in o) ? 'large result' : 'error' in o.response ? o.response.error.code : 'ok';

const alive = (host: Host) => host.proc.exitCode === null && host.proc.signalCode === null;

/** The STOPs of one hostile file request, and its refusal. */
async function hostileRequest(name: string, method: string, params: unknown): Promise<void> {
  const host = await startHost();
  const run = await stopsDuring(host, () => request(host, method, params));
  const { max } = report(name, run, outcomeText(run, method));
  expect(alive(host), 'the host process is alive').toBe(true);
  expect(run.missing, 'a STOP went unanswered').toBe(false);
  expect(max).toBeLessThan(STOP_BOUND_MS);
  if (!run.outcome.ok) throw run.outcome.error;
  const code = codeOf(run.outcome.value);
  const result = run.outcome.value;
  expect(
    code === 'ok' || code === 'large result',
    `${method} must be refused: ${JSON.stringify(result).slice(0, 300)}`,
  ).toBe(false);
}

describe('STOP under hostile input (each class on a fresh host process)', () => {
  it('M2: clips.load of a .motion with zero strides claiming 2 M frames', async () => {
    const file = path.join(tmp.dir, 'm2.motion');
    fs.writeFileSync(file, m2Motion());
    await hostileRequest('M2 clips.load zero-stride .motion', 'clips.load', { path: file });
  });

  it('M3: clips.load of a .motion whose pickle is 16 MiB of EMPTY_DICT', async () => {
    const file = path.join(tmp.dir, 'm3.motion');
    fs.writeFileSync(file, m3Motion());
    await hostileRequest('M3 clips.load EMPTY_DICT pickle', 'clips.load', { path: file });
  });

  it('C3: policies.open of a BeyondMimic ONNX with a huge joint_names', async () => {
    const file = path.join(tmp.dir, 'c3.onnx');
    fs.writeFileSync(file, c3Onnx());
    await hostileRequest('C3 policies.open huge joint_names', 'policies.open', { path: file });
  });

  describe.each(['c1', 'c2'] as const)('%s: a ROS 2 robot advertising a hostile /lowstate definition', (which) => {
    it('STOP is answered while the link reads the advertisement; the connection says what is wrong', async () => {
      const url = await startHostileRobot(which);
      const host = await startHost();
      let added: Outcome | undefined;
      const run = await stopsDuring(host, async () => {
        added = await request(host, 'connections.add', { url, kind: 'robot' });
        await new Promise((r) => setTimeout(r, LINK_WINDOW_MS));
      });
      const listed = run.missing
        ? ({ large: true, ms: NaN } as Outcome)
        : await request(host, 'connections.list', {}).catch(() => ({ large: true, ms: NaN }) as Outcome);
      const robot =
        'response' in listed && 'result' in listed.response
          ? (listed.response.result as ConnectionInfo[]).find((c) => c.kind === 'robot')
          : undefined;
      const { max } = report(
        `${which.toUpperCase()} ROS 2 robot`,
        run,
        `connection ${robot?.presence ?? '?'}, problems: ${JSON.stringify(robot?.problems.map((p) => p.code) ?? [])}`,
      );
      expect(alive(host), 'the host process is alive').toBe(true);
      expect(run.missing, 'a STOP went unanswered').toBe(false);
      expect(max).toBeLessThan(STOP_BOUND_MS);
      expect(added && codeOf(added)).toBe('ok');
      expect(robot, JSON.stringify(listed).slice(0, 300)).toBeDefined();
      expect(robot!.problems.length, JSON.stringify(robot)).toBeGreaterThan(0);
    });
  });

  it('a huge mesh of the robot model: robot.getMesh reads, encodes and serializes it off the event loop', async () => {
    const host = await startHost(hugeMeshModel(path.join(tmp.dir, 'huge-mesh-model')));
    const run = await stopsDuring(host, () => request(host, 'robot.getMesh', { name: HUGE_MESH_NAME }));
    const { max } = report('huge mesh robot.getMesh', run, outcomeText(run, 'robot.getMesh'));
    expect(alive(host), 'the host process is alive').toBe(true);
    expect(run.missing, 'a STOP went unanswered').toBe(false);
    expect(max).toBeLessThan(STOP_BOUND_MS);
    if (!run.outcome.ok) throw run.outcome.error;
    // ~53 MB of JSON: more than this client's 1 MiB, so it arrived without being parsed here.
    expect(codeOf(run.outcome.value)).toBe('large result');
  });

  it('a tampered campaign (a workload snapshot record of ~48 MB): the board reads it off the event loop', async () => {
    const campaignDir = path.join(tmp.dir, 'tampered');
    await tamperedCampaign(campaignDir);
    const host = await startHost();
    const requests: [string, unknown][] = [
      ['qualification.open', { campaignDir }],
      ['qualification.report', { campaignDir }],
      ['gap.report', { campaignDir }],
      ['gap.replay', { campaignDir, parentTraceId: 'pt-none' }],
      ['qualification.replay', { campaignDir, bindingKey: 'builtin@x', clipId: 'none' }],
      ['analysis.run', { campaignDir }],
    ];
    for (const [method, params] of requests) {
      const run = await stopsDuring(host, () => request(host, method, params));
      const { max } = report(`tampered campaign ${method}`, run, outcomeText(run, method));
      expect(alive(host), 'the host process is alive').toBe(true);
      expect(run.missing, `${method}: a STOP went unanswered`).toBe(false);
      expect(max, method).toBeLessThan(STOP_BOUND_MS);
      if (!run.outcome.ok) throw run.outcome.error;
    }
  });
});
