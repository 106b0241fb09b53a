import { describe, expect, it } from 'vitest';
import type { Presence, StopDelivery } from '../../src/domain/backend/backend';
import type { WireCommand } from '../../src/domain/bridge/g1BridgeContract';
import {
  CommandChannel,
  CommandRefusedError,
  SAFETY_MAX_ATTEMPTS,
  SAFETY_RETRY_MS,
} from '../../src/services/robotLink/commandChannel';
import { FakeLinkClock } from '../helpers/fakeLinkClock';

// The command channel of the robot link on a fake clock: seq per write, acks, refusals, timeouts,
// and the stop/damp retries (written every 100 ms until answered, 20 writes at most).

const URL = 'ws://robot.test:8765';

function rig(o: { socketOpen?: boolean; presence?: Presence } = {}) {
  const clock = new FakeLinkClock(0);
  const writes: { seq: number; command: string; atMs: number }[] = [];
  const state = {
    socketOpen: o.socketOpen ?? true,
    presence: o.presence ?? ('present' as Presence),
    throwOnWrite: false,
  };
  const write = (cmd: WireCommand, seq: number): void => {
    if (state.throwOnWrite) throw new Error('EPIPE');
    writes.push({ seq, command: cmd.command, atMs: clock.nowMs() });
  };
  let settledCalls = 0;
  const ch = new CommandChannel({
    clock,
    name: 'robot at test',
    url: URL,
    openPath: () => (state.socketOpen ? write : null),
    presence: () => state.presence,
    onSafetySettled: () => settledCalls++,
  });
  return { clock, ch, writes, state, write, settled: () => settledCalls };
}

