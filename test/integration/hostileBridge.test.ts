import { afterEach, describe, expect, it } from 'vitest';
import type { BackendEvent, Problem } from '../../src/domain/backend/backend';
import { makeBuiltinBinding } from '../../src/domain/sim/builtinBinding';
import { connectRobot, type BridgeClientBackend } from '../../src/services/bridge/bridgeClientBackend';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { trialRobotOf } from '../../src/services/trial/trialRobot';
import { HOSTILE_FOXGLOVE_SERVER_MESSAGES } from '../helpers/hostileProtocolMessages';
import { startHostileBridge, type HostileBridge } from '../helpers/hostileBridge';
import { sharedData } from '../helpers/sharedData';
import { sleep, waitFor } from './bridgeTestClient';

// The console's one g1-bridge/1 client (connectRobot) against a robot-like
// server in its own process that a test turns hostile (test/helpers/hostileBridge.ts): malformed
// protocol messages, a trip while the start is being prepared, a frozen state stream with the
// socket still open, a slow prepare ack. What reaches the robot is read from the server's own
// record of the commands it received.

const HANDS_UP = loadClipFile(sharedData('motions/g1_moves/npz/B_HandsUp.npz'));

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

async function rig(): Promise<{
  bridge: HostileBridge;
  backend: BridgeClientBackend;
  problems: Problem[];
  link: ReturnType<typeof trialRobotOf>;
}> {
  const bridge = await startHostileBridge(500);
  cleanups.push(() => bridge.stop());
  const backend = connectRobot({ url: bridge.url, reconnectInitialDelayMs: 200 });
  cleanups.push(() => backend.close());
  const problems: Problem[] = [];
  const link = trialRobotOf(backend, { robotUnit: 'g1-hostile' });
  link.subscribe(async (events: BackendEvent[]) => {
    for (const e of events) if (e.type === 'problem') problems.push(e.problem);
  });
  await waitFor(() => backend.presence === 'present', 10_000, 'present');
  return { bridge, backend, problems, link };
}

