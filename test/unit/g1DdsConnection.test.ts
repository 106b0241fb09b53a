import { afterEach, describe, expect, it } from 'vitest';
import { requestSchemas } from '../../src/api/contract';
import { decodeWbcStatus } from '../../src/domain/bridge/g1BridgeValidate';
import {
  ddsDomainIdProblem,
  ddsInterfaceNameProblem,
  g1DdsConnectionName,
  g1RunnerArgs,
} from '../../src/domain/g1Runner/g1DdsConnection';
import { ApiFailure } from '../../src/services/console/apiFailure';
import { ConnectionRegistry, type G1DdsContext } from '../../src/services/console/connectionRegistry';
import { runnerFigures } from '../../src/services/console/robotLive';
import { g1DdsProblem } from '../../renderer/src/connections/endpointsActions';
import { runnerStatusView } from '../../renderer/src/trial/runnerStatusView';
import type { RobotLinkStatusDto } from '../../src/api/contract';
import { FakeBackend } from '../helpers/fakeBackend';

// "G1 over DDS": what the operator types (interface, domain, gantry) checked in the page, in the
// API schema and in the registry; the runner's command line; wbc_status.runner validated where it
// enters; the Trial runner's view of it.

const RUNNER = {
  mode: 'tracking',
  lowcmd_hz: 493.2,
  lowcmd_period_p99_ms: 3.1,
  crc_errors: 0,
  remote_stop_held: false,
  lowstate_age_ms: 4.2,
  interface: 'eth0',
  domain: 0,
};
const status = (runner: unknown) => JSON.stringify({ state: 'tracking', clip_id: 'c', frame: 3, runner });

describe('G1 over DDS: interface and domain', () => {
  it('accepts lab interface names and domain ids', () => {
    for (const n of ['lo', 'eth0', 'enp3s0', 'eth0.100', 'wlx00e04c_1', 'a23456789012345']) {
      expect(ddsInterfaceNameProblem(n)).toBeNull();
    }
    for (const d of [0, 1, 232]) expect(ddsDomainIdProblem(d)).toBeNull();
    expect(g1DdsConnectionName({ interfaceName: 'eth0', domainId: 0 })).toBe('G1 over DDS (eth0, domain 0)');
  });

  it('refuses names that are not interface names, with the reason (negative controls)', () => {
    expect(ddsInterfaceNameProblem('')).toMatch(/empty/);
    expect(ddsInterfaceNameProblem('a234567890123456')).toMatch(/16 characters long, more than 15/);
    for (const n of ['eth0;reboot', '-lo', 'eth 0', 'lo"/>', '../x', 'ëth0']) {
      expect(ddsInterfaceNameProblem(n)).toMatch(/letters, digits/);
    }
    for (const d of [-1, 233, 0.5, NaN]) expect(ddsDomainIdProblem(d)).toMatch(/\[0, 232\]/);
  });

  it('the runner command line: loopback bridge, any free port, the operator declaration; never a bad name', () => {
    expect(g1RunnerArgs({ interfaceName: 'eth0', domainId: 3, afterClip: 'gantry' })).toEqual([
      'g1-runner',
      '--interface',
      'eth0',
      '--domain',
      '3',
      '--after-clip',
      'gantry',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--json',
    ]);
    expect(() => g1RunnerArgs({ interfaceName: 'lo -h 0', domainId: 0, afterClip: 'gantry' })).toThrow(
      /letters, digits/,
    );
    expect(() => g1RunnerArgs({ interfaceName: 'lo', domainId: 999, afterClip: 'gantry' })).toThrow(/\[0, 232\]/);
  });

  it('connections.addG1Dds params: the API schema refuses what the domain refuses, and an undeclared gantry', () => {
    const s = requestSchemas['connections.addG1Dds'];
    expect(s.safeParse({ interface: 'eth0', domain: 0, afterClip: 'gantry' }).success).toBe(true);
    expect(s.safeParse({ interface: 'eth0;x', domain: 0, afterClip: 'gantry' }).success).toBe(false);
    expect(s.safeParse({ interface: 'eth0', domain: 233, afterClip: 'gantry' }).success).toBe(false);
    expect(s.safeParse({ interface: 'eth0', domain: 0 }).success).toBe(false);
    expect(s.safeParse({ interface: 'eth0', domain: 0, afterClip: 'hanging' }).success).toBe(false);
    expect(
      s.safeParse({ interface: 'eth0', domain: 0, afterClip: 'standing_policy', standingPolicy: '/p/v0' }).success,
    ).toBe(true);
    expect(
      s.safeParse({ interface: 'eth0', domain: 0, afterClip: 'standing_policy', standingPolicy: '' }).success,
    ).toBe(false);
  });

  it('the page form: nothing typed is no complaint; the gantry must be declared', () => {
    expect(g1DdsProblem('', '0', false)).toEqual({ problem: null, field: null, spec: null });
    expect(g1DdsProblem('eth0;x', '0', true).field).toBe('interface');
    expect(g1DdsProblem('eth0', '0', false).field).toBe('gantry');
    expect(g1DdsProblem('eth0', '0', false).problem).toMatch(/gantry/);
    expect(g1DdsProblem('eth0', 'x', true).problem).toMatch(/domain id/);
    expect(g1DdsProblem('eth0', '', true).problem).toMatch(/domain id/);
    expect(g1DdsProblem(' eth0 ', '7', true)).toEqual({
      problem: null,
      field: null,
      spec: { interface: 'eth0', domain: 7, afterClip: 'gantry' },
    });
  });

  it('the page form: a standing controller needs its folder (negative control: without one it is refused)', () => {
    expect(g1DdsProblem('eth0', '0', false, { on: true, folder: ' ' }).field).toBe('standing');
    expect(g1DdsProblem('eth0', '0', false, { on: true, folder: '/data/v0' }).spec).toEqual({
      interface: 'eth0',
      domain: 0,
      afterClip: 'standing_policy',
      standingPolicy: '/data/v0',
    });
    expect(
      g1RunnerArgs({ interfaceName: 'lo', domainId: 0, afterClip: 'standing_policy', standingPolicyPath: '/data/v0' }),
    ).toEqual(expect.arrayContaining(['--after-clip', 'standing_policy', '--standing-policy', '/data/v0']));
    expect(() => g1RunnerArgs({ interfaceName: 'lo', domainId: 0, afterClip: 'standing_policy' })).toThrow(/folder/);
    expect(() =>
      g1RunnerArgs({ interfaceName: 'lo', domainId: 0, afterClip: 'standing_policy', standingPolicyPath: '--help' }),
    ).toThrow(/"-"/);
  });
});

