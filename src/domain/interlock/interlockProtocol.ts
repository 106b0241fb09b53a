// The serial safety-interlock line protocol (DESIGN §5.2), pure: constants, message types,
// line framing, parsing and formatting. No I/O.
//
//   115200 8N1, ASCII lines terminated by "\n" ("\r\n" accepted on input).
//   console → device:  HB <seq>      every 20 ms; <seq> is an unsigned 32-bit counter
//                      ARM           ask the box to arm (it refuses when not SAFE or not fresh)
//                      DISARM        back to SAFE
//   device → console:  ST <SAFE|ARMED|ESTOP> <seq>   answers each heartbeat, echoing its seq
//                      EV ESTOP      the e-stop was pressed (or the dead-man released)
//                      EV RESET      the e-stop was released; the box is SAFE, not ARMED
//
// A line of more than 64 bytes (terminator excluded), a non-ASCII or control byte, an unknown
// keyword, a wrong argument count, an unknown state or a malformed seq is a *problem*: it is
// returned (and counted by the caller), never thrown.

export const INTERLOCK_PROTOCOL = {
  baudRate: 115200,
  dataBits: 8,
  parity: 'none',
  stopBits: 1,
  /** Console sends HB every this many ms. */
  heartbeatPeriodMs: 20,
  /** No valid status for longer than this = interlock lost = trip. The box applies the same limit to heartbeats. */
  silenceLimitMs: 100,
  /** Longest accepted line, in bytes, without its terminator. */
  maxLineBytes: 64,
  /** Sequence numbers are unsigned 32-bit and wrap. */
  seqModulo: 2 ** 32,
} as const;

export const DEVICE_STATES = ['SAFE', 'ARMED', 'ESTOP'] as const;
export type DeviceState = (typeof DEVICE_STATES)[number];
export const DEVICE_EVENTS = ['ESTOP', 'RESET'] as const;
export type DeviceEvent = (typeof DEVICE_EVENTS)[number];

export type ConsoleMessage = { kind: 'heartbeat'; seq: number } | { kind: 'arm' } | { kind: 'disarm' };
export type DeviceMessage = { kind: 'status'; state: DeviceState; seq: number } | { kind: 'event'; event: DeviceEvent };

/** Why a received line was not a message. */
export const LINE_PROBLEMS = [
  'empty',
  'overlong',
  'non_ascii',
  'unknown_keyword',
  'bad_arguments',
  'bad_state',
  'bad_event',
  'bad_seq',
] as const;
export type LineProblem = (typeof LINE_PROBLEMS)[number];

export type ParsedLine<M> = { ok: true; message: M } | { ok: false; problem: LineProblem; line: string };

// ---- sequence numbers -------------------------------------------------------------------

const SEQ_RE = /^[0-9]{1,10}$/;

/** A decimal uint32, or undefined (signs, hex, exponents, > 4294967295 are refused). */
export function parseSeq(token: string): number | undefined {
  if (!SEQ_RE.test(token)) return undefined;
  const v = Number(token);
  return v <= 0xffffffff ? v : undefined;
}

export const nextSeq = (seq: number): number => (seq + 1) >>> 0;

/** True when `a` comes after `b` in wrapping uint32 order (less than half the ring ahead). */
export function seqAfter(a: number, b: number): boolean {
  const d = (a - b) >>> 0;
  return d !== 0 && d < 0x80000000;
}

// ---- formatting --------------------------------------------------------------------------

export function formatConsoleMessage(m: ConsoleMessage): string {
  switch (m.kind) {
    case 'heartbeat':
      return `HB ${m.seq >>> 0}\n`;
    case 'arm':
      return 'ARM\n';
    case 'disarm':
      return 'DISARM\n';
  }
}

export function formatDeviceMessage(m: DeviceMessage): string {
  return m.kind === 'status' ? `ST ${m.state} ${m.seq >>> 0}\n` : `EV ${m.event}\n`;
}

// ---- parsing -----------------------------------------------------------------------------

const bad = <M>(problem: LineProblem, line: string): ParsedLine<M> => ({ ok: false, problem, line });

function tokens(line: string): string[] | LineProblem {
  if (line.length > INTERLOCK_PROTOCOL.maxLineBytes) return 'overlong';
  // Printable ASCII and tab only (the framer has already removed the terminator).
  if (/[^\x20-\x7e\t]/.test(line)) return 'non_ascii';
  const t = line.trim();
  if (t === '') return 'empty';
  return t.split(/[ \t]+/);
}