/** A promise's state without awaiting it past this microtask turn. */
async function peek<T>(
  p: Promise<T>,
): Promise<{ state: 'pending' } | { state: 'resolved'; value: T } | { state: 'rejected'; error: Error }> {
  let out: { state: 'pending' } | { state: 'resolved'; value: T } | { state: 'rejected'; error: Error } = {
    state: 'pending',
  };
  p.then(
    (value) => (out = { state: 'resolved', value }),
    (error: Error) => (out = { state: 'rejected', error }),
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return out;
}

const ACK = (message: string, ok = true) => ({ ok, command: 'prepare', code: ok ? 'ok' : 'busy', message });

describe('ordinary commands: ack, refusal, timeout', () => {
  it('resolves with the ack of its own seq; an ack of another seq does not settle it', async () => {
    const { ch, writes, write } = rig();
    const p = ch.send({ command: 'prepare', args: {} } as unknown as WireCommand, write, 15_000);
    expect(writes).toEqual([{ seq: 1, command: 'prepare', atMs: 0 }]);
    ch.answer(2, ACK('not yours'));
    expect((await peek(p)).state).toBe('pending');
    ch.answer(1, ACK('prepared run r1'));
    expect(await peek(p)).toEqual({ state: 'resolved', value: 'prepared run r1' });
    expect(ch.pendingCount).toBe(0);
  });

  it('rejects with CommandRefusedError on a refusing ack or a refused status', async () => {
    const { ch, write } = rig();
    const a = ch.send({ command: 'prepare', args: {} } as unknown as WireCommand, write, 15_000);
    ch.answer(1, ACK('another run is prepared', false));
    const ra = await peek(a);
    expect(ra.state).toBe('rejected');
    const err = (ra as { error: Error }).error;
    expect(err).toBeInstanceOf(CommandRefusedError);
    expect(err.message).toBe('prepare refused by robot at test (busy): another run is prepared');
    const b = ch.send({ command: 'start', args: { run_id: 'r1' } }, write, 15_000);
    ch.refuse(2, 'start refused: not prepared');
    const rb = await peek(b);
    expect((rb as { error: Error }).error).toBeInstanceOf(CommandRefusedError);
    expect((rb as { error: Error }).error.message).toBe('start refused: not prepared');
  });

  it('times out exactly at its timeout, not a millisecond before', async () => {
    const { clock, ch, write } = rig();
    const p = ch.send({ command: 'start', args: { run_id: 'r1' } }, write, 3000);
    clock.advanceTo(2999);
    expect((await peek(p)).state).toBe('pending');
    clock.advanceTo(3000);
    const r = await peek(p);
    expect(r.state).toBe('rejected');
    expect((r as { error: Error }).error.message).toBe('start: no answer from robot at test within 3000 ms');
    // A late ack changes nothing (the seq is no longer pending).
    ch.answer(1, ACK('late'));
    expect(ch.pendingCount).toBe(0);
  });

  it('fails on a write that throws, and every pending command when the socket closes', async () => {
    const { ch, write, state } = rig();
    const ok = ch.send({ command: 'start', args: { run_id: 'r1' } }, write, 3000);
    state.throwOnWrite = true;
    const bad = ch.send({ command: 'start', args: { run_id: 'r2' } }, write, 3000);
    expect(((await peek(bad)) as { error: Error }).error.message).toBe('start: send failed: EPIPE');
    ch.failAll(new Error('link to ws://robot.test:8765 lost (connection closed)'));
    expect(((await peek(ok)) as { error: Error }).error.message).toBe(
      'start: link to ws://robot.test:8765 lost (connection closed)',
    );
  });
});

describe('stop and damp: written now, retried every 100 ms until answered', () => {
  it('is answered on its second write: two writes (new seq each), then no more', async () => {
    const { clock, ch, writes, settled } = rig();
    const p = ch.sendSafety('stop', 'trip', { command: 'stop', args: { reason: 'trip' } });
    expect(ch.safetyInFlight).toBe(1);
    clock.advanceTo(SAFETY_RETRY_MS);
    expect(writes.map((w) => [w.seq, w.atMs])).toEqual([
      [1, 0],
      [2, 100],
    ]);
    clock.advanceTo(150);
    ch.answer(2, { ok: true, command: 'stop', code: 'ok', message: 'stopped' });
    const d = (await peek(p)) as { state: 'resolved'; value: StopDelivery };
    expect(d.value).toEqual({
      command: 'stop',
      reason: 'trip',
      attempts: 2,
      answer: 'ok',
      message: 'stopped',
      firstSentAtMs: 0,
      settledAtMs: 150,
    });
    clock.advanceTo(1000);
    expect(writes).toHaveLength(2); // negative control: no retry after the answer
    expect(ch.safetyInFlight).toBe(0);
    expect(ch.pendingCount).toBe(0);
    expect(settled()).toBe(1);
  });

  it('gives up after 20 unanswered writes, 2 s after the first, and says so', async () => {
    const { clock, ch, writes } = rig();
    const p = ch.sendSafety('damp', 'trip', { command: 'damp', args: { reason: 'trip' } });
    clock.advanceTo(SAFETY_RETRY_MS * SAFETY_MAX_ATTEMPTS - 1);
    expect((await peek(p)).state).toBe('pending');
    expect(writes).toHaveLength(SAFETY_MAX_ATTEMPTS);
    expect(writes.map((w) => w.atMs)).toEqual(Array.from({ length: 20 }, (_, k) => k * 100));
    clock.advanceTo(SAFETY_RETRY_MS * SAFETY_MAX_ATTEMPTS);
    const d = ((await peek(p)) as { value: StopDelivery }).value;
    expect(d).toMatchObject({ command: 'damp', attempts: 20, answer: null, settledAtMs: 2000 });
    expect(d.message).toBe('no answer from robot at test to 20 writes over 2000 ms');
    expect(writes).toHaveLength(20);
  });

  it('a refusal is an answer (no retry); a closed socket is not (unanswered, with the writes so far)', async () => {
    const { clock, ch, writes, state } = rig();
    const refused = ch.sendSafety('stop', 'trip', { command: 'stop', args: { reason: 'trip' } });
    ch.refuse(1, 'stop refused: not the controller');
    expect(((await peek(refused)) as { value: StopDelivery }).value).toMatchObject({
      answer: 'refused',
      attempts: 1,
      message: 'stop refused: not the controller',
    });
    const dropped = ch.sendSafety('damp', 'trip', { command: 'damp', args: { reason: 'trip' } });
    clock.advanceTo(100); // second write
    ch.failAll(new Error('link to ws://robot.test:8765 lost (connection closed)'));
    expect(((await peek(dropped)) as { value: StopDelivery }).value).toMatchObject({
      answer: null,
      attempts: 2,
      message: 'damp: link to ws://robot.test:8765 lost (connection closed) after 2 write(s)',
    });
    // A socket that goes away between writes: the next attempt finds no path.
    const gone = ch.sendSafety('stop', 'trip', { command: 'stop', args: { reason: 'trip' } });
    state.socketOpen = false;
    clock.advanceTo(200);
    expect(((await peek(gone)) as { value: StopDelivery }).value).toMatchObject({
      answer: null,
      attempts: 1,
      message: `the socket to ${URL} closed after 1 write(s), unanswered`,
    });
    expect(writes.map((w) => w.command)).toEqual(['stop', 'damp', 'damp', 'stop']);
  });

  it('with no open socket nothing is written and the delivery names the presence', async () => {
    const { ch, writes } = rig({ socketOpen: false, presence: 'lost' });
    const d = (
      (await peek(ch.sendSafety('stop', 'trip', { command: 'stop', args: { reason: 'trip' } }))) as {
        value: StopDelivery;
      }
    ).value;
    expect(d).toMatchObject({ attempts: 0, answer: null, firstSentAtMs: null });
    expect(d.message).toBe(`not sent: no open socket to ${URL} (lost)`);
    expect(writes).toEqual([]);
  });
});