describe('a hostile or broken g1-bridge/1 server', () => {
  it('item 2: every malformed protocol message is a counted problem on the link; the process lives and the link stays present', async () => {
    const { bridge, backend, problems } = await rig();
    const before = backend.stats().accepted;
    for (const m of HOSTILE_FOXGLOVE_SERVER_MESSAGES) bridge.raw(m.text);
    await waitFor(
      () => backend.stats().malformedControl >= HOSTILE_FOXGLOVE_SERVER_MESSAGES.length,
      5000,
      'every hostile message counted',
    );
    expect(backend.stats().malformedControl).toBe(HOSTILE_FOXGLOVE_SERVER_MESSAGES.length);
    // Reported as problems (rate-limited: at least the first), naming the field.
    await waitFor(() => problems.some((p) => p.code === 'malformed_server_message'), 3000, 'a problem');
    expect(problems.find((p) => p.code === 'malformed_server_message')!.message).toMatch(/advertise channels: /);
    // The stream goes on over the same socket.
    await sleep(300);
    expect(backend.presence).toBe('present');
    expect(backend.stats().accepted).toBeGreaterThan(before + 50);
    expect(backend.stats().connects).toBe(1);
  });

  it('item 1: a trip while beforeStart awaits (the recording being opened) latches the run: stop and damp go out, start never does', async () => {
    const { bridge, backend, link } = await rig();
    const lease = await backend.acquire('hostile-run-1');
    const end = await lease.run({
      clip: HANDS_UP,
      binding: makeBuiltinBinding(),
      seed: 0,
      // The gate allowed the start, then the interlock went silent while the episode's SQLite row
      // was held for 400 ms: the gate tripped (link_lost outcome) and sent stop + damp meanwhile.
      beforeStart: async () => {
        void link.stop('link_lost', 'interlock lost: no interlock status for 104 ms (limit 100 ms)');
        void link.damp('interlock lost: no interlock status for 104 ms (limit 100 ms)');
        await sleep(400);
        return true;
      },
    });
    await lease.release();
    await sleep(300);
    expect(end.outcome).toBe('link_lost');
    expect(end.frames).toBe(0);
    expect(end.reason).toMatch(/stopped before the episode started/);
    const names = bridge.names();
    expect(names).toContain('stop');
    expect(names).toContain('damp');
    expect(names).not.toContain('start');
  });

  it('item 1: the last check (mayTransmit) runs right before the write; a refusal there sends no start — control: allowed, the start arrives', async () => {
    const { bridge, backend } = await rig();
    let lease = await backend.acquire('hostile-run-2');
    const refused = await lease.run({
      clip: HANDS_UP,
      binding: makeBuiltinBinding(),
      seed: 0,
      beforeStart: async () => true,
      mayTransmit: () => 'tripped 3 ms ago by interlock lost',
    });
    await lease.release();
    expect(refused).toMatchObject({ outcome: 'aborted_by_operator', frames: 0 });
    expect(refused.reason).toMatch(/start not sent: tripped 3 ms ago/);
    expect(bridge.names()).not.toContain('start');

    lease = await backend.acquire('hostile-run-3');
    let asked = 0;
    const running = lease.run({
      clip: HANDS_UP,
      binding: makeBuiltinBinding(),
      seed: 0,
      beforeStart: async () => true,
      mayTransmit: () => (asked++, true),
    });
    await waitFor(() => bridge.names().includes('start'), 5000, 'the start');
    expect(asked).toBe(1);
    await lease.stop('aborted_by_operator', 'test done');
    await running;
    await lease.release();
  });

  it('item 3: a frozen lowstate with the socket open: the trip’s stop and damp reach the robot and are acknowledged (not refused locally as "not connected")', async () => {
    const { bridge, backend, link } = await rig();
    const lease = await backend.acquire('hostile-run-4');
    const running = lease.run({ clip: HANDS_UP, binding: makeBuiltinBinding(), seed: 0 });
    await waitFor(() => bridge.names().includes('start'), 5000, 'the start');
    await sleep(200);
    bridge.freeze();
    const end = await running;
    expect(end.outcome).toBe('link_lost');
    expect(backend.presence).toBe('lost');
    // The gate trips on the lost presence and sends stop and damp: they must go out on the open socket.
    const [stop, damp] = await Promise.all([
      link.stop('link_lost', 'robot link lost: no lowstate for 101 ms'),
      link.damp('robot link lost: no lowstate for 101 ms'),
    ]);
    expect(stop).toMatchObject({ command: 'stop', answer: 'ok' });
    expect(damp).toMatchObject({ command: 'damp', answer: 'ok' });
    expect(stop.attempts).toBeGreaterThanOrEqual(1);
    // The server prints each command it reads on its stdout before it answers on the socket; the
    // two reach this process on different pipes, so the answer can be read first: wait for the record.
    await waitFor(() => bridge.names().includes('damp'), 2000, 'the damp in the robot’s record');
    expect(bridge.names().filter((n) => n === 'damp').length).toBeGreaterThanOrEqual(1);
    expect(bridge.commands.find((c) => c.command === 'damp')!.reason).toMatch(/robot link lost/);
    await lease.release();
    // The silent socket is dropped once the deliveries settled; the link comes back after a resume.
    bridge.resume();
    await waitFor(() => backend.presence === 'present', 8000, 'present again');
  });

  it('item 3: a slow prepare ack and a frozen stream: stop and damp are written and retried until the robot answers; no start', async () => {
    const { bridge, backend, link } = await rig();
    bridge.delayAck('prepare', 1500);
    await sleep(50);
    const lease = await backend.acquire('hostile-run-5');
    const running = lease.run({
      clip: HANDS_UP,
      binding: makeBuiltinBinding(),
      seed: 0,
      beforeStart: async () => true,
    });
    await waitFor(() => bridge.names().includes('prepare'), 5000, 'the prepare');
    bridge.freeze();
    await waitFor(() => backend.presence === 'lost', 3000, 'lost');
    const [stop, damp] = await Promise.all([
      link.stop('link_lost', 'robot link lost during prepare'),
      link.damp('robot link lost during prepare'),
    ]);
    expect(stop.answer).toBe('ok');
    expect(damp.answer).toBe('ok');
    const end = await running;
    expect(end).toMatchObject({ outcome: 'link_lost', frames: 0 });
    await lease.release();
    await sleep(200);
    const names = bridge.names();
    expect(names).toContain('stop');
    expect(names).toContain('damp');
    expect(names).not.toContain('start');
  });

  it('item 3: a robot that never answers: each stop/damp is written again every 100 ms and the delivery says it went unanswered', async () => {
    const { bridge, link } = await rig();
    bridge.delayAck('damp', Infinity);
    await sleep(50);
    const d = await link.damp('test: unanswered damp');
    expect(d.answer).toBeNull();
    expect(d.attempts).toBe(20);
    expect(d.message).toMatch(/no answer .* to 20 writes/);
    await sleep(200);
    expect(bridge.names().filter((n) => n === 'damp').length).toBe(20);
  });
});