/** Parses one line received by the console (terminator already removed; a trailing "\r" is tolerated). */
export function parseDeviceLine(raw: string): ParsedLine<DeviceMessage> {
  const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  const t = tokens(line);
  if (typeof t === 'string') return bad(t, line);
  switch (t[0]) {
    case 'ST': {
      if (t.length !== 3) return bad('bad_arguments', line);
      const state = t[1] as DeviceState;
      if (!DEVICE_STATES.includes(state)) return bad('bad_state', line);
      const seq = parseSeq(t[2]);
      if (seq === undefined) return bad('bad_seq', line);
      return { ok: true, message: { kind: 'status', state, seq } };
    }
    case 'EV': {
      if (t.length !== 2) return bad('bad_arguments', line);
      const event = t[1] as DeviceEvent;
      if (!DEVICE_EVENTS.includes(event)) return bad('bad_event', line);
      return { ok: true, message: { kind: 'event', event } };
    }
    default:
      return bad('unknown_keyword', line);
  }
}

/** Parses one line received by the device (the emulator's side). */
export function parseConsoleLine(raw: string): ParsedLine<ConsoleMessage> {
  const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  const t = tokens(line);
  if (typeof t === 'string') return bad(t, line);
  switch (t[0]) {
    case 'HB': {
      if (t.length !== 2) return bad('bad_arguments', line);
      const seq = parseSeq(t[1]);
      if (seq === undefined) return bad('bad_seq', line);
      return { ok: true, message: { kind: 'heartbeat', seq } };
    }
    case 'ARM':
    case 'DISARM':
      if (t.length !== 1) return bad('bad_arguments', line);
      return { ok: true, message: { kind: t[0] === 'ARM' ? 'arm' : 'disarm' } };
    default:
      return bad('unknown_keyword', line);
  }
}

// ---- framing -----------------------------------------------------------------------------

/** One unit out of the framer: a complete line's text, or a framing problem. */
export type FramedLine = { ok: true; text: string } | { ok: false; problem: 'overlong' | 'non_ascii'; bytes: number };

/**
 * Splits a byte stream into lines at "\n", dropping one "\r" before it. Memory is bounded: a
 * line that grows past `maxLineBytes` is reported once as `overlong` the moment it does, and
 * the rest of it (up to the next "\n") is discarded. Bytes outside printable ASCII (tab and a
 * final "\r" allowed) make the line `non_ascii`. Chunk boundaries may fall anywhere.
 */
export class LineFramer {
  private readonly buf: Uint8Array;
  private len = 0;
  private discarding = false;

  constructor(private readonly maxLineBytes: number = INTERLOCK_PROTOCOL.maxLineBytes) {
    // +1: room for a "\r" that turns out to be the terminator's.
    this.buf = new Uint8Array(maxLineBytes + 1);
  }

  /** Bytes held for an unfinished line. */
  get pendingBytes(): number {
    return this.len;
  }

  push(chunk: Uint8Array): FramedLine[] {
    const out: FramedLine[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === 0x0a) {
        if (this.discarding) {
          this.discarding = false;
        } else {
          out.push(this.finishLine());
        }
        this.len = 0;
        continue;
      }
      if (this.discarding) continue;
      if (this.len >= this.buf.length) {
        // maxLineBytes + 1 bytes held and still no "\n": overlong whatever comes next.
        out.push({ ok: false, problem: 'overlong', bytes: this.len + 1 });
        this.discarding = true;
        this.len = 0;
        continue;
      }
      this.buf[this.len++] = b;
    }
    return out;
  }

  /** Forgets any partial line (after a port reopen). */
  reset(): void {
    this.len = 0;
    this.discarding = false;
  }

  private finishLine(): FramedLine {
    let n = this.len;
    if (n > 0 && this.buf[n - 1] === 0x0d) n--;
    if (n > this.maxLineBytes) return { ok: false, problem: 'overlong', bytes: n };
    let text = '';
    for (let i = 0; i < n; i++) {
      const b = this.buf[i];
      if ((b < 0x20 && b !== 0x09) || b > 0x7e) return { ok: false, problem: 'non_ascii', bytes: n };
      text += String.fromCharCode(b);
    }
    return { ok: true, text };
  }
}
