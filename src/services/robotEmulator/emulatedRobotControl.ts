import { performance } from 'node:perf_hooks';
import { cloneStateFrame, type StateFrame } from '../../domain/robot/stateFrame';
import {
  decodeEmulatorControl,
  EMULATOR_CONTROL_STATUS_ID,
  EMULATOR_CONTROL_TOPIC,
  type EmulatorControlAction,
} from '../../domain/robotEmulator';
import type { InitialState } from '../../domain/backend/backend';
import type { BridgeServer } from '../bridge/bridgeServer';
import type { InterlockBoxProcess } from '../interlock/interlockEmulatorProcess';
import type { EmulatedRobotBackend } from './emulatedRobotBackend';
import type { CoreStepResult, RobotEmulatorCore } from './robotEmulatorCore';
import { parseControl, SampleFaults, stallProcess, type ControlResult } from './sampleFaults';

// What acts on the emulated robot from outside an episode: the bridge's damp and hold commands,
// the e-stop (the interlock box's or the control channel's: the motors damp at once and a running
// episode ends `estop`), and `/emulator/control`, which plays the human beside the robot
// (human_reset, place) and injects faults into the published lowstate.

export class EmulatedRobotControl {
  /** Control actions applied (channel, scheduled or direct). */
  applied = 0;
  /** The bridge server, once it listens. */
  bridge: BridgeServer | null = null;
  /** The emulated interlock box, when one runs. */
  interlock: InterlockBoxProcess | null = null;
  private readonly faults = new SampleFaults<StateFrame>();
  private lastPublished: StateFrame | null = null;

  constructor(
    private readonly core: RobotEmulatorCore,
    private readonly backend: EmulatedRobotBackend,
    /** Logs a change of what the motors do, with its cause. */
    private readonly motors: (what: string, cause: string) => void,
    /** The stamp of a step's sample, ns since the stamp origin. */
    private readonly nominalNs: (tick: number) => number,
  ) {}

  /** Publishes one step's sample (faults applied); a run that ended with it ends after it. */
  onSample(r: CoreStepResult): void {
    // The sample's time is its step's scheduled time (the state belongs to t0 + k·dt of the
    // simulated robot), not the moment a late loop gets to publish it: a consumer placing samples
    // on their time grid (live metrics) must not see a catch-up burst as a stretched stream.
    const stampNs = this.nominalNs(r.frame.tick);
    let out: StateFrame;
    const frozen = this.faults.frozenAt(performance.now());
    if (frozen) {
      out = cloneStateFrame(frozen);
      out.tick = r.frame.tick;
      out.referenceFrame = r.frame.referenceFrame;
    } else {
      out = cloneStateFrame(r.frame);
      if (this.faults.takeNan()) out.jointPosRad[0] = Number.NaN; // a buggy bridge: JSON carries it as null
    }
    out.timeS = stampNs / 1e9;
    this.lastPublished = out;
    this.backend.deliver(out);
    if (r.episodeEnd) this.backend.finishRun(r.episodeEnd);
  }

  /** The motors damp at once; a running episode ends `estop`. */
  estop(reason: string): void {
    this.core.damp();
    this.motors('damped', `e-stop: ${reason}`);
    if (this.backend.run) {
      const end = this.core.endEpisode('estop', reason);
      if (end) this.backend.finishRun(end);
    } else this.bridge?.robotState('damping', reason);
  }

  /** The bridge's damp command. */
  damp(reason: string): void {
    this.core.damp();
    this.motors('damped', `damp command: ${reason}`);
  }

  /** The bridge's hold command: with the box's e-stop latched the motors have no power and the robot stays damped. */
  hold(reason: string): void {
    if (!this.core.episodeRunId && this.interlock?.state !== 'ESTOP') {
      this.core.hold();
      this.motors('holding the current pose', `hold command: ${reason}`);
    } else
      this.motors(
        'hold ignored',
        `hold command: ${reason}; ${this.core.episodeRunId ? `episode ${this.core.episodeRunId} runs` : 'the interlock e-stop is latched'}`,
      );
  }

