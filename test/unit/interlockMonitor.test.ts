import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ConsoleWatchdog,
  InterlockDeviceModel,
  InterlockMonitor,
  LineFramer,
  formatConsoleMessage,
  formatDeviceMessage,
  isTrippedState,
  type ConsoleMessage,
  type DeviceMessage,
  type InterlockState,
  type InterlockTrip,
  type MonitorEffect,
} from '../../src/domain/interlock';

// The console-side interlock state machine, driven deterministically: time is a number, the box
// is the pure device model (or hand-written lines), and the "wire" delays each line by a fixed
// one-way latency.

class CoSim {
  readonly monitor: InterlockMonitor;
  readonly device = new InterlockDeviceModel();
  t = 0;
  /** true: the box answers; false: it is silent (still listening). */
  talking = true;
  toDevice: { at: number; msg: ConsoleMessage }[] = [];
  toConsole: { at: number; line: string }[] = [];
  effects: MonitorEffect[] = [];
  sent: ConsoleMessage[] = [];

  constructor(
    readonly latencyMs = 0.5,
    options: ConstructorParameters<typeof InterlockMonitor>[0] = {},
  ) {
    this.monitor = new InterlockMonitor(options);
  }

  get trips(): InterlockTrip[] {
    return this.effects.flatMap((e) => (e.type === 'trip' ? [e.trip] : []));
  }

  apply(fx: MonitorEffect[]): MonitorEffect[] {
    this.effects.push(...fx);
    for (const e of fx) {
      if (e.type === 'send') {
        this.sent.push(e.message);
        this.toDevice.push({ at: this.t + this.latencyMs, msg: e.message });
      }
    }
    return fx;
  }

  open(): void {
    this.apply(this.monitor.portOpened(this.t));
  }

  deviceSays(messages: DeviceMessage[]): void {
    if (!this.talking) return;
    for (const m of messages)
      this.toConsole.push({ at: this.t + this.latencyMs, line: formatDeviceMessage(m).trimEnd() });
  }

  /** Advances time in steps of `stepMs`, ticking both sides and delivering lines when due. */
  run(ms: number, stepMs = 1): void {
    const end = this.t + ms;
    while (this.t < end - 1e-9) {
      this.t = Math.min(end, this.t + stepMs);
      const due = this.toDevice.filter((x) => x.at <= this.t);
      this.toDevice = this.toDevice.filter((x) => x.at > this.t);
      for (const { msg } of due) this.deviceSays(this.device.onLine(formatConsoleMessage(msg).trimEnd(), this.t));
      this.deviceSays(this.device.tick(this.t));
      const lines = this.toConsole.filter((x) => x.at <= this.t);
      this.toConsole = this.toConsole.filter((x) => x.at > this.t);
      for (const { line } of lines) this.apply(this.monitor.onLine(line, this.t));
      this.apply(this.monitor.tick(this.t));
    }
  }

  arm(): MonitorEffect[] {
    return this.apply(this.monitor.requestArm(this.t));
  }

  disarm(): MonitorEffect[] {
    return this.apply(this.monitor.requestDisarm(this.t));
  }

  line(text: string): MonitorEffect[] {
    return this.apply(this.monitor.onLine(text, this.t));
  }

  armResult(): MonitorEffect | undefined {
    return this.effects.filter((e) => e.type === 'arm').at(-1);
  }
}

const armedSim = (latencyMs = 0.5): CoSim => {
  const s = new CoSim(latencyMs);
  s.open();
  s.run(50);
  s.arm();
  s.run(30);
  expect(s.monitor.state).toBe('armed');
  return s;
};

