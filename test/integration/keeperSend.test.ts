// The console's messages to its interlock keeper when the keeper has just died (issue found by
// CI: an uncaught EPIPE from the 10 ms kick after "the keeper dying is a port_closed trip"). A
// real child with an IPC channel is SIGKILLed and, while this loop has not yet handled its exit
// (the child is a zombie, the channel still looks connected), a kick is sent: through
// sendToKeeper the failure only reaches the log; a bare child.send (the negative control) raises
// an 'error' event on the child, which nothing in the link listened to.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sendToKeeper } from '../../src/services/interlock/interlockKeeperLink';

/** A child with an IPC channel, dead (SIGKILL) but not yet reaped by this loop. */
async function deadButConnected(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', "process.on('message', () => {}); process.send('up')"], {
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  await new Promise<void>((r) => child.once('message', () => r()));
  child.kill('SIGKILL');
  // Block this loop until the kernel shows the child as a zombie: it is gone, the exit not handled.
  const end = Date.now() + 5000;
  while (Date.now() < end) {
    const stat = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) break;
  }
  return child;
}

describe('sending to a keeper that has just died', () => {
  it('sendToKeeper: the failed write is logged, no error event, the exit still comes', async () => {
    // Whether a write fails before this loop sees the exit depends on timing: the scenario is
    // repeated until one did (at most 10 times); no attempt may raise an error event.
    const errors: Error[] = [];
    const log: string[] = [];
    for (let attempt = 0; attempt < 10 && log.length === 0; attempt++) {
      const child = await deadButConnected();
      expect(child.connected).toBe(true);
      child.on('error', (e) => errors.push(e));
      // kicks as the link sends them, until one is refused by the dead channel
      for (let i = 0; i < 200 && log.length === 0 && child.connected; i++) {
        sendToKeeper(child, { t: 'kick' }, (l) => log.push(l));
        await new Promise((r) => setImmediate(r));
      }
      await new Promise<void>((r) =>
        child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r()),
      );
      await new Promise((r) => setTimeout(r, 20));
      expect(child.signalCode).toBe('SIGKILL');
    }
    expect(errors).toEqual([]);
    expect(log[0]).toMatch(/^keeper: kick not delivered \((write )?EPIPE|channel closed/);
  });

  it('negative control: a bare child.send in the same moment raises an error event', async () => {
    const errors: Error[] = [];
    for (let attempt = 0; attempt < 10 && errors.length === 0; attempt++) {
      const child = await deadButConnected();
      child.on('error', (e) => errors.push(e));
      for (let i = 0; i < 200 && errors.length === 0 && child.connected; i++) {
        child.send({ t: 'kick' });
        await new Promise((r) => setImmediate(r));
      }
      await new Promise<void>((r) =>
        child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r()),
      );
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(errors.length).toBeGreaterThan(0);
    expect(String(errors[0])).toMatch(/EPIPE|channel closed/);
  });
});