  /** One message on `/emulator/control` (refused when the channel is disabled), answered with its status id. */
  onChannel(enabled: boolean, data: Uint8Array): ControlResult & { id: string } {
    if (!enabled)
      return {
        ok: false,
        message: `${EMULATOR_CONTROL_TOPIC} is disabled: this emulator was started without it (--no-control)`,
        id: EMULATOR_CONTROL_STATUS_ID.refused,
      };
    const d = parseControl(EMULATOR_CONTROL_TOPIC, Buffer.from(data).toString('utf8'), decodeEmulatorControl);
    const r = d.ok ? this.apply(d.value) : { ok: false, message: d.message };
    return { ...r, id: r.ok ? EMULATOR_CONTROL_STATUS_ID.ok : EMULATOR_CONTROL_STATUS_ID.refused };
  }

  /** Applies one control action as /emulator/control would. */
  apply(a: EmulatorControlAction): ControlResult {
    this.applied++;
    switch (a.action) {
      case 'human_reset':
        return this.putDown('human_reset', undefined, {
          motors: 'standing at the start pose',
          state: 'human reset: the robot was put back in its standing start pose',
          done: 'robot standing at the start pose',
        });
      case 'place':
        return this.putDown('place', () => this.core.placedStart(a), {
          motors: 'standing at a placed pose',
          state: 'placed: the robot was put down at a given pose',
          done: 'robot standing at the given pose',
        });
      case 'drop':
        this.bridge?.suspendPublishing(a.ms);
        return { ok: true, message: `drop: publishing nothing for ${a.ms} ms` };
      case 'freeze':
        this.faults.freeze(this.lastPublished ? cloneStateFrame(this.lastPublished) : null, a.ms);
        return { ok: true, message: `freeze: repeating the last sample's values for ${a.ms} ms` };
      case 'nan':
        this.faults.addNan(a.frames);
        return { ok: true, message: `nan: the next ${a.frames} lowstate carry a non-finite q[0] (null in JSON)` };
      case 'stall':
        stallProcess(a.ms); // a stalled bridge process
        return { ok: true, message: `stall: blocked the process for ${a.ms} ms` };
      case 'estop':
        if (this.interlock)
          this.interlock.pressEstop(); // its ESTOP state damps the robot (estop)
        else this.estop('e-stop pressed (control channel)');
        return {
          ok: true,
          message: this.interlock
            ? 'estop: pressed the interlock box e-stop'
            : 'estop: motors damped (no interlock box)',
        };
      case 'release_estop':
        if (this.interlock) this.interlock.releaseEstop();
        return {
          ok: true,
          message: 'release_estop: e-stop released (the robot stays damped until hold or human_reset)',
        };
      case 'kill_link': {
        const n = this.bridge?.dropClients() ?? 0;
        return { ok: true, message: `kill_link: terminated ${n} connection${n === 1 ? '' : 's'}` };
      }
    }
  }

  /** The human puts the robot down standing (at the start pose, or where `initial` says); refused while it runs or has no power. */
  private putDown(
    action: 'human_reset' | 'place',
    initial: (() => InitialState) | undefined,
    say: { motors: string; state: string; done: string },
  ): ControlResult {
    if (this.backend.run || this.bridge?.episodeRunning)
      return { ok: false, message: `${action} refused: an episode is running; stop it first` };
    if (this.interlock?.state === 'ESTOP')
      return {
        ok: false,
        message: `${action} refused: the e-stop is pressed (the motors have no power); release it first (release_estop)`,
      };
    const r = this.core.humanReset(initial?.());
    this.motors(say.motors, action);
    this.bridge?.robotState('idle', say.state);
    return { ok: true, message: `${action}: ${say.done} (root z ${r.rootPosM[2].toFixed(3)} m)` };
  }
}
