import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { apiErrorSchema, type ApiError } from '../../src/api/contract';
import { InputError } from '../../src/domain/problems';
import { toApiError } from '../../src/services/console/apiErrorMap';
import { checkCreatableFolder, FolderRefusedError } from '../../src/services/files/folders';
import { startInterlockEmulator, type InterlockEmulator } from '../../src/services/interlock';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { runQualification } from '../../src/services/qualification';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { resolveBindingSpec } from '../../src/services/sim/bindingSpec';
import { openCampaign, TraceStoreError } from '../../src/services/trace';
import { listAdmittedPairs, type AdmittedPair } from '../../src/services/trial';
import { loadWorkload } from '../../src/services/workload';
import { startHostileBridge, type HostileBridge } from '../helpers/hostileBridge';
import { makePtyPair, type TestPtyPair } from '../helpers/ptyPair';
import { REPO_ROOT } from '../helpers/sharedData';
import { nodeArgsFor } from '../helpers/tsChild';

// Typed errors through the real console API: the loopback host in its own process
// (test/helpers/hostChild.ts) called over its WebSocket, and each reachable typed error made to
// happen for real. What the operator receives must be the store's / runner's / decoder's own
// message and details verbatim; each expected error is produced again in this process by the same
// code (the decoder on the same file, the store on the same locked database, the folder check on
// the same path) and compared whole. Real parts: a campaign qualified by runQualification (the
// builtin tracker without root assist falls on dyn_jump_forward: not admitted, with reasons), the
// interlock box emulated on the far end of a socat PTY, a robot-like g1-bridge/1 server in its own
// process (bench/robotLinkPublisher.ts at 50 Hz), the host's file worker and its embedded simulator.

const CLIP = 'dyn_jump_forward';

let tmp: string;
let campaignDir: string;
let pair: AdmittedPair;
let pty: TestPtyPair;
let box: InterlockEmulator;
let robot: HostileBridge;
let host: ChildProcessWithoutNullStreams;
let ws: WebSocket;
let robotId: string;

type Answer = { id: number; result?: unknown; error?: ApiError };
const waiting = new Map<number, (a: Answer) => void>();
let nextId = 1;

/** One request on the open socket; pushes (no id) are ignored. */
function call(method: string, params: unknown): Promise<Answer> {
  const id = nextId++;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    ws.send(JSON.stringify({ id, method, params }));
  });
}

/** The error the operator got for `method`, checked against the contract's schema. */
async function errorOf(method: string, params: unknown): Promise<ApiError> {
  const a = await call(method, params);
  expect(a.error, `${method} answered ${JSON.stringify(a.result)?.slice(0, 200)}`).toBeDefined();
  expect(apiErrorSchema.safeParse(a.error).error?.issues ?? []).toEqual([]);
  return a.error!;
}

/** The error `fn` throws (or rejects with) in this process. */
async function here(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-api-errors-host-'));
  campaignDir = path.join(tmp, 'campaign');
  const q = await runQualification({
    campaignDir,
    workload: loadWorkload('core-v1'),
    bindings: [await resolveBindingSpec('builtin')],
    profile: loadRobotProfile(),
    clips: [CLIP],
    workers: 1,
  });
  expect(q.rejected).toBe(1);
  const store = await openCampaign(campaignDir, { readOnly: true });
  pair = listAdmittedPairs(store)[0];
  store.close();
  expect(pair.admitted).toBe(false);
  expect(pair.reasons.length).toBeGreaterThan(1);

  pty = await makePtyPair();
  box = await startInterlockEmulator({ path: pty.devicePath });
  robot = await startHostileBridge(50);

  host = spawn(process.execPath, [...nodeArgsFor(path.join(REPO_ROOT, 'test/helpers/hostChild.ts'))], {
    cwd: REPO_ROOT,
  });
  host.stderr.on('data', (d: Buffer) => process.stderr.write(`host: ${d.toString()}`));
  const lines = createInterface({ input: host.stdout })[Symbol.asyncIterator]();
  const { port, token } = JSON.parse((await lines.next()).value as string) as { port: number; token: string };
  ws = new WebSocket(`ws://127.0.0.1:${port}/api?token=${token}`, { headers: { Origin: `http://127.0.0.1:${port}` } });
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as Answer;
    if (typeof m.id !== 'number') return;
    waiting.get(m.id)?.(m);
    waiting.delete(m.id);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
}, 120_000);