describe('interlock monitor: heartbeat and freshness', () => {
  it('heartbeats every 20 ms on a drift-free schedule and is safe once answered', () => {
    const s = new CoSim(0.5);
    expect(s.monitor.state).toBe('disconnected');
    s.open();
    s.run(200, 0.25);
    const hbs = s.sent.filter((m) => m.kind === 'heartbeat');
    expect(hbs.map((m) => (m as { seq: number }).seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(s.monitor.state).toBe('safe');
    const snap = s.monitor.snapshot(s.t);
    expect(snap.freshness.lastAnsweredSeq).toBe(10); // HB 11 went out at 200 ms, its answer is still on the wire
    expect(snap.freshness.rttMs).toBeCloseTo(1.0, 9); // 2 × 0.5 ms one way
    expect(snap.freshness.rttP99Ms).toBeCloseTo(1.0, 9);
    expect(snap.counters.heartbeatSlotsMissed).toBe(0);
    expect(s.monitor.isArmedAndFresh(s.t)).toBe(false);
  });

  it('keeps to the slots under jittery ticks and skips (counts) slots a late tick overtook, without a burst', () => {
    const m = new InterlockMonitor();
    const sentAt: number[] = [];
    const take = (fx: MonitorEffect[], t: number) =>
      fx.forEach((e) => e.type === 'send' && e.message.kind === 'heartbeat' && sentAt.push(t));
    take(m.portOpened(1000), 1000);
    for (const t of [1003, 1021.5, 1039.9, 1040.2, 1064, 1099]) take(m.tick(t), t);
    // slots 1000, 1020, 1040, 1060, 1080: 1021.5 → slot 1020; 1040.2 → slot 1040; 1064 → slot 1060; 1099 → 1080.
    expect(sentAt).toEqual([1000, 1021.5, 1040.2, 1064, 1099]);
    take(m.tick(1165), 1165); // slots 1100, 1120, 1140 overtaken; 1160 is served once
    expect(sentAt.at(-1)).toBe(1165);
    expect(sentAt.length).toBe(6);
    expect(m.snapshot(1165).counters.heartbeatSlotsMissed).toBe(3);
    // (no box answered: the 1165 tick also tripped for silence; the next wake is the next slot)
    expect(m.state).toBe('lost');
    expect(m.nextWakeMs()).toBe(1180);
  });

  it('answers isArmedAndFresh from the status age at the query time, not from the last tick', () => {
    const s = armedSim();
    const last = s.monitor.snapshot(s.t).freshness.lastStatusAtMs!;
    expect(s.monitor.isArmedAndFresh(last + 100)).toBe(true);
    expect(s.monitor.isArmedAndFresh(last + 100.001)).toBe(false);
  });
});

describe('interlock monitor: arming', () => {
  it('arms only on an operator request the box confirms', () => {
    const s = new CoSim();
    s.arm();
    expect(s.armResult()).toMatchObject({ ok: false, reason: 'not_open' });
    s.open();
    s.arm();
    expect(s.armResult()).toMatchObject({ ok: false, reason: 'not_safe' });
    s.run(50);
    s.arm();
    expect(s.sent.at(-1)).toEqual({ kind: 'arm' });
    s.arm();
    expect(s.armResult()).toMatchObject({ ok: false, reason: 'busy' });
    s.run(25);
    expect(s.armResult()).toMatchObject({ ok: true });
    expect(s.monitor.state).toBe('armed');
    expect(s.monitor.isArmedAndFresh(s.t)).toBe(true);
    s.arm();
    expect(s.armResult()).toMatchObject({ ok: false, reason: 'busy' });
  });

  it('times out when the box does not arm, sends DISARM, and never adopts a late ARMED', () => {
    const m = new InterlockMonitor();
    const fx: MonitorEffect[] = [];
    fx.push(...m.portOpened(0));
    fx.push(...m.onLine('ST SAFE 1', 1));
    fx.push(...m.requestArm(2));
    for (let t = 3; t <= 260; t++) {
      const tick = m.tick(t);
      fx.push(...tick);
      for (const e of tick)
        if (e.type === 'send' && e.message.kind === 'heartbeat')
          fx.push(...m.onLine(`ST SAFE ${e.message.seq}`, t + 0.5));
    }
    const arm = fx.filter((e) => e.type === 'arm');
    expect(arm).toHaveLength(1);
    expect(arm[0]).toMatchObject({ ok: false, reason: 'timeout', atMs: 253 });
    expect(fx.filter((e) => e.type === 'send' && e.message.kind === 'disarm')).toHaveLength(1);
    // the box arms late: counted, disarmed (≥ 60 ms after the last DISARM), never "armed"
    m.tick(320);
    const late = m.onLine(`ST ARMED ${m.snapshot(320).freshness.lastSentSeq}`, 320.5);
    expect(late).toContainEqual(expect.objectContaining({ type: 'problem', problem: 'unsolicited_armed' }));
    expect(late).toContainEqual({ type: 'send', message: { kind: 'disarm' } });
    expect(m.state).toBe('safe');
    expect(m.isArmedAndFresh(321)).toBe(false);
  });

  it('refuses to arm on a stale SAFE', () => {
    const m = new InterlockMonitor();
    m.portOpened(0);
    m.onLine('ST SAFE 1', 1);
    // no tick: status is 100.5 ms old, silence not yet judged
    expect(m.requestArm(101.5)).toContainEqual(expect.objectContaining({ type: 'arm', ok: false, reason: 'stale' }));
  });
});

describe('interlock monitor: trips', () => {
  it('EV ESTOP trips at once, wasArmed; re-arming needs EV RESET, SAFE and an operator ARM', () => {
    const s = armedSim();
    s.device.pressEstop(); // the box is now ESTOP; its EV ESTOP line is delivered by hand:
    const fx = s.line('EV ESTOP');
    expect(fx[0]).toMatchObject({
      type: 'trip',
      trip: { reason: 'estop_event', fromState: 'armed', toState: 'estop', wasArmed: true },
    });
    expect(s.monitor.isArmedAndFresh(s.t)).toBe(false);
    s.run(100);
    expect(s.monitor.state).toBe('estop');
    expect(s.trips).toHaveLength(1); // ST ESTOP that follows is no second trip
    s.deviceSays(s.device.releaseEstop());
    s.run(100);
    expect(s.monitor.state).toBe('safe');
    expect(s.monitor.snapshot(s.t).lastEvent?.event).toBe('RESET');
    expect(s.monitor.isArmedAndFresh(s.t)).toBe(false);
    expect(s.sent.filter((m) => m.kind === 'arm')).toHaveLength(1);
    s.arm();
    s.run(30);
    expect(s.monitor.state).toBe('armed');
    expect(s.monitor.isArmedAndFresh(s.t)).toBe(true);
  });

  it('ST ESTOP trips (status_estop), whatever its seq', () => {
    const s = armedSim();
    const fx = s.line('ST ESTOP 1'); // an old seq: counted stale, still obeyed
    expect(fx).toContainEqual(expect.objectContaining({ type: 'problem', problem: 'stale_seq' }));
    expect(fx[0]).toMatchObject({ type: 'trip', trip: { reason: 'status_estop', wasArmed: true } });
    expect(s.monitor.state).toBe('estop');
  });

  it('trips for silence at the first tick more than 100 ms after the last counted status', () => {
    const s = armedSim(0.5);
    s.talking = false;
    const last = s.monitor.snapshot(s.t).freshness.lastStatusAtMs!;
    expect(s.monitor.nextWakeMs()).toBeLessThanOrEqual(last + 100);
    s.run(150, 0.1);
    expect(s.trips).toHaveLength(1);
    const trip = s.trips[0];
    expect(trip).toMatchObject({ reason: 'silence', fromState: 'armed', toState: 'lost', wasArmed: true });
    expect(trip.sinceLastStatusMs!).toBeGreaterThan(100);
    expect(trip.sinceLastStatusMs!).toBeLessThanOrEqual(100.1 + 1e-9);
    // the box may still be armed (it hears our heartbeats): DISARM goes out with the trip
    expect(s.device.state).toBe('SAFE');
  });

  it('after a silence trip, a box still reporting ARMED is disarmed and the state stays tripped until SAFE', () => {
    const m = new InterlockMonitor();
    m.portOpened(0);
    m.onLine('ST SAFE 1', 0.5);
    m.requestArm(1);
    m.tick(20);
    m.onLine('ST ARMED 2', 20.5);
    expect(m.state).toBe('armed');
    const trip = m.tick(121);
    expect(trip[0]).toMatchObject({ type: 'trip', trip: { reason: 'silence' } });
    expect(trip).toContainEqual({ type: 'send', message: { kind: 'disarm' } });
    m.tick(140); // the heartbeat of slot 140
    const back = m.onLine(`ST ARMED ${m.snapshot(140).freshness.lastSentSeq}`, 140.5);
    expect(back).toContainEqual(expect.objectContaining({ type: 'problem', problem: 'unsolicited_armed' }));
    expect(back.some((e) => e.type === 'send')).toBe(false); // rate limited: the trip's DISARM was 19.5 ms ago
    expect(m.state).toBe('lost');
    expect(m.isArmedAndFresh(141)).toBe(false);
    m.tick(160);
    expect(m.onLine(`ST ARMED ${m.snapshot(160).freshness.lastSentSeq}`, 190)).toContainEqual({
      type: 'send',
      message: { kind: 'disarm' },
    });
    m.tick(200);
    m.onLine(`ST SAFE ${m.snapshot(200).freshness.lastSentSeq}`, 200.5);
    expect(m.state).toBe('safe');
  });

  it('opening onto a box that is already ARMED (a previous console) disarms it and never reports armed', () => {
    const m = new InterlockMonitor();
    const fx = m.portOpened(0);
    expect(fx).toContainEqual({ type: 'send', message: { kind: 'heartbeat', seq: 1 } });
    expect(m.onLine('ST ARMED 1', 0.5)).toContainEqual({ type: 'send', message: { kind: 'disarm' } });
    expect(m.state).toBe('disconnected');
    expect(m.isArmedAndFresh(1)).toBe(false);
    expect(m.requestArm(1)).toContainEqual(expect.objectContaining({ type: 'arm', ok: false, reason: 'not_safe' }));
    m.tick(20);
    m.onLine('ST SAFE 2', 20.5);
    expect(m.state).toBe('safe');
  });

  it('trips from disconnected when the box never answers', () => {
    const m = new InterlockMonitor();
    m.portOpened(0);
    expect(m.tick(100)).not.toContainEqual(expect.objectContaining({ type: 'trip' }));
    expect(m.tick(100.5)[0]).toMatchObject({
      type: 'trip',
      trip: { reason: 'silence', fromState: 'disconnected', wasArmed: false, lastStatusAtMs: null },
    });
  });

  it('port closed or failed under us trips to lost; closing it ourselves trips only when armed', () => {
    for (const [cause, reason] of [
      ['closed', 'port_closed'],
      ['error', 'port_error'],
    ] as const) {
      const s = armedSim();
      const fx = s.apply(s.monitor.portClosed(s.t, cause, 'gone'));
      expect(fx[0]).toMatchObject({ type: 'trip', trip: { reason, toState: 'lost', wasArmed: true } });
      expect(s.monitor.isArmedAndFresh(s.t)).toBe(false);
      expect(s.monitor.nextWakeMs()).toBeNull();
      expect(s.monitor.tick(s.t + 1000)).toEqual([]);
    }
    const a = armedSim();
    expect(a.monitor.portClosed(a.t, 'console')[0]).toMatchObject({
      type: 'trip',
      trip: { reason: 'closed_by_console', toState: 'disconnected' },
    });
    const b = new CoSim();
    b.open();
    b.run(50);
    expect(b.monitor.portClosed(b.t, 'console')).toEqual([
      { type: 'state', from: 'safe', to: 'disconnected', atMs: b.t },
    ]);
  });

  it('a box that drops to SAFE on its own while armed is a trip (device_disarmed)', () => {
    const s = armedSim();
    s.talking = false;
    s.run(20);
    const next = s.monitor.snapshot(s.t).freshness.lastSentSeq!;
    const trip = s.line(`ST SAFE ${next}`);
    expect(trip[0]).toMatchObject({
      type: 'trip',
      trip: { reason: 'device_disarmed', fromState: 'armed', toState: 'safe', wasArmed: true },
    });
  });
});

describe('interlock monitor: disarming', () => {
  it('closes the gate at once and completes when the box reports SAFE', () => {
    const s = armedSim();
    s.disarm();
    expect(s.monitor.isArmedAndFresh(s.t)).toBe(false);
    expect(s.monitor.snapshot(s.t).disarmPending).toBe(true);
    s.run(30);
    expect(s.effects.filter((e) => e.type === 'disarm').at(-1)).toMatchObject({ ok: true });
    expect(s.monitor.state).toBe('safe');
    expect(s.trips).toHaveLength(0);
  });

  it('a box that will not disarm is a trip (disarm_timeout)', () => {
    const m = new InterlockMonitor();
    m.portOpened(0);
    m.onLine('ST SAFE 1', 0.5);
    m.requestArm(1);
    const fx: MonitorEffect[] = [];
    for (let t = 2; t <= 400; t++) {
      const tick = m.tick(t);
      fx.push(...tick);
      if (t === 30) fx.push(...m.requestDisarm(t));
      for (const e of tick)
        if (e.type === 'send' && e.message.kind === 'heartbeat')
          fx.push(...m.onLine(`ST ARMED ${e.message.seq}`, t + 0.5));
    }
    expect(fx.filter((e) => e.type === 'disarm')[0]).toMatchObject({ ok: false, reason: 'timeout' });
    expect(fx.find((e) => e.type === 'trip')).toMatchObject({ trip: { reason: 'disarm_timeout', wasArmed: false } });
    expect(m.isArmedAndFresh(400)).toBe(false);
    // DISARM keeps going out, rate-limited (≥ 60 ms apart)
    expect(fx.filter((e) => e.type === 'send' && e.message.kind === 'disarm').length).toBeGreaterThanOrEqual(3);
  });
});

describe('interlock monitor: bad input', () => {
  it('counts garbage and bad statuses without changing state or freshness', () => {
    const s = armedSim();
    s.run(5); // the last heartbeat is answered
    const before = s.monitor.snapshot(s.t);
    const sent = before.freshness.lastSentSeq!;
    const junk = [
      'hello',
      '',
      'ST MAYBE 3',
      'ST ARMED -1',
      'EV BOOM',
      `ST ARMED ${sent}`,
      `ST ARMED ${sent + 5}`,
      'ST ARMED 1',
    ];
    for (const j of junk) s.line(j);
    s.apply(s.monitor.onFramed(new LineFramer().push(new TextEncoder().encode(`${'x'.repeat(100)}\n`)), s.t));
    const after = s.monitor.snapshot(s.t);
    expect(after.state).toBe('armed');
    expect(after.freshness.lastStatusAtMs).toBe(before.freshness.lastStatusAtMs);
    expect(after.counters.garbageLines - before.counters.garbageLines).toBe(6);
    expect(after.counters.problems).toMatchObject({
      unknown_keyword: 1,
      empty: 1,
      bad_state: 1,
      bad_seq: 1,
      bad_event: 1,
      overlong: 1,
      stale_seq: 2,
      unknown_seq: 1,
    });
    expect(s.trips).toHaveLength(0);
  });

  it('a box stuck echoing one seq is lost after 100 ms', () => {
    const m = new InterlockMonitor();
    m.portOpened(0);
    m.onLine('ST SAFE 1', 0.5);
    let tripped: MonitorEffect | undefined;
    let at = 0;
    for (let t = 1; t < 200 && !tripped; t++) {
      tripped = [...m.tick(t), ...m.onLine('ST SAFE 1', t + 0.1)].find((e) => e.type === 'trip');
      at = t;
    }
    expect(tripped).toMatchObject({ trip: { reason: 'silence' } });
    expect(at).toBe(101);
    expect(m.snapshot(at).counters.problems.stale_seq).toBe(101);
  });

  it('ignores an answer to a heartbeat sent more than 100 ms ago (late_status)', () => {
    const m = new InterlockMonitor({ timings: { silenceLimitMs: 100 } });
    m.portOpened(0); // HB 1 at 0
    m.onLine('ST SAFE 1', 0.5);
    m.tick(20); // HB 2 at 20
    expect(m.onLine('ST SAFE 2', 120.5)).toContainEqual(expect.objectContaining({ problem: 'late_status' }));
  });

  it('crosses the uint32 seq wrap', () => {
    const s = new CoSim(0.5, { firstSeq: 0xfffffffe });
    s.open();
    s.run(100);
    expect(s.sent.slice(0, 3)).toEqual([
      { kind: 'heartbeat', seq: 0xfffffffe },
      { kind: 'heartbeat', seq: 0xffffffff },
      { kind: 'heartbeat', seq: 0 },
    ]);
    expect(s.monitor.state).toBe('safe');
    expect(s.monitor.snapshot(s.t).counters.problems.stale_seq).toBe(0);
  });
});

describe('interlock monitor: properties', () => {
  type Act =
    | { k: 'tick'; dt: number }
    | { k: 'line'; text: string; dt: number }
    | { k: 'answer'; state: 'SAFE' | 'ARMED' | 'ESTOP'; back: number; dt: number }
    | { k: 'arm' }
    | { k: 'armFlow' }
    | { k: 'disarm' }
    | { k: 'close'; cause: 'closed' | 'error' | 'console' }
    | { k: 'open' };
  const act: fc.Arbitrary<Act> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({ k: fc.constant('tick' as const), dt: fc.double({ min: 0, max: 120, noNaN: true }) }),
    },
    {
      weight: 8,
      arbitrary: fc.record({
        k: fc.constant('answer' as const),
        state: fc.constantFrom('SAFE', 'ARMED', 'ARMED', 'ESTOP' as const),
        back: fc.constantFrom(0, 0, 0, 1, 3),
        dt: fc.double({ min: 0, max: 40, noNaN: true }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant('line' as const),
        text: fc.constantFrom('EV ESTOP', 'EV RESET', 'ST ARMED 0', 'garbage', 'ST ARMED 99999', ''),
        dt: fc.double({ min: 0, max: 10, noNaN: true }),
      }),
    },
    { weight: 4, arbitrary: fc.record({ k: fc.constant('arm' as const) }) },
    // an operator arming a healthy box: SAFE answered, ARM, ARMED answered to the next heartbeat
    { weight: 2, arbitrary: fc.record({ k: fc.constant('armFlow' as const) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('disarm' as const) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant('close' as const),
        cause: fc.constantFrom('closed', 'error', 'console' as const),
      }),
    },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('open' as const) }) },
  );

  it('never lets isArmedAndFresh hold without an operator-armed, fresh ARMED, and trips on every entry into estop/lost', () => {
    let armedSeen = 0;
    fc.assert(
      fc.property(fc.array(act, { minLength: 20, maxLength: 150 }), (acts) => {
        const m = new InterlockMonitor();
        let t = 0;
        let open = true;
        m.portOpened(0);
        let lastArmOkAt = -Infinity;
        let lastTripAt = -Infinity;
        let lastArmedStatusAt = -Infinity;
        const check = (fx: MonitorEffect[]): void => {
          for (const e of fx) {
            if (e.type === 'arm' && e.ok) lastArmOkAt = e.atMs;
            if (e.type === 'trip') lastTripAt = e.trip.atMs;
            if (e.type === 'status') lastArmedStatusAt = e.state === 'ARMED' ? e.atMs : -Infinity;
            if (e.type === 'state' && isTrippedState(e.to) && !isTrippedState(e.from)) {
              expect(fx.some((x) => x.type === 'trip' && x.trip.toState === e.to)).toBe(true);
            }
          }
          if (m.isArmedAndFresh(t)) {
            armedSeen++;
            expect(open).toBe(true);
            expect(m.state).toBe('armed');
            expect(lastArmOkAt).toBeGreaterThanOrEqual(lastTripAt);
            expect(t - lastArmedStatusAt).toBeLessThanOrEqual(100);
          }
          if (isTrippedState(m.state as InterlockState) || !open) expect(m.isArmedAndFresh(t)).toBe(false);
        };
        for (const a of acts) {
          switch (a.k) {
            case 'tick':
              t += a.dt;
              check(m.tick(t));
              break;
            case 'answer': {
              // time passes (heartbeats go out), then the box answers one of the last few
              t += a.dt;
              check(m.tick(t));
              t += 0.5;
              const sent = m.snapshot(t).freshness.lastSentSeq;
              check(m.onLine(`ST ${a.state} ${sent === null ? 0 : (sent - a.back) >>> 0}`, t));
              break;
            }
            case 'line':
              t += a.dt;
              check(m.onLine(a.text, t));
              break;
            case 'arm':
              check(m.requestArm(t));
              break;
            case 'armFlow':
              for (const st of ['SAFE', 'ARMED']) {
                t += 20;
                check(m.tick(t));
                t += 0.5;
                check(m.onLine(`ST ${st} ${m.snapshot(t).freshness.lastSentSeq ?? 0}`, t));
                if (st === 'SAFE') check(m.requestArm(t));
              }
              break;
            case 'disarm':
              check(m.requestDisarm(t));
              break;
            case 'close':
              check(m.portClosed(t, a.cause));
              open = false;
              break;
            case 'open':
              if (!open) {
                check(m.portOpened(t));
                open = true;
              }
              break;
          }
        }
      }),
      { numRuns: 1500 },
    );
    // the generator does reach the armed state (the invariant is not vacuous)
    expect(armedSeen).toBeGreaterThan(100);
  });
});

