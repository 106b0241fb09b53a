import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { DeviceState } from '../../domain/interlock';
import type { InterlockEmulatorOptions } from './interlockEmulator';
import type { FromBox, ToBox } from './interlockEmulatorChild';

// The emulated interlock box in a process of its own (interlockEmulatorChild.ts): what the robot
// emulator drives — the box's state (its ESTOP damps the robot), its e-stop button — with the
// box's timing independent of the robot's 500 Hz loop, as a real box's microcontroller is.
// Emits 'state' (DeviceState, atHrMs: when it changed, process.hrtime ms) like InterlockEmulator.
// The e-stop button acts at once on this side, as the real button cuts power the instant it is
// pressed: pressEstop() makes `state` ESTOP (and emits it) synchronously, releaseEstop() SAFE (the
// box's state after EV RESET; nothing if it was not pressed), and reports the box sent before it carried out that press are
// ignored (their afterSeq is older); every later change of the box's own (ARM, its watchdog) is
// taken as it comes.

const BOOTSTRAP = new URL('./childBootstrap.mjs', import.meta.url);
const ENTRY = new URL('./interlockEmulatorChild.ts', import.meta.url);

export interface InterlockBoxProcess extends EventEmitter {
  readonly path: string;
  /** The box process's pid. */
  readonly pid: number;
  readonly state: DeviceState;
  pressEstop(): void;
  releaseEstop(): void;
  close(): Promise<void>;
  readonly closed: Promise<void>;
}

export async function startInterlockEmulatorProcess(
  options: Pick<InterlockEmulatorOptions, 'path' | 'watchdogMs' | 'watchdogTripTo'>,
): Promise<InterlockBoxProcess> {
  const child = spawn(process.execPath, [fileURLToPath(BOOTSTRAP), ENTRY.href], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // A session of its own, as the box is a device of its own: it raises its session's scheduling
    // weight (threadPriority.ts) so the robot's 500 Hz loop or a browser cannot delay its answers.
    detached: true,
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    serialization: 'json',
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const toBox = (m: ToBox): void => {
    if (child.connected) child.send(m);
  };
  let state: DeviceState = 'SAFE';
  let buttonSeq = 0;
  /** This side pressed the e-stop and has not released it (the box's latch, mirrored). */
  let latched = false;
  class BoxProcess extends EventEmitter implements InterlockBoxProcess {
    readonly path = options.path;
    readonly pid = child.pid ?? -1;
    readonly closed = exited;
    get state(): DeviceState {
      return state;
    }
    pressEstop(): void {
      toBox({ t: 'estop', seq: ++buttonSeq });
      latched = true;
      this.set('ESTOP', Number(process.hrtime.bigint()) / 1e6);
    }
    releaseEstop(): void {
      toBox({ t: 'release', seq: ++buttonSeq });
      // As the box: releasing a button that was not pressed changes nothing.
      if (!latched) return;
      latched = false;
      this.set('SAFE', Number(process.hrtime.bigint()) / 1e6);
    }
    set(next: DeviceState, atHrMs: number): void {
      if (next === state) return;
      state = next;
      this.emit('state', next, atHrMs);
    }
    async close(): Promise<void> {
      toBox({ t: 'close' });
      const t = setTimeout(() => child.kill('SIGKILL'), 1000);
      await exited;
      clearTimeout(t);
    }
  }
  const box = new BoxProcess();
  const started = new Promise<void>((resolve, reject) => {
    child.on('message', (m: FromBox) => {
      if (m.t === 'started') {
        state = m.state;
        resolve();
      } else if (m.t === 'start_failed') reject(new Error(m.message));
      else if (m.t === 'state' && m.afterSeq >= buttonSeq) box.set(m.state, m.atHrMs);
    });
    void exited.then(() => reject(new Error(`the interlock box process exited before starting on ${options.path}`)));
  });
  toBox({ t: 'start', options });
  await started;
  return box;
}
