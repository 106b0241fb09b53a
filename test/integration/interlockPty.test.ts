import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { InterlockTrip } from '../../src/domain/interlock';
import { createSerialPort } from '../../src/services/interlock/hangupAwareBinding';
import {
  startInterlockEmulator,
  type InterlockEmulator,
  type InterlockEmulatorOptions,
} from '../../src/services/interlock/interlockEmulator';
import {
  openInterlock,
  type InterlockLink,
  type OpenInterlockOptions,
} from '../../src/services/interlock/serialInterlock';
import { fmt, makePtyPair, pct, sleep, waitFor, type TestPtyPair } from '../helpers/ptyPair';
import { REPO_ROOT } from '../helpers/sharedData';

// The serial interlock for real (DESIGN §5.2): the console opens one end
// of a socat pseudo-terminal pair with serialport, the emulated box the other. Every timing
// figure printed here is measured on this machine, in this run; docs/INTERLOCK.md quotes them.
//
// The machine is shared (2 cores, other suites and benchmarks running): a process can wait
// tens of ms for a CPU. So the bounds are asserted the way they can fail only through a fault
// of ours: never early (strict), typical latency (median, p90) within the budget, and a gross
// upper bound on the worst case; the event-loop delay measured during each timing test is
// printed beside the figures, so an outlier can be told from a bug.

interface Rig {
  pair: TestPtyPair;
  emu: InterlockEmulator;
  link: InterlockLink;
  trips: { trip: InterlockTrip; at: number }[];
  /** onDeviceStatus calls (counted statuses). */
  statuses: { n: number };
}

const rigs: Rig[] = [];
/** ARM requests this test file made (the operator's ARMs). */
let armRequests = 0;
const figures: Record<string, unknown> = {};

async function rig(
  options: { emulator?: Partial<InterlockEmulatorOptions>; link?: Partial<OpenInterlockOptions> } = {},
): Promise<Rig> {
  const pair = await makePtyPair();
  const emu = await startInterlockEmulator({ path: pair.devicePath, ...options.emulator });
  const trips: Rig['trips'] = [];
  const statuses = { n: 0 };
  const link = await openInterlock({
    path: pair.consolePath,
    onTrip: (trip) => trips.push({ trip, at: performance.now() }),
    onDeviceStatus: () => statuses.n++,
    log: () => {},
    ...options.link,
  });
  const r = { pair, emu, link, trips, statuses };
  rigs.push(r);
  await waitFor(() => link.state === 'safe', 1000, 'the first SAFE status');
  return r;
}

async function arm(r: Rig): Promise<void> {
  // A CPU stall of > 100 ms on this shared machine is (rightly) a silence trip, also in the middle
  // of an ARM; then the operator would arm again, and so does this helper (at most twice more).
  for (let attempt = 0; ; attempt++) {
    await waitFor(() => r.link.state === 'safe', 1000, 'SAFE before ARM');
    armRequests++;
    const res = await r.link.arm();
    if (!res.ok && (res.reason === 'lost' || res.reason === 'not_safe' || res.reason === 'stale') && attempt < 2) {
      console.log(`ARM failed (${res.reason}: ${res.detail}); arming again`);
      continue;
    }
    expect(res).toMatchObject({ ok: true });
    expect(r.link.isArmedAndFresh()).toBe(true);
    return;
  }
}

afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.link.close().catch(() => {});
    await r.emu.close().catch(() => {});
    await r.pair.dispose();
  }
});

afterAll(async () => {
  const dir = path.join(REPO_ROOT, 'test-results');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'interlock-timing.json'), `${JSON.stringify(figures, null, 2)}\n`);
});

const stats = (v: number[]) => ({
  n: v.length,
  min: Math.min(...v),
  p50: pct(v, 50),
  p90: pct(v, 90),
  p99: pct(v, 99),
  max: Math.max(...v),
});

/** Event-loop delay (how late this process got to run timers) during a test, and the load average. */
function loopDelay(): { stop(): { p99Ms: number; maxMs: number; load1: number } } {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  return {
    stop() {
      h.disable();
      return { p99Ms: h.percentile(99) / 1e6, maxMs: h.max / 1e6, load1: loadavg()[0] };
    },
  };
}

