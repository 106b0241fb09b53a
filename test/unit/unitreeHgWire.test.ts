import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/problems';
import {
  crc32Mpeg2,
  decodeLowCmd,
  decodeLowState,
  encodeLowCmd,
  encodeLowState,
  LOW_CMD_BYTES,
  LOW_CMD_CRC_OFFSET,
  LOW_STATE_BYTES,
  LOW_STATE_CRC_OFFSET,
  lowCmdCrcValid,
  lowStateCrcValid,
  unitreeCrc32,
} from '../../src/domain/robotLink/unitreeHgWire';
import { REPO_ROOT } from '../helpers/sharedData';
import { sampleLowCmd, sampleLowState } from '../helpers/unitreeHgSamples';

// The reference is a C program written from the message definitions (its own structs, natural
// alignment, zero padding) computing the CRC bit by bit, compiled here with gcc: layout and CRC
// are checked against the C compiler, not against our own packing.
interface CReference {
  size: number;
  crcOffset: number;
  bytes: Uint8Array;
  crc: number;
}

let dir = '';
let lowCmdRef: CReference;
let lowStateRef: CReference;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'unitree-crc-'));
  const exe = path.join(dir, 'ref');
  execFileSync('gcc', ['-O1', '-o', exe, path.join(REPO_ROOT, 'test/fixtures/dds/unitreeCrcReference.c')]);
  const lines = execFileSync(exe, { encoding: 'utf8' }).trim().split('\n');
  const parse = (at: number): CReference => {
    const [size, crcOffset] = lines[at].split(' ').map(Number);
    return { size, crcOffset, bytes: Buffer.from(lines[at + 1], 'hex'), crc: parseInt(lines[at + 2], 16) };
  };
  lowCmdRef = parse(0);
  lowStateRef = parse(3);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Unitree CRC-32 (unitree_sdk2 Crc32Core)', () => {
  it('is CRC-32/MPEG-2 over bytes: the catalogue check value of "123456789"', () => {
    expect(crc32Mpeg2(new TextEncoder().encode('123456789'))).toBe(0x0376e6e7);
  });

  it('feeds each little-endian word most significant byte first', () => {
    const words = new Uint8Array([0x34, 0x33, 0x32, 0x31, 0x38, 0x37, 0x36, 0x35]);
    expect(unitreeCrc32(words, 2)).toBe(crc32Mpeg2(new TextEncoder().encode('12345678')));
    // Negative control: the bytes in memory order are a different stream.
    expect(unitreeCrc32(words, 2)).not.toBe(crc32Mpeg2(words));
  });

  it('LowCmd_: the C struct is 1004 bytes, ours are byte-identical and carry the same CRC', () => {
    expect(lowCmdRef.size).toBe(LOW_CMD_BYTES);
    expect(lowCmdRef.crcOffset).toBe(LOW_CMD_CRC_OFFSET);
    const ours = encodeLowCmd(sampleLowCmd());
    expect(Buffer.from(ours).toString('hex')).toBe(Buffer.from(lowCmdRef.bytes).toString('hex'));
    expect(decodeLowCmd(ours).crc).toBe(lowCmdRef.crc);
    expect(lowCmdCrcValid(lowCmdRef.bytes)).toBe(true);
  });

  it('LowState_: the C struct is 2092 bytes, ours are byte-identical and carry the same CRC', () => {
    expect(lowStateRef.size).toBe(LOW_STATE_BYTES);
    expect(lowStateRef.crcOffset).toBe(LOW_STATE_CRC_OFFSET);
    const ours = encodeLowState(sampleLowState());
    expect(Buffer.from(ours).toString('hex')).toBe(Buffer.from(lowStateRef.bytes).toString('hex'));
    expect(decodeLowState(ours).crc).toBe(lowStateRef.crc);
    expect(lowStateCrcValid(lowStateRef.bytes)).toBe(true);
  });

  it('negative controls: one field changed by one ulp, or the crc word itself, fails the check', () => {
    const cmd = sampleLowCmd();
    const other = sampleLowCmd();
    other.kp[12] = Math.fround(other.kp[12] + 2 ** -18); // the next float32 above 52
    expect(other.kp[12]).not.toBe(cmd.kp[12]);
    const a = encodeLowCmd(cmd);
    const b = encodeLowCmd(other);
    expect(decodeLowCmd(a).crc).not.toBe(decodeLowCmd(b).crc);
    const tampered = Uint8Array.from(a);
    tampered[4 + 12 * 28 + 16] ^= 0x01;
    expect(lowCmdCrcValid(tampered)).toBe(false);
    const badCrc = Uint8Array.from(lowStateRef.bytes);
    badCrc[LOW_STATE_CRC_OFFSET] ^= 0x80;
    expect(lowStateCrcValid(badCrc)).toBe(false);
    const badTick = Uint8Array.from(lowStateRef.bytes);
    badTick[12] ^= 0x01;
    expect(lowStateCrcValid(badTick)).toBe(false);
  });

  it('padding counts as zero: a sender leaving garbage in padding still checks', () => {
    const bytes = encodeLowCmd(sampleLowCmd());
    bytes[2] = 0xaa;
    bytes[4 + 5 * 28 + 2] = 0x55;
    expect(lowCmdCrcValid(bytes)).toBe(true);
    const state = encodeLowState(sampleLowState());
    state[10] = 0xaa;
    state[70] = 0x11;
    state[72 + 34 * 56 + 3] = 0x99;
    expect(lowStateCrcValid(state)).toBe(true);
  });

  it('refuses a sample of any other length before reading it, with the message named', () => {
    for (const n of [0, LOW_CMD_BYTES - 1, LOW_CMD_BYTES + 4, 1 << 20]) {
      const t0 = performance.now();
      expect(() => decodeLowCmd(new Uint8Array(n))).toThrow(InputError);
      expect(() => lowCmdCrcValid(new Uint8Array(n))).toThrow(/LowCmd_ \[length\]/);
      expect(performance.now() - t0).toBeLessThan(50);
    }
    expect(() => decodeLowState(new Uint8Array(LOW_CMD_BYTES))).toThrow(
      /LowState_ \[length\]: 1004 bytes; the message is 2092/,
    );
    expect(() => unitreeCrc32(new Uint8Array(8), 3)).toThrow(RangeError);
  });
});
