import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRemoteSimulator, type BridgeClientBackend } from '../../src/services/bridge/bridgeClientBackend';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { planPolicy } from '../../src/services/wbc/policyRun';
import { startEmulatorProcess, type EmulatorProcess } from '../helpers/robotEmulatorProcess';
import { sharedData } from '../helpers/sharedData';
import { sleep } from './bridgeTestClient';

// The console's gate trips on a robot link silent for 100 ms once `prepare` is granted, and a G1's
// motor board publishes lowstate whatever its PC is loading. The emulator (its own process, as in
// the matched trials) loads a policy on its onboard-computer thread (onboardComputer.ts), never in
// its 500 Hz loop: from the prepare to the episode's start, the lowstate at the console keeps
// coming. (Found by CI: with the load in the loop, once, the gate tripped between prepare and start.)

const plan = planPolicy(sharedData('policies/beyondmimic/Jump_wose.onnx'), loadRobotProfile());

let emu: EmulatorProcess;
let client: BridgeClientBackend;
const frames: { atMs: number; tick: number; ref: number | null }[] = [];

beforeAll(async () => {
  emu = await startEmulatorProcess(['--seed', '7']);
  client = connectRemoteSimulator({ url: emu.url, reconnectInitialDelayMs: 50 });
  client.setListener(async (evs) => {
    for (const e of evs)
      if (e.type === 'frames')
        for (const f of e.frames) frames.push({ atMs: performance.now(), tick: f.tick, ref: f.referenceFrame });
  });
  for (let t = 0; frames.length < 100 && t < 100; t++) await sleep(20);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await emu?.stop();
});

describe('a released policy loaded on the emulated robot', () => {
  it('is loaded by the onboard computer while the lowstate goes on: no 100 ms silence from prepare to start', async () => {
    const lease = await client.acquire('emu-policy-1');
    const n0 = frames.length;
    const running = lease.run({ clip: plan.baked!.clip, binding: plan.binding, seed: 0 });
    for (let t = 0; !frames.slice(n0).some((f) => f.ref !== null) && t < 500; t++) await sleep(20);
    await sleep(100);
    await lease.stop('aborted_by_operator', 'enough');
    await running;
    await lease.release();
    const around = frames.slice(n0);
    const started = around.findIndex((f) => f.ref !== null);
    expect(started).toBeGreaterThan(0);
    let maxGapMs = 0;
    for (let i = 1; i <= started; i++) maxGapMs = Math.max(maxGapMs, around[i].atMs - around[i - 1].atMs);
    const loaded = /the onboard computer loaded (\S+) in (\d+) ms/.exec(emu.stderr());
    console.log(
      `prepare → start of Jump_wose: ${started} lowstates, largest gap at the console ${maxGapMs.toFixed(1)} ms; the onboard computer's load ${loaded?.[2]} ms`,
    );
    expect(loaded?.[1], emu.stderr()).toBe(plan.binding.id);
    expect(maxGapMs, emu.stderr()).toBeLessThan(100);
    for (let i = 1; i < around.length; i++) expect(around[i].tick).toBe(around[i - 1].tick + 1);
  }, 60_000);
});