const describeLoop = (d: { p99Ms: number; maxMs: number; load1: number }): string =>
  `[event-loop delay p99 ${d.p99Ms.toFixed(1)} ms, max ${d.maxMs.toFixed(1)} ms; load ${d.load1.toFixed(2)}]`;

/**
 * A lag probe: a 2 ms timer that records how late it fires. The longest lateness seen in a time
 * window is how long this process could not run then (CPU taken by others, GC): a trip may be
 * late by that much through no fault of the interlock code, and by no more than 10 ms beyond it.
 */
function lagProbe(): { stallMs(fromMs: number, toMs: number): number; stop(): void } {
  const samples: { at: number; late: number }[] = [];
  let expected = performance.now() + 2;
  const timer = setInterval(() => {
    const now = performance.now();
    samples.push({ at: now, late: Math.max(0, now - expected) });
    expected = now + 2;
  }, 2);
  return {
    stallMs(fromMs, toMs) {
      let worst = 0;
      for (const x of samples) if (x.at >= fromMs && x.at <= toMs && x.late > worst) worst = x.late;
      return worst;
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * Arms, waits `ms`, and returns only when still armed and fresh. The caller acts right after the
 * `await` (no timer or I/O can run in between, so the state cannot change under it). A CPU stall
 * that tripped the link meanwhile is logged and the arming is repeated.
 */
async function armThenWait(r: Rig, ms: number): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    await arm(r);
    await sleep(ms);
    if (r.link.isArmedAndFresh()) return;
    console.log(`no longer armed after ${ms} ms (${r.trips.at(-1)?.trip.reason ?? r.link.state}); arming again`);
  }
  throw new Error('could not stay armed');
}

/** Waits for a trip after index `from` matching `reason`, returns it. */
async function nextTrip(
  r: Rig,
  from: number,
  reason: string,
  timeoutMs = 500,
): Promise<{ trip: InterlockTrip; at: number }> {
  let found: { trip: InterlockTrip; at: number } | undefined;
  await waitFor(
    () => (found = r.trips.slice(from).find((t) => t.trip.reason === reason)) !== undefined,
    timeoutMs,
    `a ${reason} trip`,
  );
  return found!;
}

describe('serial interlock over a real pty pair', () => {
  it('answers heartbeats: 20 ms drift-free schedule and round-trip times over 2 s', async () => {
    const r = await rig();
    const hbAt: number[] = [];
    const hbSeq: number[] = [];
    r.emu.on('line', (line: string, at: number) => {
      if (!line.startsWith('HB ')) return;
      hbAt.push(at);
      hbSeq.push(Number(line.slice(3)));
    });
    const before = r.link.snapshot();
    const loop = loopDelay();
    await sleep(2000);
    const delay = loop.stop();
    const snap = r.link.snapshot();
    const sent = snap.counters.heartbeatsSent - before.counters.heartbeatsSent;
    const missed = snap.counters.heartbeatSlotsMissed - before.counters.heartbeatSlotsMissed;
    // 100 slots in 2 s: each one either sent or (if the process was stalled past it) skipped and counted
    expect(sent + missed).toBeGreaterThanOrEqual(98);
    expect(sent + missed).toBeLessThanOrEqual(101);
    expect(snap.counters.heartbeatsDropped).toBe(0);
    expect(snap.counters.garbageLines).toBe(0);
    // every heartbeat answered (the last may still be on the wire); answers that came later than
    // 100 ms (a starved CPU) arrive but do not count
    const p = snap.counters.problems;
    const answers = snap.counters.statusesAccepted + p.late_status + p.stale_seq + p.unknown_seq;
    expect(answers).toBeGreaterThanOrEqual(snap.counters.heartbeatsSent - 1);
    expect(snap.counters.statusesAccepted).toBe(snap.freshness.rttSamples);
    expect(r.statuses.n).toBe(snap.counters.statusesAccepted);
    if (r.trips.length === 0)
      expect(snap.counters.statusesAccepted).toBeGreaterThanOrEqual(snap.counters.heartbeatsSent - 1);
    const intervals = hbAt.slice(1).map((t, i) => t - hbAt[i]);
    const span = (hbAt.at(-1)! - hbAt[0]) / (hbAt.length - 1);
    // drift: arrival time minus its slot (seq × 20 ms), early vs late in the window, medians (robust to transport jitter)
    const offsets = hbAt.map((t, i) => t - 20 * (hbSeq[i] - hbSeq[0]));
    const driftMs = pct(offsets.slice(-20), 50) - pct(offsets.slice(0, 20), 50);
    figures.heartbeat = {
      rtt_ms: {
        p50: snap.freshness.rttP50Ms,
        p99: snap.freshness.rttP99Ms,
        max: snap.freshness.rttMaxMs,
        samples: snap.freshness.rttSamples,
      },
      period_at_box_ms: { mean: span, ...stats(intervals) },
      drift_over_2s_ms: driftMs,
      send_lateness_ms: { p99: snap.heartbeat.latenessP99Ms, max: snap.heartbeat.latenessMaxMs },
      slots_missed: missed,
      event_loop_delay: delay,
    };
    console.log(
      `heartbeat rtt p50 ${snap.freshness.rttP50Ms!.toFixed(3)} ms, p99 ${snap.freshness.rttP99Ms!.toFixed(3)} ms, max ${snap.freshness.rttMaxMs!.toFixed(3)} ms (${snap.freshness.rttSamples} samples); ` +
        `period at the box: mean ${span.toFixed(3)} ms, ${fmt(intervals)}, drift over 2 s ${driftMs.toFixed(2)} ms; send lateness p99 ${snap.heartbeat.latenessP99Ms!.toFixed(2)} ms, max ${snap.heartbeat.latenessMaxMs!.toFixed(2)} ms; slots missed ${missed} ${describeLoop(delay)}`,
    );
    // answered well within a heartbeat period (typically ~0.5 ms; a starved CPU stretches it)
    expect(snap.freshness.rttP50Ms!).toBeLessThan(20);
    // drift-free: the mean period over 2 s is 20 ms (a stall skips slots, it does not shift them)
    // (setInterval(20) drifts: 100 ticks took 2019 ms on this machine, 19 ms late)
    if (missed === 0) expect(Math.abs(driftMs)).toBeLessThan(1.5);
  });

  it('ARM → ARMED and fresh; DISARM closes the gate at once and the box returns to SAFE', async () => {
    const r = await rig();
    expect(r.link.isArmedAndFresh()).toBe(false);
    await arm(r);
    expect(r.link.state).toBe('armed');
    expect(r.emu.state).toBe('ARMED');
    await sleep(100);
    expect(r.link.isArmedAndFresh()).toBe(true);
    expect(r.link.snapshot().freshness.ageMs!).toBeLessThanOrEqual(100);
    const pending = r.link.disarm();
    expect(r.link.isArmedAndFresh()).toBe(false);
    expect(await pending).toEqual({ ok: true });
    expect(r.link.state).toBe('safe');
    expect(r.emu.state).toBe('SAFE');
    expect(r.trips).toHaveLength(0);
    // a second ARM while armed is refused with a reason
    await arm(r);
    expect(await r.link.arm()).toMatchObject({ ok: false, reason: 'busy' });
  });

  it('e-stop press → trip (estop) within 100 ms; release gives SAFE, and only an operator ARM re-arms', async () => {
    const r = await rig();
    const latencies: number[] = [];
    let armLinesAtBox = 0;
    r.emu.on('line', (line: string) => line === 'ARM' && armLinesAtBox++);
    const requestsBefore = armRequests;
    const loop = loopDelay();
    for (let i = 0, attempts = 0; i < 10; attempts++) {
      expect(attempts).toBeLessThan(20);
      await armThenWait(r, 5 + 3 * i); // vary the phase against the heartbeat
      const from = r.trips.length;
      const t0 = performance.now();
      r.emu.pressEstop();
      await waitFor(() => r.trips.length > from, 500, 'the e-stop trip');
      const { trip, at } = r.trips[from];
      expect(r.link.isArmedAndFresh()).toBe(false);
      if (trip.reason === 'estop_event') {
        latencies.push(at - t0);
        expect(trip).toMatchObject({ fromState: 'armed', toState: 'estop', wasArmed: true });
        i++;
      } else {
        // the process stalled > 100 ms right after the press: the silence rule got there first
        expect(trip.reason).toBe('silence');
        console.log(
          `e-stop attempt: a ${trip.sinceLastStatusMs!.toFixed(1)} ms stall tripped for silence before EV ESTOP was read; not counted`,
        );
      }
      await waitFor(() => r.link.state === 'estop', 500, 'estop');
      await sleep(40);
      expect(['estop', 'lost']).toContain(r.link.state);
      // the ST ESTOP answers that follow EV ESTOP are no second trip
      expect(r.trips.slice(from).filter((t) => t.trip.reason === 'status_estop')).toHaveLength(0);
      r.emu.releaseEstop();
      await waitFor(() => r.link.state === 'safe', 500, 'SAFE after EV RESET');
      await sleep(100);
      // released ≠ armed: nobody sent ARM
      expect(r.link.state).not.toBe('armed');
      expect(r.emu.state).toBe('SAFE');
      expect(r.link.isArmedAndFresh()).toBe(false);
      expect(r.link.snapshot().lastEvent?.event).toBe('RESET');
    }
    const delay = loop.stop();
    // every ARM the box ever received is one the operator asked for (ten, plus re-tries after a CPU-stall trip)
    expect(armLinesAtBox).toBe(armRequests - requestsBefore);
    expect(r.emu.stats().arms).toBeLessThanOrEqual(armLinesAtBox);
    expect(r.trips.filter((t) => t.trip.reason === 'estop_event')).toHaveLength(10);
    figures.estop_trip_ms = { ...stats(latencies), event_loop_delay: delay };
    console.log(`e-stop press → onTrip: ${fmt(latencies)} ${describeLoop(delay)}`);
    expect(pct(latencies, 50)).toBeLessThan(10);
    expect(Math.max(...latencies)).toBeLessThan(100);
  });

  it('box goes silent → trip (interlock lost) within 100 ms + 10 ms of the last status', async () => {
    const r = await rig();
    const sinceConsole: number[] = [];
    const sinceBox: number[] = [];
    const stalls: number[] = [];
    const loop = loopDelay();
    const probe = lagProbe();
    for (let i = 0; i < 20; i++) {
      await armThenWait(r, 3 + ((i * 7) % 20));
      const from = r.trips.length;
      r.emu.setSilent(true);
      const { trip, at } = await nextTrip(r, from, 'silence');
      await sleep(6);
      stalls.push(probe.stallMs(trip.lastStatusAtMs! + 100, at + 5));
      expect(trip).toMatchObject({ fromState: 'armed', toState: 'lost', wasArmed: true });
      expect(r.link.isArmedAndFresh()).toBe(false);
      sinceConsole.push(trip.sinceLastStatusMs!);
      sinceBox.push(at - r.emu.stats().lastStatusWrittenAtMs!);
      r.emu.setSilent(false);
      // the console disarmed the box with the trip; statuses resume SAFE; nothing re-arms
      await waitFor(() => r.link.state === 'safe', 500, 'SAFE after the box talks again');
      expect(r.emu.state).toBe('SAFE');
    }
    probe.stop();
    const delay = loop.stop();
    const beyondStall = sinceConsole.map((d, i) => d - 100 - stalls[i]);
    figures.silence_trip_ms = {
      since_last_status_at_console: stats(sinceConsole),
      since_last_status_written_by_box: stats(sinceBox),
      process_stall_in_window: stats(stalls),
      event_loop_delay: delay,
    };
    console.log(`silence → trip, after the last counted status: ${fmt(sinceConsole)} ${describeLoop(delay)}`);
    console.log(`silence → trip, after the box wrote its last status: ${fmt(sinceBox)}`);
    console.log(
      `  process stalls inside the detection windows: ${fmt(stalls)}; (latency − 100 − stall): max ${Math.max(...beyondStall).toFixed(2)} ms`,
    );
    // never early: the limit is > 100 ms of silence
    for (const d of sinceConsole) expect(d).toBeGreaterThan(100);
    // within 100 + 10 ms, beyond whatever time the OS did not let this process run
    for (const b of beyondStall) expect(b).toBeLessThanOrEqual(10);
    expect(pct(sinceConsole, 50)).toBeLessThanOrEqual(110);
    expect(pct(sinceBox, 50)).toBeLessThanOrEqual(110);
  });

  it('socat killed (the pty vanishes) → trip (port closed) within 100 ms, and no reconnect', async () => {
    const latencies: number[] = [];
    const reasons: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await rig();
      await armThenWait(r, 4 * i + 1);
      const from = r.trips.length;
      const t0 = performance.now();
      r.pair.kill('SIGKILL');
      await waitFor(
        () => r.trips.slice(from).some((t) => t.trip.reason.startsWith('port_')),
        500,
        'the port-loss trip',
      );
      const { trip, at } = r.trips.slice(from)[0];
      latencies.push(at - t0);
      reasons.push(trip.reason);
      expect(trip).toMatchObject({ toState: 'lost', wasArmed: true });
      expect(['port_closed', 'port_error']).toContain(trip.reason);
      await r.link.closed;
      expect(r.link.isArmedAndFresh()).toBe(false);
      if (i === 0) {
        await sleep(200);
        expect(r.link.state).toBe('lost');
        expect(r.trips.slice(from)).toHaveLength(1);
        expect(await r.link.arm()).toMatchObject({ ok: false, reason: 'not_open' });
      }
    }
    figures.socat_killed_trip_ms = { ...stats(latencies), reasons };
    console.log(`socat SIGKILL → onTrip: ${fmt(latencies)} (${[...new Set(reasons)].join(', ')})`);
    expect(pct(latencies, 50)).toBeLessThanOrEqual(20);
    expect(Math.max(...latencies)).toBeLessThanOrEqual(100);
  });

  it('the box closes its end of the pty → trip within 100 ms + 10 ms of the last status', async () => {
    const fromClose: number[] = [];
    const sinceStatus: number[] = [];
    const reasons: string[] = [];
    const loop = loopDelay();
    for (let i = 0; i < 3; i++) {
      const r = await rig();
      await armThenWait(r, 7 * i + 2);
      const from = r.trips.length;
      const t0 = performance.now();
      await r.emu.close();
      await waitFor(() => r.trips.length > from, 1000, 'the trip');
      const { trip, at } = r.trips[from];
      fromClose.push(at - t0);
      sinceStatus.push(trip.sinceLastStatusMs!);
      reasons.push(trip.reason);
      expect(trip.wasArmed).toBe(true);
    }
    const delay = loop.stop();
    figures.box_closed_pty_trip_ms = {
      from_close: stats(fromClose),
      since_last_status: stats(sinceStatus),
      reasons,
      event_loop_delay: delay,
    };
    console.log(
      `box closes its pty → onTrip: ${fmt(fromClose)}; after the last status: ${fmt(sinceStatus)} (${[...new Set(reasons)].join(', ')}) ${describeLoop(delay)}`,
    );
    // socat keeps the console's end open for its 0.5 s close timeout, so this is the silence rule at work
    for (const d of sinceStatus) expect(d).toBeGreaterThan(100);
    expect(pct(sinceStatus, 50)).toBeLessThanOrEqual(110);
    expect(Math.max(...fromClose)).toBeLessThanOrEqual(100 + 10 + Math.max(50, delay.maxMs));
  });

  it('garbage from the box is counted, never fatal', async () => {
    const r = await rig();
    await arm(r);
    for (let i = 0; i < 10; i++) {
      await r.emu.sendGarbage('all');
      await sleep(15);
    }
    await waitFor(() => r.link.snapshot().counters.garbageLines >= 120, 2000, 'all garbage to arrive');
    await sleep(20);
    const snap = r.link.snapshot();
    if (r.trips.length === 0) {
      expect(snap.state).toBe('armed');
      expect(r.link.isArmedAndFresh()).toBe(true);
    } else {
      // only a CPU stall on this machine may trip here, never the garbage
      expect(r.trips.map((t) => t.trip.reason)).toEqual(r.trips.map(() => 'silence'));
    }
    // per batch: noise, overlong, binary, 3 bad seqs + 1 short ST, bad state, bad event, 3 blank lines
    expect(snap.counters.garbageLines).toBe(120);
    expect(snap.counters.problems).toMatchObject({
      unknown_keyword: 10,
      overlong: 10,
      non_ascii: 10,
      bad_seq: 30,
      bad_arguments: 10,
      bad_state: 10,
      bad_event: 10,
      empty: 30,
    });
    expect(snap.counters.problems.stale_seq + snap.counters.problems.unknown_seq).toBe(0);
  });

  it('a blocked event loop cannot make a stale status look fresh', async () => {
    const r = await rig();
    await armThenWait(r, 1);
    const from = r.trips.length;
    const t0 = performance.now();
    while (performance.now() - t0 < 150) {
      // busy: no timers, no I/O
    }
    // before any tick has run: the status is > 100 ms old, so the gate is shut
    expect(r.link.isArmedAndFresh()).toBe(false);
    await waitFor(() => r.trips.length > from, 200, 'the trip after the block');
    expect(r.trips[from].trip).toMatchObject({ reason: 'silence', wasArmed: true });
  });

  it('refuses a device that does not exist, and a second console on the same box', async () => {
    await expect(openInterlock({ path: '/nonexistent/tty-interlock', onTrip: () => {} })).rejects.toThrow(
      /cannot open \/nonexistent\/tty-interlock/,
    );
    const r = await rig();
    await expect(openInterlock({ path: r.pair.consolePath, onTrip: () => {}, log: () => {} })).rejects.toThrow(
      /cannot open/,
    );
    expect(r.link.state).toBe('safe');
  });
});