describe('interlock device model (the box)', () => {
  it('answers heartbeats, arms only when SAFE with fresh heartbeats, and trips itself without them', () => {
    const d = new InterlockDeviceModel();
    expect(d.onLine('ARM', 0)).toEqual([]);
    expect(d.state).toBe('SAFE'); // no heartbeat yet: refused
    expect(d.counters.armsRefused).toBe(1);
    expect(d.onLine('HB 7', 1)).toEqual([{ kind: 'status', state: 'SAFE', seq: 7 }]);
    d.onLine('ARM', 2);
    expect(d.onLine('HB 8', 21)).toEqual([{ kind: 'status', state: 'ARMED', seq: 8 }]);
    expect(d.tick(121)).toEqual([]);
    expect(d.state).toBe('ARMED'); // exactly 100 ms: not yet
    d.tick(121.5);
    expect(d.state).toBe('SAFE');
    expect(d.counters.watchdogTrips).toBe(1);
    // a heartbeat after the limit does not undo it
    expect(d.onLine('HB 9', 130)).toEqual([{ kind: 'status', state: 'SAFE', seq: 9 }]);
  });

  it('e-stop: ESTOP at once, ARM ignored while pressed, release gives EV RESET and SAFE (not ARMED)', () => {
    const d = new InterlockDeviceModel();
    d.onLine('HB 1', 0);
    d.onLine('ARM', 1);
    expect(d.pressEstop()).toEqual([{ kind: 'event', event: 'ESTOP' }]);
    d.onLine('HB 2', 20);
    d.onLine('ARM', 21);
    d.onLine('DISARM', 22);
    expect(d.onLine('HB 3', 40)).toEqual([{ kind: 'status', state: 'ESTOP', seq: 3 }]);
    expect(d.releaseEstop()).toEqual([{ kind: 'event', event: 'RESET' }]);
    expect(d.releaseEstop()).toEqual([]);
    expect(d.onLine('HB 4', 60)).toEqual([{ kind: 'status', state: 'SAFE', seq: 4 }]);
  });

  it('can latch the watchdog trip as ESTOP', () => {
    const d = new InterlockDeviceModel({ watchdogTripTo: 'ESTOP' });
    d.onLine('HB 1', 0);
    d.onLine('ARM', 1);
    expect(d.tick(101)).toEqual([{ kind: 'event', event: 'ESTOP' }]);
    d.onLine('HB 2', 110);
    d.onLine('ARM', 111);
    expect(d.state).toBe('ESTOP');
    d.releaseEstop();
    expect(d.state).toBe('SAFE');
  });

  it('counts garbage from the console and stays up', () => {
    const d = new InterlockDeviceModel();
    for (const l of ['', 'HB', 'HB -1', 'arm', 'ST SAFE 1', '\x00']) expect(d.onLine(l, 0)).toEqual([]);
    expect(d.counters.garbageLines).toBe(6);
  });
});

