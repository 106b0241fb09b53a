import type { DeviceState } from '../../domain/interlock';
import { raiseProcessThreadsPriority, raiseTimekeeperPriority } from '../os/threadPriority';
import { startInterlockEmulator, type InterlockEmulatorOptions } from './interlockEmulator';

// The emulated interlock box as a process of its own (started by startInterlockEmulatorProcess,
// interlockEmulatorProcess.ts, through childBootstrap.mjs), as the real box is a microcontroller of
// its own: its heartbeat watchdog and status answers keep their 100 ms timing whatever the process
// that emulates the robot is doing. Messages over Node's IPC channel:
//   in:  {t:'start', options} {t:'estop', seq} {t:'release', seq} {t:'close'}
//   out: {t:'started', state} {t:'start_failed', message} {t:'state', state, atHrMs, afterSeq} {t:'closed'}
// `afterSeq` is the last button command the box had carried out when its state changed, so the
// other side can tell a report that predates its own press from one that follows it.

export type ToBox =
  | { t: 'start'; options: Pick<InterlockEmulatorOptions, 'path' | 'watchdogMs' | 'watchdogTripTo'> }
  | { t: 'estop'; seq: number }
  | { t: 'release'; seq: number }
  | { t: 'close' };
export type FromBox =
  | { t: 'started'; state: DeviceState }
  | { t: 'start_failed'; message: string }
  /** atHrMs: when the box changed state, on the system-wide monotonic clock (process.hrtime, ms). */
  | { t: 'state'; state: DeviceState; atHrMs: number; afterSeq: number }
  | { t: 'closed' };

// The box stands for a microcontroller of its own: ask to run before ordinary work (granted only
// with the privilege; see threadPriority.ts).
raiseTimekeeperPriority(-10);

const send = (m: FromBox): void => {
  if (process.connected) process.send!(m);
};

let box: Awaited<ReturnType<typeof startInterlockEmulator>> | null = null;
let lastSeq = 0;

async function close(): Promise<void> {
  await box?.close().catch(() => undefined);
  send({ t: 'closed' });
  setTimeout(() => process.exit(0), 20);
}

process.on('message', (m: ToBox) => {
  switch (m.t) {
    case 'start':
      void startInterlockEmulator(m.options).then(
        (b) => {
          box = b;
          // serialport reads and writes through libuv's thread pool, which exists now: its threads too.
          raiseProcessThreadsPriority(-10);
          // Not SCHED_FIFO: a box child whose pty had gone was seen spinning at 93 % of a core for
          // minutes, and two such spinners under SCHED_FIFO took both cores from everything else.
          // A stand-in that can spin keeps a nice (docs/G1_RUNNER.md "Not done yet").
          b.on('state', (state: DeviceState) =>
            send({ t: 'state', state, atHrMs: Number(process.hrtime.bigint()) / 1e6, afterSeq: lastSeq }),
          );
          send({ t: 'started', state: b.state });
        },
        (err: Error) => {
          send({ t: 'start_failed', message: err.message });
          process.exit(0);
        },
      );
      break;
    case 'estop':
      lastSeq = m.seq;
      box?.pressEstop();
      break;
    case 'release':
      lastSeq = m.seq;
      box?.releaseEstop();
      break;
    case 'close':
      void close();
      break;
  }
});
process.on('disconnect', () => void close());
process.on('SIGINT', () => {});
