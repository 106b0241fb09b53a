// `motionbench emulate-robot` as a user runs it: the real CLI in a child process, with the
// interlock box emulated on one end of a real socat pty pair and the console's serial interlock
// on the other. The console's client runs an episode; the e-stop pressed through the emulator's
// control channel ends it `estop`, and the console's interlock sees the box in ESTOP.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendEvent } from '../../src/domain/backend/backend';
import { decodeWireClip, G1_BRIDGE_TOPICS } from '../../src/domain/bridge';
import type { InterlockTrip } from '../../src/domain/interlock';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import {
  EMULATOR_CONTROL_SCHEMA_NAME,
  EMULATOR_CONTROL_TOPIC,
  standingArmRaiseClip,
  ZERO_PERTURBATION_PROFILE,
} from '../../src/domain/robotEmulator';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { connectRemoteSimulator, type BridgeClientBackend } from '../../src/services/bridge/bridgeClientBackend';
import { openInterlock, type InterlockLink } from '../../src/services/interlock/serialInterlock';
import { RobotEmulatorCore } from '../../src/services/robotEmulator';
import { makePtyPair, waitFor, type TestPtyPair } from '../helpers/ptyPair';
import { REPO_ROOT } from '../helpers/sharedData';
import { PlainClient, sleep } from './bridgeTestClient';

const BIN = path.join(REPO_ROOT, 'bin/motionbench.mjs');

let pair: TestPtyPair;
let child: ChildProcess;
let exit: Promise<number | null>;
let stderr = '';
let doc: {
  url: string;
  contract: string;
  execution_domain: string;
  state_rate_hz: number;
  topics: string[];
  interlock: string;
  stamp_origin_unix_ms: number;
  control_topic: string;
};
let link: InterlockLink;
const trips: InterlockTrip[] = [];
let clip: MotionClip;

beforeAll(async () => {
  pair = await makePtyPair();
  child = spawn(
    process.execPath,
    [BIN, 'emulate-robot', '--port', '0', '--json', '--interlock', pair.devicePath, '--fault', 'nan@1500ms:3'],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr!.on('data', (d) => (stderr += String(d)));
  let stdout = '';
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`emulate-robot did not start within 60 s:\n${stderr}`)), 60_000);
    child.stdout!.on('data', (d) => {
      stdout += String(d);
      try {
        doc = JSON.parse(stdout);
        clearTimeout(t);
        resolve();
      } catch {
        // not all of it yet
      }
    });
    child.once('exit', (code) => reject(new Error(`emulate-robot exited with ${code}:\n${stderr}`)));
  });
  // The clip starts where the emulated robot stands.
  const core = await RobotEmulatorCore.create({ profile: ZERO_PERTURBATION_PROFILE });
  const r = core.humanReset();
  core.dispose();
  const d = decodeWireClip(
    standingArmRaiseClip({
      rootPosM: [r.rootPosM[0], r.rootPosM[1], r.rootPosM[2]],
      jointPosRad: r.jointPosRad,
      seconds: 4,
    }),
  );
  if (!d.ok) throw new Error(d.reason);
  clip = d.value;
  // (after the MuJoCo load above, which blocks this process longer than the interlock's 100 ms silence limit)
  link = await openInterlock({ path: pair.consolePath, onTrip: (t) => trips.push(t), log: () => {} });
}, 90_000);

afterAll(async () => {
  await link?.close().catch(() => {});
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await exit;
  }
  await pair?.dispose();
});