describe('G1 over DDS: the registry entry', () => {
  let registry: ConnectionRegistry | null = null;
  afterEach(async () => {
    await registry?.close();
    registry = null;
  });

  it('starts the runner through the g1Dds factory, lists it as a robot, closes it on remove; duplicates refused', async () => {
    const started: G1DdsContext[] = [];
    const closed: string[] = [];
    registry = new ConnectionRegistry({
      modelFile: '/models/g1.xml',
      factories: {
        g1Dds: async (ctx) => {
          started.push(ctx);
          const backend = new FakeBackend({ id: ctx.id, presentAfterMs: 0, executionDomain: 'real_robot' });
          const close = backend.close.bind(backend);
          backend.close = async () => {
            closed.push(ctx.id);
            await close();
          };
          return { backend, runnerUrl: 'ws://127.0.0.1:40001' };
        },
      },
    });
    const info = await registry.addG1Dds({ interfaceName: 'lo', domainId: 5, afterClip: 'gantry' });
    expect(started).toEqual([
      { id: info.id, interfaceName: 'lo', domainId: 5, afterClip: 'gantry', interlockTripSocket: null },
    ]);
    expect(info).toMatchObject({
      kind: 'robot',
      name: 'G1 over DDS (lo, domain 5)',
      url: null,
      active: true,
      available: true,
      dds: { interface: 'lo', domain: 5, runnerUrl: 'ws://127.0.0.1:40001' },
    });
    const dup = await registry.addG1Dds({ interfaceName: 'lo', domainId: 5, afterClip: 'gantry' }).catch((e) => e);
    expect(dup).toBeInstanceOf(ApiFailure);
    expect((dup as ApiFailure).message).toMatch(/already listed/);
    await registry.disconnect(info.id);
    expect(closed).toEqual([info.id]);
    expect(registry.get(info.id).dds).toEqual({ interface: 'lo', domain: 5, runnerUrl: null });
    await registry.connect(info.id);
    expect(started).toHaveLength(2);
    await registry.remove(info.id);
    expect(closed).toEqual([info.id, info.id]);
  });

  it('gives every runner it starts the console’s e-stop socket; a second runner at once is refused (negative control)', async () => {
    const started: G1DdsContext[] = [];
    registry = new ConnectionRegistry({
      modelFile: '/models/g1.xml',
      runnerEstopSocket: '/tmp/mb-estop-x/runner-estop.sock',
      factories: {
        g1Dds: async (ctx) => {
          started.push(ctx);
          return {
            backend: new FakeBackend({ id: ctx.id, presentAfterMs: 0, executionDomain: 'real_robot' }),
            runnerUrl: 'ws://127.0.0.1:40001',
          };
        },
      },
    });
    const a = await registry.addG1Dds({ interfaceName: 'lo', domainId: 5, afterClip: 'gantry' });
    expect(started.map((c) => c.interlockTripSocket)).toEqual(['/tmp/mb-estop-x/runner-estop.sock']);
    // A second "G1 over DDS" while the first runs: listed, its runner refused with the reason.
    const b = await registry.addG1Dds({ interfaceName: 'lo', domainId: 6, afterClip: 'gantry' });
    expect(started).toHaveLength(1);
    expect(b.active).toBe(false);
    const refused = await registry.connect(b.id).catch((e) => e);
    expect(refused).toBeInstanceOf(ApiFailure);
    expect((refused as ApiFailure).message).toMatch(/e-stop socket serves one runner at a time: disconnect it first/);
    // Once the first is disconnected, the second gets the socket.
    await registry.disconnect(a.id);
    await registry.connect(b.id);
    expect(started.map((c) => c.id)).toEqual([a.id, b.id]);
    expect(started[1].interlockTripSocket).toBe('/tmp/mb-estop-x/runner-estop.sock');
    expect(
      g1RunnerArgs({ interfaceName: 'lo', domainId: 5, afterClip: 'gantry', interlockTripSocket: '/s.sock' }),
    ).toEqual(expect.arrayContaining(['--interlock-trips', '/s.sock']));
    expect(
      g1RunnerArgs({ interfaceName: 'lo', domainId: 5, afterClip: 'gantry', interlockTripSocket: null }),
    ).not.toContain('--interlock-trips');
  });

  it('refuses a bad interface or domain before any runner starts, and is unavailable without the factory', async () => {
    let calls = 0;
    registry = new ConnectionRegistry({
      modelFile: '/models/g1.xml',
      factories: {
        g1Dds: async () => {
          calls++;
          throw new Error('not reached');
        },
      },
    });
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const bad = await registry.addG1Dds({ interfaceName: 'lo;x', domainId: 0, afterClip: 'gantry' }).catch((e) => e);
    const refusedMs = performance.now() - t0;
    const rssDeltaMiB = (process.memoryUsage().rss - rss0) / 2 ** 20;
    console.log(`addG1Dds refused a bad interface in ${refusedMs.toFixed(2)} ms, RSS +${rssDeltaMiB.toFixed(2)} MiB`);
    expect(refusedMs).toBeLessThan(50);
    expect(rssDeltaMiB).toBeLessThan(8);
    expect((bad as ApiFailure).code).toBe('bad_params');
    expect((bad as ApiFailure).message).toMatch(/^connections\.addG1Dds: params\.interface: /);
    const dom = await registry.addG1Dds({ interfaceName: 'lo', domainId: 300, afterClip: 'gantry' }).catch((e) => e);
    expect((dom as ApiFailure).message).toMatch(/params\.domain/);
    expect(calls).toBe(0);
    // A runner that fails to start: the entry stays, with the reason.
    const failed = await registry.addG1Dds({ interfaceName: 'eth9', domainId: 0, afterClip: 'gantry' });
    expect(calls).toBe(1);
    expect(failed.problems[0]).toMatchObject({ code: 'backend_create_failed' });
    expect(failed.problems[0].message).toContain('not reached');

    const none = new ConnectionRegistry({ modelFile: '/m.xml', factories: {} });
    const e = await none.addG1Dds({ interfaceName: 'lo', domainId: 0, afterClip: 'gantry' });
    expect(e.available).toBe(false);
    await none.close();
  });
});

