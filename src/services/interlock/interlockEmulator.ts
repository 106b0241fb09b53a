import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { SerialPort } from 'serialport';
import { openInterlockSerial } from './hangupAwareBinding';
import {
  INTERLOCK_PROTOCOL,
  InterlockDeviceModel,
  LineFramer,
  formatDeviceMessage,
  type DeviceMessage,
  type DeviceState,
  type InterlockDeviceCounters,
} from '../../domain/interlock';

// The interlock box, emulated on the far end of a real serial device (in the tests: one end of
// a socat pseudo-terminal pair). It runs the pure InterlockDeviceModel: answers every HB with
// ST, obeys ARM/DISARM, trips itself after watchdogMs without heartbeats, and can be told to
// press/release the e-stop (EV ESTOP / EV RESET), go silent (stop sending anything while still
// listening), or send garbage. Used by the tests and by `motionbench emulate-interlock`.

export interface InterlockEmulatorOptions {
  path: string;
  baudRate?: number;
  watchdogMs?: number;
  watchdogTripTo?: 'SAFE' | 'ESTOP';
  /** Watchdog check period, ms (default 5). */
  tickMs?: number;
  now?: () => number;
}

export type GarbageKind = 'noise' | 'overlong' | 'binary' | 'bad_seq' | 'unknown_state' | 'partial_crlf';

/** A sample of every kind of garbage a console must survive. */
export const GARBAGE_LINES: Record<GarbageKind, string> = {
  noise: 'hello from the box\n',
  overlong: `ST SAFE ${'9'.repeat(80)}\n`,
  binary: '\x00\xff\x13ST ARMED 1\n',
  bad_seq: 'ST ARMED -1\nST ARMED 1e3\nST SAFE 99999999999\nST SAFE\n',
  unknown_state: 'ST MAYBE 1\nEV BOOM\n',
  partial_crlf: '\r\n\n   \n',
};

export interface InterlockEmulatorStats extends InterlockDeviceCounters {
  state: DeviceState;
  silent: boolean;
  lastSeq: number | null;
  statusesWritten: number;
  /** performance.now() of the last ST written (ms). */
  lastStatusWrittenAtMs: number | null;
  linesReceived: number;
}

export interface InterlockEmulator extends EventEmitter {
  readonly path: string;
  readonly state: DeviceState;
  readonly silent: boolean;
  /** Press the e-stop: ESTOP at once, EV ESTOP sent (unless silent). */
  pressEstop(): void;
  /** Release it: EV RESET, SAFE (never ARMED). */
  releaseEstop(): void;
  /** Stop (or resume) sending anything; heartbeats are still received and feed the watchdog. */
  setSilent(silent: boolean): void;
  sendGarbage(kind?: GarbageKind | 'all'): Promise<void>;
  sendRaw(text: string | Uint8Array): Promise<void>;
  stats(): InterlockEmulatorStats;
  close(): Promise<void>;
  readonly closed: Promise<void>;
}

class Emulator extends EventEmitter implements InterlockEmulator {
  private readonly device: InterlockDeviceModel;
  private readonly framer = new LineFramer(INTERLOCK_PROTOCOL.maxLineBytes);
  private timer: NodeJS.Timeout | null = null;
  private _silent = false;
  private statusesWritten = 0;
  private lastStatusWrittenAtMs: number | null = null;
  private linesReceived = 0;
  private ended = false;
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;

  constructor(
    readonly path: string,
    private readonly port: SerialPort,
    options: InterlockEmulatorOptions,
    private readonly now: () => number,
  ) {
    super();
    this.device = new InterlockDeviceModel({ watchdogMs: options.watchdogMs, watchdogTripTo: options.watchdogTripTo });
    this.closed = new Promise((r) => (this.resolveClosed = r));
    port.on('data', (chunk: Buffer) => {
      const t = this.now();
      for (const item of this.framer.push(chunk)) {
        this.linesReceived++;
        const line = item.ok ? item.text : `<${item.problem}>`;
        this.emit('line', line, t);
        const before = this.device.state;
        if (item.ok) this.write(this.device.onLine(item.text, t));
        else this.device.countProblem(item.problem);
        if (this.device.state !== before) this.emit('state', this.device.state, t);
      }
    });
    port.on('close', () => this.finish());
    port.on('error', () => this.finish());
    const tickMs = options.tickMs ?? 5;
    const tick = (): void => {
      const before = this.device.state;
      this.write(this.device.tick(this.now()));
      if (this.device.state !== before) this.emit('state', this.device.state, this.now());
      if (!this.ended) this.timer = setTimeout(tick, tickMs);
    };
    this.timer = setTimeout(tick, tickMs);
  }

  get state(): DeviceState {
    return this.device.state;
  }

  get silent(): boolean {
    return this._silent;
  }

  pressEstop(): void {
    this.write(this.device.pressEstop());
    this.emit('state', this.device.state, this.now());
  }

  releaseEstop(): void {
    this.write(this.device.releaseEstop());
    this.emit('state', this.device.state, this.now());
  }

  setSilent(silent: boolean): void {
    this._silent = silent;
  }

  async sendGarbage(kind: GarbageKind | 'all' = 'all'): Promise<void> {
    const text = kind === 'all' ? Object.values(GARBAGE_LINES).join('') : GARBAGE_LINES[kind];
    await this.sendRaw(Buffer.from(text, 'latin1'));
  }

  sendRaw(text: string | Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.ended) return reject(new Error('emulator port closed'));
      this.port.write(typeof text === 'string' ? Buffer.from(text, 'latin1') : text, (err) =>
        err ? reject(err) : resolve(),
      );
    });
  }

  stats(): InterlockEmulatorStats {
    return {
      ...this.device.counters,
      problems: { ...this.device.counters.problems },
      state: this.device.state,
      silent: this._silent,
      lastSeq: this.device.lastSeq,
      statusesWritten: this.statusesWritten,
      lastStatusWrittenAtMs: this.lastStatusWrittenAtMs,
      linesReceived: this.linesReceived,
    };
  }

  async close(): Promise<void> {
    if (this.ended) return;
    this.finish();
    if (this.port.isOpen) await new Promise<void>((resolve) => this.port.close(() => resolve()));
  }

  private write(messages: DeviceMessage[]): void {
    if (messages.length === 0 || this._silent || this.ended || !this.port.isOpen) return;
    let text = '';
    for (const m of messages) {
      text += formatDeviceMessage(m);
      if (m.kind === 'status') {
        this.statusesWritten++;
        this.lastStatusWrittenAtMs = this.now();
      }
    }
    this.port.write(text, () => {});
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.resolveClosed();
    this.emit('closed');
  }
}

export async function startInterlockEmulator(options: InterlockEmulatorOptions): Promise<InterlockEmulator> {
  const port = await openInterlockSerial(options, 'interlock emulator');
  return new Emulator(options.path, port, options, options.now ?? (() => performance.now()));
}
