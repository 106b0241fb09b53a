import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  INTERLOCK_PROTOCOL,
  LineFramer,
  formatConsoleMessage,
  formatDeviceMessage,
  nextSeq,
  parseConsoleLine,
  parseDeviceLine,
  parseSeq,
  seqAfter,
  type ConsoleMessage,
  type DeviceMessage,
  type FramedLine,
} from '../../src/domain/interlock';

const bytes = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);
const frameAll = (s: string): FramedLine[] => new LineFramer().push(bytes(s));

describe('interlock protocol: sequence numbers', () => {
  it('accepts decimal uint32 only', () => {
    expect(parseSeq('0')).toBe(0);
    expect(parseSeq('007')).toBe(7);
    expect(parseSeq('4294967295')).toBe(4294967295);
    for (const bad of ['', '4294967296', '99999999999', '-1', '+1', '1e3', '0x10', '1.5', ' 1', 'NaN', 'Infinity'])
      expect(parseSeq(bad), bad).toBeUndefined();
  });

  it('wraps and orders across 2^32', () => {
    expect(nextSeq(0xffffffff)).toBe(0);
    expect(seqAfter(0, 0xffffffff)).toBe(true);
    expect(seqAfter(0xffffffff, 0)).toBe(false);
    expect(seqAfter(5, 5)).toBe(false);
    expect(seqAfter(6, 5)).toBe(true);
    expect(seqAfter(4, 5)).toBe(false);
  });
});

describe('interlock protocol: lines', () => {
  it('formats and parses every message both ways', () => {
    const consoleMsgs: ConsoleMessage[] = [
      { kind: 'heartbeat', seq: 0 },
      { kind: 'heartbeat', seq: 4294967295 },
      { kind: 'arm' },
      { kind: 'disarm' },
    ];
    expect(consoleMsgs.map(formatConsoleMessage)).toEqual(['HB 0\n', 'HB 4294967295\n', 'ARM\n', 'DISARM\n']);
    for (const m of consoleMsgs)
      expect(parseConsoleLine(formatConsoleMessage(m).slice(0, -1))).toEqual({ ok: true, message: m });
    const deviceMsgs: DeviceMessage[] = [
      { kind: 'status', state: 'SAFE', seq: 1 },
      { kind: 'status', state: 'ARMED', seq: 2 },
      { kind: 'status', state: 'ESTOP', seq: 3 },
      { kind: 'event', event: 'ESTOP' },
      { kind: 'event', event: 'RESET' },
    ];
    expect(deviceMsgs.map(formatDeviceMessage).join('')).toBe(
      'ST SAFE 1\nST ARMED 2\nST ESTOP 3\nEV ESTOP\nEV RESET\n',
    );
    for (const m of deviceMsgs)
      expect(parseDeviceLine(formatDeviceMessage(m).slice(0, -1))).toEqual({ ok: true, message: m });
  });

  it('round-trips any seq', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.constantFrom('SAFE', 'ARMED', 'ESTOP' as const),
        (seq, state) => {
          expect(parseDeviceLine(formatDeviceMessage({ kind: 'status', state, seq }).trimEnd())).toEqual({
            ok: true,
            message: { kind: 'status', state, seq },
          });
          expect(parseConsoleLine(formatConsoleMessage({ kind: 'heartbeat', seq }).trimEnd())).toEqual({
            ok: true,
            message: { kind: 'heartbeat', seq },
          });
        },
      ),
    );
  });

  it('tolerates a trailing CR and extra blanks, nothing else', () => {
    expect(parseDeviceLine('ST ARMED 12\r')).toEqual({
      ok: true,
      message: { kind: 'status', state: 'ARMED', seq: 12 },
    });
    expect(parseDeviceLine('  ST\tSAFE   3 ')).toEqual({
      ok: true,
      message: { kind: 'status', state: 'SAFE', seq: 3 },
    });
  });

  it.each([
    ['', 'empty'],
    ['   ', 'empty'],
    ['hello', 'unknown_keyword'],
    ['st safe 1', 'unknown_keyword'],
    ['ST', 'bad_arguments'],
    ['ST SAFE', 'bad_arguments'],
    ['ST SAFE 1 2', 'bad_arguments'],
    ['ST MAYBE 1', 'bad_state'],
    ['ST armed 1', 'bad_state'],
    ['ST SAFE -1', 'bad_seq'],
    ['ST SAFE 4294967296', 'bad_seq'],
    ['ST SAFE 1e3', 'bad_seq'],
    ['EV', 'bad_arguments'],
    ['EV BOOM', 'bad_event'],
    ['EV ESTOP now', 'bad_arguments'],
    ['ST SAFE 1\x00', 'non_ascii'],
    ['ST SAFE 1\u00e9', 'non_ascii'],
    [`ST SAFE ${'1'.repeat(60)}`, 'overlong'],
    ['HB 1', 'unknown_keyword'],
  ])('device line %j is a %s problem', (line, problem) => {
    expect(parseDeviceLine(line)).toEqual({ ok: false, problem, line });
  });

  it.each([
    ['HB', 'bad_arguments'],
    ['HB x', 'bad_seq'],
    ['ARM now', 'bad_arguments'],
    ['ST SAFE 1', 'unknown_keyword'],
    ['arm', 'unknown_keyword'],
  ])('console line %j is a %s problem', (line, problem) => {
    expect(parseConsoleLine(line)).toMatchObject({ ok: false, problem });
  });

  it('never throws, whatever the line', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        const a = parseDeviceLine(s);
        const b = parseConsoleLine(s);
        expect(typeof a.ok).toBe('boolean');
        expect(typeof b.ok).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
  });
});