describe('wbc_status.runner: validated where it enters', () => {
  it('accepts a runner status and maps it to the console figures', () => {
    const r = decodeWbcStatus(status(RUNNER));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.runner).toEqual(RUNNER);
    expect(runnerFigures(r.value.runner!)).toEqual({
      mode: 'tracking',
      lowcmdHz: 493.2,
      lowcmdPeriodP99Ms: 3.1,
      crcErrors: 0,
      remoteStopHeld: false,
      lowstateAgeMs: 4.2,
      interface: 'eth0',
      domain: 0,
      motionSwitcher: null,
    });
    // The motion switcher's last answer passes through; a malformed one is refused with its field.
    const ms = {
      answer: 'mode',
      mode: 'ai',
      allowed: false,
      detail: 'g1-runner: motion switcher: "ai" owns the motors',
    };
    const withMs = decodeWbcStatus(status({ ...RUNNER, motion_switcher: ms }));
    expect(withMs.ok && runnerFigures(withMs.value.runner!).motionSwitcher).toEqual(ms);
    const badMs = decodeWbcStatus(status({ ...RUNNER, motion_switcher: { ...ms, answer: 'maybe' } }));
    expect(badMs.ok ? '' : badMs.reason).toMatch(/runner\.motion_switcher\.answer: must be one of free, mode/);
    // Absent (a simulator, the emulator): still a valid status.
    const plain = decodeWbcStatus(JSON.stringify({ state: 'idle', clip_id: null, frame: null }));
    expect(plain.ok && plain.value.runner).toBeUndefined();
  });

  it('refuses a malformed runner status with the field named (negative controls)', () => {
    const cases: [unknown, RegExp][] = [
      [{ ...RUNNER, mode: 'flying' }, /runner\.mode: must be one of damping, ramping, holding, tracking/],
      [{ ...RUNNER, lowcmd_hz: -1 }, /runner\.lowcmd_hz/],
      [{ ...RUNNER, lowcmd_hz: 'fast' }, /runner\.lowcmd_hz: must be a finite number/],
      [{ ...RUNNER, crc_errors: 1.5 }, /runner\.crc_errors: must be an integer/],
      [{ ...RUNNER, remote_stop_held: 1 }, /runner\.remote_stop_held: must be true or false/],
      [{ ...RUNNER, lowstate_age_ms: undefined }, /runner\.lowstate_age_ms: is required/],
      [{ ...RUNNER, domain: 233 }, /runner\.domain/],
      [{ ...RUNNER, interface: 'x'.repeat(1000) }, /runner\.interface: is 1000 characters long/],
      ['damping', /runner: must be an object/],
    ];
    for (const [runner, re] of cases) {
      const r = decodeWbcStatus(status(runner));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(re);
    }
  });
});