describe('the box trips itself when the console stops heartbeating', () => {
  for (const tripTo of ['SAFE', 'ESTOP'] as const) {
    it(`watchdog → ${tripTo} within 100 ms + 10 ms of the last heartbeat`, async () => {
      const pair = await makePtyPair();
      const emu = await startInterlockEmulator({ path: pair.devicePath, watchdogTripTo: tripTo });
      // A bare console: raw serial writes, no monitor.
      const port = createSerialPort({ path: pair.consolePath, baudRate: 115200, autoOpen: false });
      await new Promise<void>((res, rej) => port.open((e) => (e ? rej(e) : res())));
      let rx = '';
      port.on('data', (b: Buffer) => (rx += b.toString('latin1')));
      try {
        const tripped: number[] = [];
        emu.on('state', (state: string, at: number) => state === tripTo && tripped.push(at));
        let seq = 0;
        let lastHbAt = 0;
        const hb = setInterval(() => {
          port.write(`HB ${++seq}\n`);
          lastHbAt = performance.now();
        }, 20);
        await sleep(60);
        port.write('ARM\n');
        await waitFor(() => rx.includes('ST ARMED'), 500, 'ST ARMED');
        expect(emu.state).toBe('ARMED');
        await sleep(50);
        clearInterval(hb);
        await waitFor(() => tripped.length > 0, 500, 'the watchdog trip');
        const latency = tripped[0] - lastHbAt;
        // the HB written at lastHbAt reached the box a fraction of a ms later
        expect(latency).toBeGreaterThan(99);
        expect(latency).toBeLessThanOrEqual(160); // 100 ms + the box's 5 ms check + scheduling on a shared machine
        if (tripTo === 'ESTOP') await waitFor(() => rx.includes('EV ESTOP'), 200, 'EV ESTOP');
        // heartbeats again: the box stays tripped (no re-arm without ARM)
        port.write(`HB ${++seq}\n`);
        await waitFor(() => rx.includes(`ST ${tripTo} ${seq}`), 200, `ST ${tripTo}`);
        const wd = (figures.box_watchdog_trip_ms ??= {}) as Record<string, number>;
        wd[tripTo] = latency;
        console.log(`box watchdog (${tripTo}): tripped ${latency.toFixed(2)} ms after the last heartbeat was written`);
      } finally {
        await new Promise<void>((res) => (port.isOpen ? port.close(() => res()) : res()));
        await emu.close();
        await pair.dispose();
      }
    });
  }
});
