import { afterEach, describe, expect, it } from 'vitest';
import { WatchOnlyLinkError, robotBackendOf, type BackendEvent } from '../../src/domain/backend/backend';
import { cloneStateFrame, type StateFrame } from '../../src/domain/robot/stateFrame';
import { ROS2_LINK_WATCH_ONLY_REASON } from '../../src/domain/robotLink/serverCapabilities';
import { defaultBackendFactories } from '../../src/services/console/backendFactories';
import { ConnectionRegistry } from '../../src/services/console/connectionRegistry';
import { robotLinkFigures } from '../../src/services/console/robotLive';
import { connectRobot, type BridgeClientBackend } from '../../src/services/bridge/bridgeClientBackend';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import type { NewTraceEvent } from '../../src/domain/trace/records';
import type { CampaignStore } from '../../src/services/trace';
import { GateDriver } from '../../src/services/trial/gateDriver';
import type { InterlockFeed } from '../../src/services/trial/interlockFeed';
import { captureRobotCalibration } from '../../src/services/trial/robotCalibration';
import { trialRobotOf } from '../../src/services/trial/trialRobot';
import { FOXGLOVE_SDK_SUBPROTOCOL, FOXGLOVE_SUBPROTOCOL } from '../../src/services/robotLink/foxgloveWs';
import {
  lowStateDefinitionText,
  startRos2LowStateBridge,
  type Ros2LowStateBridge,
} from '../helpers/ros2LowStateBridge';
import { sleep, waitFor } from './bridgeTestClient';
import { backendHub } from '../../src/services/stream/backendHub';

// A ROS 2 G1 through foxglove_bridge, on loopback: a server speaking foxglove_bridge's protocol
// (test/helpers/ros2LowStateBridge.ts: /lowstate, unitree_hg/msg/LowState, CDR built with
// MessageWriter from Unitree's real .msg files, 500 Hz) and the console's robot link (connectRobot,
// as the registry makes it for a connection of kind `robot`). The link decodes from the advertised
// definition, delivers frames equal to what was sent (float32 bit for bit), declares itself
// watch-only and advertises nothing to the bridge; prepare/start (acquire) is refused with the
// reason; a calibration capture from the watched stream completes; the registry's fan-out (what
// live metrics read) carries the frames and measures the rate. The link offers both subprotocols
// of foxglove_bridge's generations and works with a server that accepts only one of them
// (foxglove.websocket.v1: 0.8.x; foxglove.sdk.v1: 3.x on the Foxglove SDK); a server that accepts
// neither is refused with the subprotocols named.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

async function bridge(options: Parameters<typeof startRos2LowStateBridge>[0] = {}): Promise<Ros2LowStateBridge> {
  const b = await startRos2LowStateBridge(options);
  cleanups.push(() => b.stop());
  return b;
}

function robot(url: string): { backend: BridgeClientBackend; frames: StateFrame[]; problems: string[] } {
  const frames: StateFrame[] = [];
  const problems: string[] = [];
  const backend = connectRobot({ url, reconnectInitialDelayMs: 200 });
  // Through the backend's one hub, which the trial's robot handle (trialRobotOf) subscribes to as well.
  backendHub(backend).subscribe({
    name: 'ros2LowStateLink test',
    delivery: 'every',
    onEvents: async (events: BackendEvent[]) => {
      for (const e of events) {
        if (e.type === 'frames') for (const f of e.frames) frames.push(cloneStateFrame(f));
        if (e.type === 'problem') problems.push(`${e.problem.code}: ${e.problem.message}`);
      }
    },
  });
  cleanups.push(() => backend.close());
  return { backend, frames, problems };
}

