import type {
  DeviceEvent,
  DeviceState,
  InterlockProblem,
  InterlockSnapshot,
  InterlockTimings,
  InterlockTrip,
} from '../../domain/interlock';
import type { ArmResult, DisarmResult } from './serialInterlock';

// The messages between the console and its interlock keeper process (interlockKeeper.ts), over
// Node's IPC channel (JSON). Times are the console's performance.now() milliseconds: the keeper
// reads the same system-wide monotonic clock (process.hrtime) shifted by `clockOffsetMs`.

export interface KeeperOpenOptions {
  path: string;
  baudRate?: number;
  timings?: Partial<InterlockTimings>;
  checkPeriodMs?: number;
  maxWriteBacklogBytes?: number;
  lock?: boolean;
}

export type ToKeeper =
  | {
      t: 'open';
      options: KeeperOpenOptions;
      clockOffsetMs: number;
      watchdogLimitMs: number;
      /** The g1-runner's e-stop socket (docs/G1_RUNNER.md "Interlock e-stop"); null: none. */
      runnerTripSocket: string | null;
    }
  /** The console's main loop ran: sent every kick period by a timer on it. */
  | { t: 'kick' }
  | { t: 'arm'; id: number }
  | { t: 'disarm'; id: number }
  | { t: 'close'; id: number };

export type FromKeeper =
  | { t: 'opened'; snapshot: InterlockSnapshot }
  | { t: 'open_failed'; message: string }
  | { t: 'trip'; trip: InterlockTrip; snapshot: InterlockSnapshot }
  | { t: 'status'; snapshot: InterlockSnapshot }
  | { t: 'device_status'; status: { state: DeviceState; seq: number; rttMs: number; atMs: number } }
  | { t: 'event'; event: DeviceEvent; atMs: number }
  | { t: 'problem'; problem: InterlockProblem; line: string }
  | { t: 'log'; line: string }
  | { t: 'reply'; id: number; result: ArmResult | DisarmResult | null }
  | { t: 'closed' };
