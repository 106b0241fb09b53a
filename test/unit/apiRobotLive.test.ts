import { describe, expect, it } from 'vitest';
import { parseApiEvent, type ApiEvent, type LiveFramesEvent } from '../../src/api/contract';
import { createStateFrame } from '../../src/domain/robot/stateFrame';
import type { BackendListener } from '../../src/domain/backend/backend';
import { ApiFailure } from '../../src/services/console/apiFailure';
import { ConnectionRegistry } from '../../src/services/console/connectionRegistry';
import { EventHub } from '../../src/services/console/eventHub';
import { RobotLive, robotLinkFigures } from '../../src/services/console/robotLive';
import { FakeBackend } from '../helpers/fakeBackend';

// The live robot's feed and the emulator reset, against a registry with test doubles
// (the real emulator and Chromium are in test/e2e/liveRobot.test.ts).

function setup(emulatorControl: boolean) {
  let listener: BackendListener | null = null;
  class Robot extends FakeBackend {
    override setListener(l: BackendListener | null): void {
      listener = l;
      super.setListener(l);
    }
  }
  const registry = new ConnectionRegistry({
    modelFile: 'unused.xml',
    factories: {
      robot: ({ id }) =>
        new Robot({ id, initialPresence: 'present', executionDomain: 'real_robot', latencyMs: 1, emulatorControl }),
    },
  });
  const hub = new EventHub({ pushRateHz: 10 });
  const sent: { url: string; action: string }[] = [];
  const live = new RobotLive({
    hub,
    registry,
    sendControl: async (url, action) => {
      sent.push({ url, action: action.action });
      return { ok: true, message: 'human_reset: robot standing at the start pose (root z 0.793 m)' };
    },
  });
  const frame = async (quatWxyz: number[]) => {
    const f = createStateFrame(false);
    f.jointPosRad[3] = 0.42;
    f.imu.quatWxyz.set(quatWxyz);
    await listener!([{ type: 'frames', runId: '', frames: [f] }]);
  };
  return { registry, hub, live, sent, frame };
}

describe('RobotLive', () => {
  it("keeps the newest frame's joints and IMU tilt for the top bar and the idle live stream; nothing before a frame", async () => {
    const { registry, live, frame } = setup(false);
    const r = await registry.addRemote('ws://127.0.0.1:9100', 'robot');
    await registry.connect(r.id);
    expect(robotLinkFigures(registry, r.id)).toMatchObject({ tiltRad: null, frameGapMaxMs: null, wbc: null });
    const pitch = 0.6;
    await frame([Math.cos(pitch / 2), 0, Math.sin(pitch / 2), 0]);
    const fig = robotLinkFigures(registry, r.id);
    expect(fig.tiltRad).toBeCloseTo(pitch, 12);
    expect(fig.emulatorControl).toBe(false);
    expect(registry.latestState(r.id)!.jointPosRad[3]).toBe(0.42);
    live.close();
  });

  it("the robot's idle live stream reaches a client with the joints, and leaves two unacknowledged slots to the lights", async () => {
    const { registry, hub, live, frame } = setup(false);
    const r = await registry.addRemote('ws://127.0.0.1:9100', 'robot');
    await registry.connect(r.id);
    await frame([1, 0, 0, 0]);
    const got: ApiEvent[] = [];
    hub.attach({ send: (e) => got.push(e) }); // a client that never acknowledges
    const liveOf = () => got.filter((e): e is LiveFramesEvent => e.type === 'live.frames');
    await new Promise((res) => setTimeout(res, 200));
    expect(liveOf()).toHaveLength(1);
    expect(liveOf()[0]).toMatchObject({
      source: 'robot_idle',
      connectionId: r.id,
      runId: null,
      count: 1,
      rootPosM: null,
      ended: false,
    });
    expect(parseApiEvent(liveOf()[0])).toMatchObject({ ok: true });
    expect(liveOf()[0].jointPosRad[3]).toBe(0.42);
    // new frames: one more, then held back at 2 unacknowledged (4 − the 2 reserved)
    for (let i = 0; i < 6; i++) {
      await frame([1, 0, 0, 0]);
      await new Promise((res) => setTimeout(res, 80));
    }
    expect(liveOf()).toHaveLength(2);
    // … while a transient status still gets through
    hub.broadcastTransient(() => ({
      type: 'safety.status',
      atMs: 0,
      interlock: null,
      robots: [],
      host: { kernelAutogroups: null },
    }));
    expect(got.at(-1)?.type).toBe('safety.status');
    live.close();
  });

  it("ends a robot's idle live stream once it disconnects", async () => {
    const { registry, hub, live, frame } = setup(false);
    const a = await registry.addRemote('ws://127.0.0.1:9103', 'robot');
    await registry.connect(a.id);
    await frame([1, 0, 0, 0]);
    const got: LiveFramesEvent[] = [];
    const client = hub.attach({
      send: (e) => {
        if (e.type === 'live.frames') got.push(e);
        client.ack(e.seq);
      },
    });
    await new Promise((res) => setTimeout(res, 200));
    expect(got.map((e) => [e.connectionId, e.count, e.ended])).toEqual([[a.id, 1, false]]);
    await registry.disconnect(a.id);
    await new Promise((res) => setTimeout(res, 200));
    expect(got.map((e) => [e.connectionId, e.count, e.ended])).toEqual([
      [a.id, 1, false],
      [a.id, 0, true],
    ]);
    for (const e of got) expect(parseApiEvent(e)).toMatchObject({ ok: true });
    live.close();
  });

  it('emulatorReset sends human_reset only to a link that declares the emulator control channel', async () => {
    const emu = setup(true);
    const a = await emu.registry.addRemote('ws://127.0.0.1:9101', 'robot');
    await emu.registry.connect(a.id);
    await expect(emu.live.emulatorReset(a.id)).resolves.toMatchObject({ ok: true });
    expect(emu.sent).toEqual([{ url: 'ws://127.0.0.1:9101/', action: 'human_reset' }]);
    emu.live.close();

    // negative control: the same robot without the declaration is refused, nothing sent
    const real = setup(false);
    const b = await real.registry.addRemote('ws://127.0.0.1:9102', 'robot');
    await real.registry.connect(b.id);
    const err = await real.live.emulatorReset(b.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiFailure);
    expect(err).toMatchObject({ code: 'unsupported', message: expect.stringMatching(/put back by a person/) });
    expect(real.sent).toEqual([]);
    real.live.close();
  });
});