describe('motionbench emulate-robot (child process, real pty interlock)', () => {
  let client: BridgeClientBackend;
  const events: BackendEvent[] = [];
  let frames = 0;

  it('prints the JSON doc and streams at 500 Hz; a scheduled --fault shows as malformed frames', async () => {
    expect(doc).toMatchObject({
      contract: 'g1-bridge/1',
      execution_domain: 'real_robot',
      state_rate_hz: 500,
      topics: [G1_BRIDGE_TOPICS.lowstate, G1_BRIDGE_TOPICS.wbcStatus],
      interlock: pair.devicePath,
      control_topic: EMULATOR_CONTROL_TOPIC,
    });
    expect(doc.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    client = connectRemoteSimulator({ url: doc.url });
    client.setListener(async (evs) => {
      for (const e of evs) {
        if (e.type === 'frames') frames += e.frames.length;
        else events.push(e);
      }
    });
    await waitFor(() => frames > 0, 5000, 'the first frames');
    const f0 = frames;
    const t0 = performance.now();
    await sleep(1000);
    const rate = (frames - f0) / ((performance.now() - t0) / 1000);
    console.log(`emulate-robot child: ${rate.toFixed(1)} lowstate/s at the console's client`);
    expect(rate).toBeGreaterThan(450);
    await waitFor(() => client.stats().malformed >= 3, 3000, 'the scheduled nan frames');
    expect(client.stats().malformed).toBe(3);
    await waitFor(() => link.state === 'safe', 2000, 'the box SAFE');
  }, 20_000);

  it('the box e-stop (pressed via /emulator/control) ends the running episode `estop`; the console interlock sees ESTOP', async () => {
    const binding = makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) });
    const lease = await client.acquire('cli-run-1');
    const running = lease.run({ clip, binding, seed: 0 });
    await waitFor(() => client.wbcStatus?.state === 'tracking', 5000, 'tracking');
    await sleep(500);
    const op = await PlainClient.connect(doc.url, { subscribe: false });
    const ch = op.client.advertise({
      topic: EMULATOR_CONTROL_TOPIC,
      encoding: 'json',
      schemaName: EMULATOR_CONTROL_SCHEMA_NAME,
      schema: '{}',
      schemaEncoding: 'jsonschema',
    });
    const tPress = performance.now();
    op.sendRaw(JSON.stringify({ action: 'estop' }), ch);
    const end = await running;
    const tEnd = performance.now();
    expect(end).toMatchObject({ runId: 'cli-run-1', outcome: 'estop' });
    expect(end.simSeconds).toBeGreaterThan(0.3);
    expect(end.simSeconds).toBeLessThan(3);
    await waitFor(() => link.state === 'estop', 2000, 'the console interlock in estop');
    expect(trips.some((t) => t.toState === 'estop')).toBe(true);
    expect(client.wbcStatus).toMatchObject({ state: 'damping', outcome: 'estop', run_id: 'cli-run-1' });
    console.log(
      `e-stop pressed → episode end at the console: ${(tEnd - tPress).toFixed(1)} ms; interlock trips ${JSON.stringify(trips.map((t) => t.reason))}`,
    );
    await lease.release();
    // The human cannot stand it up while the e-stop is latched; after the release they can.
    const answers = (): string[] =>
      op.statuses.filter((st) => st.id?.startsWith('emulator/control/')).map((st) => `${st.id} ${st.message}`);
    op.sendRaw(JSON.stringify({ action: 'human_reset' }), ch);
    await waitFor(() => answers().some((a) => a.includes('human_reset')), 2000, 'the human_reset answer');
    expect(answers().find((a) => a.includes('human_reset'))).toMatch(/^emulator\/control\/refused .*e-stop is pressed/);
    op.sendRaw(JSON.stringify({ action: 'release_estop' }), ch);
    op.sendRaw(JSON.stringify({ action: 'human_reset' }), ch);
    await waitFor(() => client.wbcStatus?.state === 'idle', 2000, 'idle after the release and the human reset');
    // The operator channel's answers are statuses of their own: they may arrive after the wbc status.
    await waitFor(
      () => answers().filter((a) => a.startsWith('emulator/control/ok')).length >= 3,
      2000,
      'the ok answers (estop, release_estop, human_reset)',
    );
    await op.close();
  }, 20_000);

  it('SIGTERM stops it cleanly (exit 0)', async () => {
    await client.close();
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(stderr).toMatch(/emulate-robot: SIGTERM: stopping/);
    expect(stderr).toMatch(/emulate-robot: stopped; \d+ samples/);
    expect(stderr).toMatch(/motors: damped \(e-stop: interlock e-stop\)/);
    expect(stderr).toMatch(/motors: tracking .* \(start of run cli-run-1\)/);
  }, 20_000);
});