afterAll(async () => {
  ws?.close();
  if (host && host.exitCode === null) {
    const exited = new Promise((r) => host.once('exit', r));
    host.kill('SIGTERM');
    const t = setTimeout(() => host.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
  await robot?.stop();
  await box?.close();
  await pty?.dispose();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}, 30_000);

const zeros = (): string[] => Array.from({ length: 36 }, (_, i) => (i === 6 ? '1' : '0'));

describe('console API errors over the loopback host: the operator gets the error’s own words', () => {
  it('InputError (clips.load, decoded in the file worker): input_error with file, line and column', async () => {
    const csv = path.join(tmp, 'walk.csv');
    const bad = zeros();
    bad[9] = 'NaNish';
    fs.writeFileSync(csv, `${zeros().join(',')}\n${zeros().join(',')}\n${bad.join(',')}\n`);
    const got = await errorOf('clips.load', { path: csv, fps: 30 });
    const mine = (await here(() => loadClipFile(csv, { fps: 30 }))) as InputError;
    expect(mine).toBeInstanceOf(InputError);
    expect(got).toEqual(toApiError(mine));
    expect(got).toMatchObject({ code: 'input_error', location: { file: csv, line: 3, column: 10 } });
    // Control: the same file, mended, loads.
    fs.writeFileSync(csv, `${zeros().join(',')}\n${zeros().join(',')}\n${zeros().join(',')}\n`);
    expect(await call('clips.load', { path: csv, fps: 30 })).toMatchObject({ result: { frameCount: 3 } });
  });

  it('FolderRefusedError (qualification.open under /proc, in the file worker): its message verbatim, on params.campaignDir', async () => {
    const got = await errorOf('qualification.open', { campaignDir: '/proc/x/campaign', create: true });
    const mine = (await here(() => checkCreatableFolder('/proc/x/campaign'))) as FolderRefusedError;
    expect(mine).toBeInstanceOf(FolderRefusedError);
    expect(got).toEqual({
      code: 'input_error',
      message: mine.message,
      field: 'params.campaignDir',
      origin: { type: 'FolderRefusedError', code: 'virtual_fs', path: mine.path },
    });
    // Control: a folder that may be created is.
    const ok = await call('qualification.open', { campaignDir: path.join(tmp, 'new-campaign'), create: true });
    expect(ok).toMatchObject({ result: { created: true } });
  });

  it('qualification.open of a folder without a campaign names the board’s button that creates one (New)', async () => {
    const missing = path.join(tmp, 'no-campaign-here');
    expect(await errorOf('qualification.open', { campaignDir: missing })).toMatchObject({
      code: 'not_found',
      message: `no campaign at ${missing}; press New to start one there`,
      field: 'params.campaignDir',
    });
    // Negative control: the same folder with create (what New sends) opens.
    const ok = await call('qualification.open', { campaignDir: missing, create: true });
    expect(ok).toMatchObject({ result: { created: true } });
  });

  it('TrialRefusedError (trial.start on a pair that is not admitted): refused, with the admission’s reasons verbatim', async () => {
    const added = await call('connections.add', { url: robot.url, kind: 'robot' });
    robotId = (added.result as { id: string }).id;
    expect(robotId).toBeTruthy();
    // Open is all trial.start asks of the box before it looks at the pair (its light does not matter here).
    expect(await call('interlock.open', { path: pty.consolePath })).toHaveProperty('result');

    const got = await errorOf('trial.start', { campaignDir, pairId: pair.pairId, connectionId: robotId, trials: 1 });
    expect(got).toEqual({
      code: 'refused',
      message: `pair ${pair.clipName} × ${pair.bindingName} is not admitted for hardware: ${pair.reasons.join('; ')}`,
      reasons: pair.reasons,
      field: 'params.pairId',
    });
    // Control: a pair the campaign does not hold is not a refusal.
    const unknown = await errorOf('trial.start', {
      campaignDir,
      pairId: 'pt-0000000000000000',
      connectionId: robotId,
      trials: 1,
    });
    expect(unknown).toMatchObject({ code: 'not_found', field: 'params.pairId' });
  }, 90_000);

  it('TraceStoreError busy (another process holds the campaign database lock): busy, the store’s own message', async () => {
    expect(robotId).toBeTruthy(); // the robot and the interlock of the test before
    const dbFile = path.join(campaignDir, 'campaign.sqlite');
    const holder = new Database(dbFile);
    holder.exec('BEGIN IMMEDIATE'); // a writer in this process: the host process waits, then gives up
    let got: ApiError;
    let mine: TraceStoreError;
    try {
      mine = (await here(() => openCampaign(campaignDir, { busyTimeoutMs: 0 }))) as TraceStoreError;
      got = await errorOf('trial.start', { campaignDir, pairId: pair.pairId, connectionId: robotId, trials: 1 });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(mine).toBeInstanceOf(TraceStoreError);
    expect(mine.code).toBe('busy');
    expect(got).toEqual({
      code: 'busy',
      message: mine.message,
      origin: { type: 'TraceStoreError', code: 'busy', path: dbFile },
    });
    expect(got.message).not.toMatch(/cannot read/);
    // Control: with the lock released, the same request gets past the store (and is refused as before).
    const after = await errorOf('trial.start', { campaignDir, pairId: pair.pairId, connectionId: robotId, trials: 1 });
    expect(after.code).toBe('refused');
  }, 90_000);
});