describe('a ROS 2 robot through foxglove_bridge (unitree_hg/msg/LowState, CDR)', () => {
  it('streams frames equal to what the bridge sent, declared watch-only, prepare/start refused with the reason', async () => {
    const b = await bridge();
    const { backend, frames, problems } = robot(b.url);
    await backend.whenPresent(5000);
    await waitFor(() => frames.length >= 500, 10_000, '500 frames');
    // The one problem: the watch-only condition with its reason (no malformed, no gaps).
    expect(problems).toEqual([`watch_only: ${b.url}: ${ROS2_LINK_WATCH_ONLY_REASON}`]);
    expect(backend.presence).toBe('present');
    expect(b.connections).toEqual([FOXGLOVE_SUBPROTOCOL]); // foxglove_bridge 0.8.x's

    // Values: bit-exact float32 of what was sent for the same tick, joint i = motor_state[i].
    let compared = 0;
    const first = frames[0];
    const firstSent = b.sent.get(first.tick)!;
    for (const f of frames) {
      const s = b.sent.get(f.tick);
      if (!s) continue;
      compared++;
      for (let i = 0; i < 29; i++) {
        if (f.jointPosRad[i] !== s.q[i] || f.jointVelRadS[i] !== s.dq[i] || f.jointTauNm[i] !== s.tauEst[i])
          throw new Error(`tick ${f.tick} joint ${i} differs from what was sent`);
      }
      expect(Array.from(f.imu.quatWxyz)).toEqual(Array.from(s.quat));
      expect(Array.from(f.imu.gyroRadS)).toEqual(Array.from(s.gyro));
      expect(Array.from(f.imu.accelMS2)).toEqual(Array.from(s.accel));
      expect(f.timeS).toBe(Number(s.logTimeNs - firstSent.logTimeNs) / 1e9);
    }
    expect(compared).toBeGreaterThanOrEqual(500);
    const s = backend.stats();
    expect(s).toMatchObject({ malformed: 0, duplicate: 0, outOfOrder: 0 });
    expect(s.accepted).toBeGreaterThanOrEqual(500);

    // Declared: a real robot, watch-only for good, with the reason; nothing advertised to the bridge.
    expect(backend.capabilities).toMatchObject({
      executionDomain: 'real_robot',
      globalRootPosition: false,
      exactReset: false,
      bindingKinds: [],
    });
    expect(robotBackendOf(backend)?.robotLink).toEqual({
      control: 'watchOnly',
      emulatorControl: false,
      watchOnlyReason: ROS2_LINK_WATCH_ONLY_REASON,
    });
    expect(b.clientAdvertisements).toEqual([]);

    // prepare/start (a trial's lease) is refused with the reason; stop and damp are not sent.
    const err = await backend.acquire('run-ros2-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WatchOnlyLinkError);
    expect((err as Error).message).toContain(
      'this robot link is a ROS 2 foxglove_bridge: it has no g1-bridge/1 runner, so a clip cannot be prepared, started or stopped here',
    );
    const stop = await backend.sendStop('test');
    expect(stop).toMatchObject({ attempts: 0, answer: null });
    expect(stop.message).toContain('no g1-bridge/1 runner');

    // The safety gate's driver treats it as watch-only: no real-robot trial over it, the refusal traced.
    const events: NewTraceEvent[] = [];
    const store = { getEpisode: () => null, recordEvent: (e: NewTraceEvent) => (events.push(e), e) };
    const interlock = { subscribe: () => () => {}, close: async () => {} } as unknown as InterlockFeed;
    let gateErr: unknown;
    try {
      new GateDriver({
        link: trialRobotOf(backend),
        interlock,
        store: store as unknown as CampaignStore,
        parentTraceId: 'pt-ros2',
      }).close();
    } catch (e) {
      gateErr = e;
    }
    expect(gateErr).toBeInstanceOf(WatchOnlyLinkError);
    expect(events).toEqual([
      expect.objectContaining({ kind: 'refusal', parentTraceId: 'pt-ros2', reason: ROS2_LINK_WATCH_ONLY_REASON }),
    ]);
    expect(backend.presence).toBe('present'); // the refusal does not disturb the watching
  });

  it('a calibration capture from the watched lowstate completes; the registry fans the frames out (live metrics)', async () => {
    const b = await bridge();
    const registry = new ConnectionRegistry({ factories: defaultBackendFactories(), modelFile: '' });
    cleanups.push(() => registry.close());
    const info = await registry.addRemote(b.url, 'robot');
    await registry.connect(info.id);
    const backend = await registry.backend(info.id);
    const fanned: number[] = [];
    const unsubscribe = registry.subscribe(info.id, async (events) => {
      for (const e of events) if (e.type === 'frames') for (const f of e.frames) fanned.push(f.tick);
    });
    cleanups.push(unsubscribe);
    const link = trialRobotOf(backend, { robotUnit: 'g1-ros2', subscribe: (l) => registry.subscribe(info.id, l) });
    const result = await captureRobotCalibration({ link, profile: loadRobotProfile(), timeoutMs: 15_000 });
    if (!result.ok) throw new Error(`calibration not captured: ${result.message} ${JSON.stringify(result.reasons)}`);
    expect(result.record.robotUnit).toBe('g1-ros2');
    // The captured pose is the bridge's still pose: joint i ≈ 0.02·(i − 17) (within the 1e-4 sway).
    const jp = result.record.measured.jointPosRad;
    for (let i = 0; i < 29; i++) expect(Math.abs(jp[i] - 0.02 * (i - 17))).toBeLessThan(2e-4);

    await sleep(2200); // a full rate window
    const listed = registry.get(info.id);
    expect(listed).toMatchObject({
      kind: 'robot',
      executionDomain: 'real_robot',
      presence: 'present',
      declaredRateHz: 500,
    });
    expect(listed.rateHz).toBeGreaterThan(400);
    expect(listed.rateHz).toBeLessThan(600);
    expect(fanned.length).toBeGreaterThan(500);
    // The live figures the console shows outside trials (the idle live.frames stream, the top bar) read the same copy.
    const latest = registry.latestState(info.id);
    expect(latest).not.toBeNull();
    const figures = robotLinkFigures(registry, info.id);
    expect(figures.wbc).toBeNull(); // no g1-bridge/1 controller status on a ROS 2 link
    expect(figures.tiltRad).toBeGreaterThan(0.02); // 0.04 rad about (0.6, 0, 0.8): a 0.024 rad tilt
    expect(figures.tiltRad).toBeLessThan(0.03);
    // The registry's acquire (a trial's prepare) is refused too, with the reason.
    await expect(registry.acquire(info.id, 'run-ros2-2')).rejects.toThrow(/no g1-bridge\/1 runner/);
  });

  it('foxglove_bridge 3.x (accepts only foxglove.sdk.v1, the Foxglove SDK’s serverInfo): the same frames, watch-only, a calibration', async () => {
    const b = await bridge({ version: '3' });
    const { backend, frames, problems } = robot(b.url);
    await backend.whenPresent(5000);
    await waitFor(() => frames.length >= 300, 10_000, '300 frames');
    expect(b.connections).toEqual([FOXGLOVE_SDK_SUBPROTOCOL]);
    expect(b.refusedOffers).toEqual([]);
    expect(problems).toEqual([`watch_only: ${b.url}: ${ROS2_LINK_WATCH_ONLY_REASON}`]);
    let compared = 0;
    for (const f of frames) {
      const s = b.sent.get(f.tick);
      if (!s) continue;
      compared++;
      for (let i = 0; i < 29; i++)
        if (f.jointPosRad[i] !== s.q[i] || f.jointVelRadS[i] !== s.dq[i] || f.jointTauNm[i] !== s.tauEst[i])
          throw new Error(`tick ${f.tick} joint ${i} differs from what was sent`);
      expect(Array.from(f.imu.quatWxyz)).toEqual(Array.from(s.quat));
    }
    expect(compared).toBeGreaterThanOrEqual(300);
    expect(backend.stats()).toMatchObject({ malformed: 0, duplicate: 0, outOfOrder: 0 });
    expect(robotBackendOf(backend)?.robotLink).toMatchObject({ control: 'watchOnly' });
    expect(b.clientAdvertisements).toEqual([]);
    await expect(backend.acquire('run-ros2-sdk')).rejects.toBeInstanceOf(WatchOnlyLinkError);
    const link = trialRobotOf(backend, { robotUnit: 'g1-ros2-sdk' });
    const result = await captureRobotCalibration({ link, profile: loadRobotProfile(), timeoutMs: 15_000 });
    if (!result.ok) throw new Error(`calibration not captured: ${result.message} ${JSON.stringify(result.reasons)}`);
    for (let i = 0; i < 29; i++)
      expect(Math.abs(result.record.measured.jointPosRad[i] - 0.02 * (i - 17))).toBeLessThan(2e-4);
  });

  it('negative control: a server that accepts neither subprotocol refuses the handshake; the link says so, naming both, and never presents', async () => {
    const b = await bridge({ acceptSubprotocols: ['foxglove.websocket.v2'] });
    const { backend, frames, problems } = robot(b.url);
    await waitFor(() => problems.some((p) => p.startsWith('connect_failed')), 5000, 'the refusal');
    expect(b.refusedOffers[0]).toEqual([FOXGLOVE_SUBPROTOCOL, FOXGLOVE_SDK_SUBPROTOCOL]);
    expect(b.connections).toEqual([]);
    const refusal = problems.find((p) => p.startsWith('connect_failed'))!;
    expect(refusal).toContain('WebSocket handshake refused with HTTP 400');
    expect(refusal).toContain(`${FOXGLOVE_SUBPROTOCOL} or ${FOXGLOVE_SDK_SUBPROTOCOL}`);
    await sleep(300);
    expect(backend.presence).toBe('connecting');
    expect(frames).toEqual([]);
  });

  it('a server that does not say it is ROS but advertises unitree_hg LowState: the command channel is withdrawn, watch-only', async () => {
    const b = await bridge({ serverInfo: { supportedEncodings: ['json'], metadata: {} } });
    const { backend, frames } = robot(b.url);
    await backend.whenPresent(5000);
    await waitFor(() => frames.length >= 50, 5000, '50 frames');
    expect(b.clientAdvertisements).toEqual(['/console/command']); // advertised at serverInfo (clientPublish) …
    await waitFor(() => b.clientUnadvertisements === 1, 2000, '… and withdrawn once /lowstate showed a ROS 2 robot');
    expect(backend.robotLink).toMatchObject({ control: 'watchOnly', watchOnlyReason: ROS2_LINK_WATCH_ONLY_REASON });
    await expect(backend.acquire('run-ros2-3')).rejects.toBeInstanceOf(WatchOnlyLinkError);
  });

  it('a bridge whose advertised LowState is not unitree_hg is never subscribed: the link stays connecting with the reason', async () => {
    const reordered = lowStateDefinitionText({
      MotorState: 'uint8 mode\nfloat32 dq\nfloat32 q\nfloat32 ddq\nfloat32 tau_est\n',
    });
    const b = await bridge({ definition: reordered, writeDefinition: lowStateDefinitionText() });
    const problems: string[] = [];
    const backend = connectRobot({ url: b.url, reconnectInitialDelayMs: 200 });
    backend.setListener(async (events) => {
      for (const e of events) if (e.type === 'problem') problems.push(`${e.problem.code}: ${e.problem.message}`);
    });
    cleanups.push(() => backend.close());
    await waitFor(() => problems.some((p) => p.startsWith('unsupported_encoding')), 5000, 'the refusal');
    await sleep(300);
    expect(backend.presence).toBe('connecting');
    expect(backend.stats().received).toBe(0);
    expect(problems.find((p) => p.startsWith('unsupported_encoding'))).toMatch(
      /unitree_hg\/msg\/MotorState\.dq: comes before unitree_hg\/msg\/MotorState\.q/,
    );
  });
});