// The console behind an interlock keeper. The keeper reports the console's main
// loop stalling (ConsoleWatchdog) and the monitor decides what that means for the box.
describe('interlock monitor: a stalled console (keeper watchdog)', () => {
  const heartbeatsIn = (s: CoSim, ms: number): number => {
    const before = s.sent.filter((m) => m.kind === 'heartbeat').length;
    s.run(ms);
    return s.sent.filter((m) => m.kind === 'heartbeat').length - before;
  };

  it('armed: trips console_stalled first, DISARMs, withholds heartbeats until resumed; nothing re-arms', () => {
    const s = armedSim();
    const fx = s.apply(s.monitor.consoleStalled(s.t, 'no kick for 101 ms'));
    expect(fx[0]).toMatchObject({ type: 'trip', trip: { reason: 'console_stalled', wasArmed: true } });
    expect(fx.some((e) => e.type === 'send' && e.message.kind === 'disarm')).toBe(true);
    expect(s.monitor.isArmedAndFresh(s.t)).toBe(false);
    expect(heartbeatsIn(s, 200)).toBe(0);
    expect(s.device.state).not.toBe('ARMED');
    const snap = s.monitor.snapshot(s.t);
    expect(snap.counters.heartbeatsWithheld).toBe(10);
    expect(snap.counters.consoleStalls).toBe(1);
    // A second report of the same stall is not a second trip.
    expect(s.monitor.consoleStalled(s.t, 'still')).toEqual([]);
    s.apply(s.monitor.consoleResumed(s.t));
    expect(heartbeatsIn(s, 100)).toBe(5);
    expect(s.monitor.state).toBe('safe');
    expect(s.monitor.isArmedAndFresh(s.t)).toBe(false);
    expect(s.trips.map((t) => t.reason)).toEqual(['console_stalled']);
  });

  it('negative control: not armed, a stall is counted, not a trip, and heartbeats go on', () => {
    const s = new CoSim();
    s.open();
    s.run(60);
    expect(s.monitor.state).toBe('safe');
    expect(s.apply(s.monitor.consoleStalled(s.t, 'no kick for 120 ms'))).toEqual([]);
    expect(heartbeatsIn(s, 100)).toBe(5);
    expect(s.trips).toEqual([]);
    expect(s.monitor.snapshot(s.t).counters.consoleStalls).toBe(1);
  });

  it('an ARM waiting for the box when the console stalls fails (lost) and the box is disarmed', () => {
    const s = new CoSim(5);
    s.open();
    s.run(60);
    s.arm();
    const fx = s.apply(s.monitor.consoleStalled(s.t, 'stopped'));
    expect(fx).toContainEqual(expect.objectContaining({ type: 'arm', ok: false, reason: 'lost' }));
    s.run(100);
    expect(s.monitor.state).not.toBe('armed');
    expect(s.device.state).not.toBe('ARMED');
  });
});