describe('interlock protocol: framing', () => {
  it('splits at LF, drops one CR, keeps empty lines as lines', () => {
    expect(frameAll('ST SAFE 1\nST ARMED 2\r\n\r\nEV ESTOP\n')).toEqual([
      { ok: true, text: 'ST SAFE 1' },
      { ok: true, text: 'ST ARMED 2' },
      { ok: true, text: '' },
      { ok: true, text: 'EV ESTOP' },
    ]);
  });

  it('holds a partial line until its LF arrives', () => {
    const f = new LineFramer();
    expect(f.push(bytes('ST SA'))).toEqual([]);
    expect(f.pendingBytes).toBe(5);
    expect(f.push(bytes('FE 9\nST'))).toEqual([{ ok: true, text: 'ST SAFE 9' }]);
    expect(f.pendingBytes).toBe(2);
  });

  it('accepts exactly 64 bytes (plus CR), refuses 65, and resynchronises at the next LF', () => {
    const max = INTERLOCK_PROTOCOL.maxLineBytes;
    const at = 'x'.repeat(max);
    expect(frameAll(`${at}\n`)).toEqual([{ ok: true, text: at }]);
    expect(frameAll(`${at}\r\n`)).toEqual([{ ok: true, text: at }]);
    expect(frameAll(`${at}y\n`)).toEqual([{ ok: false, problem: 'overlong', bytes: max + 1 }]);
    // Long garbage is reported once, as soon as it passes the limit, and the next line is fine.
    const f = new LineFramer();
    const out = f.push(bytes(`${'z'.repeat(max + 2)}`));
    expect(out).toEqual([{ ok: false, problem: 'overlong', bytes: max + 2 }]);
    expect(f.push(bytes('z'.repeat(10_000)))).toEqual([]);
    expect(f.pendingBytes).toBe(0);
    expect(f.push(bytes('zz\nST SAFE 1\n'))).toEqual([{ ok: true, text: 'ST SAFE 1' }]);
  });

  it('flags control and non-ASCII bytes', () => {
    expect(frameAll('ST\x00SAFE 1\n\xffST SAFE 1\nST\tSAFE 2\n')).toEqual([
      { ok: false, problem: 'non_ascii', bytes: 9 },
      { ok: false, problem: 'non_ascii', bytes: 10 },
      { ok: true, text: 'ST\tSAFE 2' },
    ]);
  });

  it('gives the same lines however the stream is cut, and never holds more than 65 bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.array(fc.nat(600), { maxLength: 20 }), (stream, cuts) => {
        const whole = new LineFramer().push(stream);
        const f = new LineFramer();
        const pieces: FramedLine[] = [];
        const points = [...new Set(cuts.map((c) => Math.min(c, stream.length)))].sort((a, b) => a - b);
        let from = 0;
        for (const p of [...points, stream.length]) {
          pieces.push(...f.push(stream.subarray(from, p)));
          expect(f.pendingBytes).toBeLessThanOrEqual(INTERLOCK_PROTOCOL.maxLineBytes + 1);
          from = p;
        }
        expect(pieces).toEqual(whole);
      }),
      { numRuns: 1000 },
    );
  });
});