describe('Trial runner: the runner figures', () => {
  const link = (runner: RobotLinkStatusDto['runner']): RobotLinkStatusDto =>
    ({ connectionId: 'robot-1', name: 'G1', runner }) as RobotLinkStatusDto;
  const fig = runnerFigures(RUNNER as never);

  it('nothing for a link that is not a runner', () => {
    expect(runnerStatusView(null)).toBeNull();
    expect(runnerStatusView(link(null))).toBeNull();
    expect(runnerStatusView(link(undefined))).toBeNull();
  });

  it('a healthy runner: mode, rate, CRC, remote, lowstate age, DDS', () => {
    const v = runnerStatusView(link(fig))!;
    expect(v.map((f) => [f.key, f.value, f.tone])).toEqual([
      ['mode', 'TRACKING', 'ok'],
      ['lowcmd', '493 Hz', 'ok'],
      ['crc', '0', 'ok'],
      ['remote', 'released', 'ok'],
      ['lowstate', '4.2 ms', 'ok'],
      ['dds', 'eth0 · 0', 'muted'],
    ]);
  });

  it('shows the motion switcher: a mode owning the motors red, no mode green, silence amber', () => {
    const sw = (answer: 'free' | 'mode' | 'no_answer', allowed: boolean) =>
      runnerStatusView(
        link({ ...fig, motionSwitcher: { answer, mode: answer === 'mode' ? 'ai' : null, allowed, detail: 'd' } }),
      )!.find((f) => f.key === 'switcher')!;
    expect([sw('mode', false).value, sw('mode', false).tone]).toEqual(['MODE ai', 'bad']);
    expect([sw('free', true).value, sw('free', true).tone]).toEqual(['no mode', 'ok']);
    expect([sw('no_answer', true).value, sw('no_answer', true).tone]).toEqual(['no answer', 'warn']);
    // Negative control: before any answer there is no such figure.
    expect(runnerStatusView(link(fig))!.some((f) => f.key === 'switcher')).toBe(false);
  });

  it('flags damping, a slow command rate, CRC errors, the remote stop and an old lowstate', () => {
    const v = runnerStatusView(
      link({ ...fig, mode: 'damping', lowcmdHz: 250, crcErrors: 3, remoteStopHeld: true, lowstateAgeMs: 140 }),
    )!;
    const tone = Object.fromEntries(v.map((f) => [f.key, f.tone]));
    expect(tone).toMatchObject({ mode: 'warn', lowcmd: 'warn', crc: 'bad', remote: 'bad', lowstate: 'bad' });
    expect(v.find((f) => f.key === 'remote')!.value).toBe('L2+B HELD');
    expect(runnerStatusView(link({ ...fig, lowstateAgeMs: 60 }))!.find((f) => f.key === 'lowstate')!.tone).toBe('warn');
    expect(runnerStatusView(link({ ...fig, lowstateAgeMs: null, lowcmdHz: null }))!.map((f) => f.value)).toContain(
      'none',
    );
  });
});