describe('console watchdog', () => {
  it('stalls only past the limit, at once when the process is stopped or gone, and once per stall', () => {
    const w = new ConsoleWatchdog(100, 0);
    expect(w.kick(10)).toEqual({ type: 'ok' });
    expect(w.check(110, 'running')).toEqual({ type: 'ok' }); // exactly 100 ms: not yet
    expect(w.check(110.5, 'running')).toMatchObject({ type: 'stalled' });
    expect(w.check(200, 'running')).toEqual({ type: 'ok' }); // reported once
    expect(w.kick(250)).toEqual({ type: 'resumed', stalledForMs: 139.5 });
    expect(w.longestKickGapMs).toBe(240);
    expect(w.check(251, 'stopped')).toMatchObject({ type: 'stalled', detail: expect.stringMatching(/stopped/) });
    expect(w.kick(300)).toMatchObject({ type: 'resumed' });
    expect(w.check(301, 'gone')).toMatchObject({ type: 'stalled', detail: expect.stringMatching(/gone/) });
    expect(() => new ConsoleWatchdog(0, 0)).toThrow(RangeError);
  });

  it("a runner's rule (its e-stop socket connected): a stopped or busy console stalls only past the rule's limit; gone at once", () => {
    const runner = { limitMs: 1000, stoppedStallsAtOnce: false };
    const w = new ConsoleWatchdog(100, 0);
    // a console stopped (SIGSTOP) for 300 ms: not a stall under the runner's rule …
    expect(w.check(300, 'stopped', runner)).toEqual({ type: 'ok' });
    expect(w.check(300, 'running', runner)).toEqual({ type: 'ok' });
    // … while the default rule stalls it at once (negative control)
    expect(new ConsoleWatchdog(100, 0).check(300, 'stopped')).toMatchObject({ type: 'stalled' });
    expect(w.kick(310)).toEqual({ type: 'ok' });
    // a console stopped for longer than the runner's rule: stalled
    expect(w.check(1310.5, 'stopped', runner)).toMatchObject({
      type: 'stalled',
      detail: expect.stringMatching(/stopped \(last kick 1000\.5 ms ago\)/),
    });
    expect(w.kick(1400)).toMatchObject({ type: 'resumed' });
    expect(w.check(1450, 'gone', runner)).toMatchObject({ type: 'stalled', detail: expect.stringMatching(/gone/) });
  });
});
