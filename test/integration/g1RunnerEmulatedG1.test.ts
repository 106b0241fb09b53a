// console (connectRobot) → g1-runner → real Cyclone DDS (loopback) → `motionbench emulate-robot
// --dds` (the MuJoCo G1 on the wire, its own process, hanging on its gantry): prepare ramps the
// emulated robot to the clip's start pose, start tracks it with the builtin tracker, the episode
// completes, and the emulated G1 counts no LowCmd_ with a wrong CRC.
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWireClip } from '../../src/domain/bridge';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { standingArmRaiseClip } from '../../src/domain/robotEmulator/standingClip';
import { makeBuiltinBinding } from '../../src/domain/sim/builtinBinding';
import { connectRobot } from '../../src/services/bridge/bridgeClientBackend';
import { startG1Runner, type G1Runner } from '../../src/services/g1Runner/g1Runner';
import { setAutogroupNice } from '../../src/services/os/threadPriority';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { planPolicy } from '../../src/services/wbc/policyRun';
import { sharedData } from '../helpers/sharedData';
import { startDdsG1Emulator, type DdsG1EmulatorProcess } from '../helpers/ddsG1EmulatorProcess';
import { RUNNER_RT_PRIORITY } from '../../src/services/os/threadPriority';
import { claimDdsDomains } from '../helpers/ddsDomain';

const DOMAIN = claimDdsDomains();
const FIX_STAND = [
  -0.1, 0, 0, 0.3, -0.2, 0, -0.1, 0, 0, 0.3, -0.2, 0, 0, 0, 0, 0, 0.25, 0, 0.97, 0.15, 0, 0, 0, -0.25, 0, 0.97, -0.15,
  0, 0,
];

let emu: DdsG1EmulatorProcess;
let runner: G1Runner;
const traces: string[] = [];

function clipOf(seconds: number): MotionClip {
  const d = decodeWireClip(standingArmRaiseClip({ rootPosM: [0, 0, 0.79], jointPosRad: FIX_STAND, seconds }));
  if (!d.ok) throw new Error(d.reason);
  return d.value;
}

beforeAll(async () => {
  setAutogroupNice(-10);
  emu = await startDdsG1Emulator(DOMAIN, ['--gantry']);
  runner = await startG1Runner({
    interfaceName: 'lo',
    domainId: DOMAIN,
    port: 0,
    afterClip: 'gantry',
    log: (l) => traces.push(l),
  });
}, 120_000);

afterAll(async () => {
  await runner?.close();
  await emu?.stop();
});

describe('g1-runner → DDS → emulate-robot --dds (MuJoCo G1 on its gantry)', () => {
  it('prepare ramps, start tracks with the builtin tracker, the episode completes; no CRC errors', async () => {
    const client = connectRobot({ url: runner.url, reconnectInitialDelayMs: 50 });
    try {
      const lease = await client.acquire('g1e-1');
      const t0 = performance.now();
      const end = await lease.run({ clip: clipOf(2), binding: makeBuiltinBinding({}), seed: 0 });
      await lease.release();
      const s = runner.stats();
      console.log(
        `runner ↔ emulated G1: end ${end.outcome} (${end.reason}) after ${((performance.now() - t0) / 1000).toFixed(1)} s; runner ${JSON.stringify(s)}; modes ${runner.modes.map((m) => m.mode).join(' → ')}`,
      );
      expect(end.outcome).toBe('completed');
      expect(runner.modes.map((m) => m.mode).slice(-4)).toEqual(['ramping', 'holding', 'tracking', 'holding']);
      expect(s!.crcErrors).toBe(0);
      expect(s!.lowStateReceived).toBeGreaterThan(1000);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('a released policy (BeyondMimic Jump_wose) runs on board: loaded off the real-time thread, the episode completes', async () => {
    const plan = planPolicy(sharedData('policies/beyondmimic/Jump_wose.onnx'), loadRobotProfile());
    const client = connectRobot({ url: runner.url, reconnectInitialDelayMs: 50 });
    try {
      const lease = await client.acquire('g1e-policy');
      const before = runner.stats();
      const end = await lease.run({ clip: plan.baked!.clip, binding: plan.binding, seed: 0 });
      await lease.release();
      const s = runner.stats();
      const loadedLine = traces.find((l) => l.includes('onboard computer loaded'));
      console.log(
        `runner ↔ emulated G1, policy ${plan.binding.id}: end ${end.outcome} (${end.reason}); ${loadedLine}; runner ${JSON.stringify(s)} (before ${JSON.stringify(before)})`,
      );
      expect(end.outcome).toBe('completed');
      expect(loadedLine).toBeDefined();
      // Privileged, the onboard computer steps real-time, one below the real-time thread.
      if (process.platform === 'linux' && process.getuid?.() === 0)
        expect(loadedLine).toContain(`steps at SCHED_FIFO ${RUNNER_RT_PRIORITY - 1}`);
      expect(runner.modes.map((m) => m.mode).slice(-3)).toEqual(['holding', 'tracking', 'holding']);
    } finally {
      await client.close();
    }
  }, 120_000);

  it('the emulated G1 counted no LowCmd_ with a wrong CRC', async () => {
    await emu.stop();
    const summary = /stopped; .*/.exec(emu.stderr())?.[0] ?? emu.stderr().slice(-400);
    console.log(`emulate-robot --dds: ${summary}`);
    expect(summary).toMatch(/, 0 with a wrong CRC/);
  }, 60_000);
});
