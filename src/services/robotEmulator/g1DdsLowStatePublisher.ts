import { performance } from 'node:perf_hooks';
import { encodeG1Remote, type G1RemoteState } from '../../domain/robotLink/g1WirelessRemote';
import type { LowState } from '../../domain/robotLink/unitreeHgWire';
import { PublishIntervals } from './publishIntervals';
import { SampleFaults } from './sampleFaults';

// The emulated G1's `rt/lowstate` writer: each step's LowState_ goes out with the wireless remote's
// held buttons and the injected faults applied — drop (nothing written for a while, counted as
// suppressed), freeze (the last LowState_'s values repeated with fresh ticks) and nan (q of motor 0
// NaN, CRC valid) — and the intervals between writes are measured.

export class G1DdsLowStatePublisher {
  /** LowState_ written. */
  published = 0;
  /** LowState_ not written because of an injected drop. */
  suppressed = 0;
  readonly intervals = new PublishIntervals();
  private readonly faults = new SampleFaults<LowState>();
  private dropUntilMs = 0;
  private readonly remote = new Uint8Array(40);
  private remoteHeld = false;
  private remoteUntilMs = 0;

  constructor(private readonly send: (s: LowState) => void) {}

  /** Writes one step's LowState_ (the plant's buffer: it is written as it is, or a frozen copy instead). */
  publish(s: LowState): void {
    const now = performance.now();
    if (now < this.dropUntilMs) {
      this.suppressed++;
      return;
    }
    if (this.remoteHeld && this.remoteUntilMs > 0 && now >= this.remoteUntilMs) {
      this.remote.fill(0);
      this.remoteHeld = false;
      this.remoteUntilMs = 0;
    }
    let out = s;
    const frozen = this.faults.frozenAt(now);
    if (frozen) {
      frozen.tick = s.tick;
      out = frozen;
    }
    out.wirelessRemote.set(this.remote);
    if (this.faults.takeNan()) {
      const saved = out.q[0];
      out.q[0] = Number.NaN;
      this.send(out);
      out.q[0] = saved;
    } else this.send(out);
    this.published++;
    this.intervals.wrote(now);
  }

  /** No LowState_ for `ms`. */
  drop(ms: number): void {
    this.dropUntilMs = performance.now() + ms;
  }

  /** `last`'s values repeated (with fresh ticks) for `ms`. */
  freeze(last: LowState, ms: number): void {
    this.faults.freeze(cloneLowState(last), ms);
  }

  /** The next `frames` LowState_ carry a NaN q on motor 0. */
  nan(frames: number): void {
    this.faults.addNan(frames);
  }

  /** The remote's buttons and sticks, held for `ms` (then released) or, without ms, until the next hold. */
  holdRemote(state: G1RemoteState, ms: number | undefined): void {
    encodeG1Remote(state, this.remote);
    this.remoteHeld = true;
    this.remoteUntilMs = ms ? performance.now() + ms : 0;
  }
}

function cloneLowState(s: LowState): LowState {
  return {
    ...s,
    version: s.version.slice(),
    imu: {
      quaternion: s.imu.quaternion.slice(),
      gyroscope: s.imu.gyroscope.slice(),
      accelerometer: s.imu.accelerometer.slice(),
      rpy: s.imu.rpy.slice(),
      temperature: s.imu.temperature,
    },
    mode: s.mode.slice(),
    q: s.q.slice(),
    dq: s.dq.slice(),
    ddq: s.ddq.slice(),
    tauEst: s.tauEst.slice(),
    temperature: s.temperature.slice(),
    vol: s.vol.slice(),
    sensor: s.sensor.slice(),
    motorstate: s.motorstate.slice(),
    motorReserve: s.motorReserve.slice(),
    wirelessRemote: s.wirelessRemote.slice(),
    reserve: s.reserve.slice(),
  };
}
