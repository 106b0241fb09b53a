import { describe, expect, it } from 'vitest';
import {
  encodeG1Remote,
  G1_REMOTE_STOP_COMBINATION,
  g1RemoteButtons,
  g1RemoteStopHeld,
} from '../../src/domain/robotLink/g1WirelessRemote';
import { InputError } from '../../src/domain/problems';
import { decodeG1DdsControl } from '../../src/domain/robotEmulator/g1DdsControl';

describe('G1 wireless remote bytes (unitree_sdk2 unitree_joystick.hpp layout)', () => {
  it('puts each button on its bit of bytes 2–3 (little-endian uint16, R1 = bit 0 … left = bit 15) and the sticks as float32 from byte 4', () => {
    expect(encodeG1Remote({ buttons: ['R1'] })[2]).toBe(0b0000_0001);
    expect(encodeG1Remote({ buttons: ['L2'] })[2]).toBe(0b0010_0000);
    expect(encodeG1Remote({ buttons: ['B'] })[3]).toBe(0b0000_0010);
    expect(encodeG1Remote({ buttons: ['left'] })[3]).toBe(0b1000_0000);
    const b = encodeG1Remote({ buttons: [], axes: { lx: 0.5, ly: -1 } });
    const v = new DataView(b.buffer);
    expect([v.getFloat32(4, true), v.getFloat32(20, true)]).toEqual([0.5, -1]);
    expect(Array.from(b.slice(0, 4))).toEqual([0, 0, 0, 0]);
  });

  it('the stop combination is L2 + B (unitree_rl_lab deploy: LT + B → Passive); one of the two alone is not it', () => {
    expect(G1_REMOTE_STOP_COMBINATION).toEqual(['L2', 'B']);
    expect(g1RemoteStopHeld(encodeG1Remote({ buttons: ['L2', 'B'] }))).toBe(true);
    expect(g1RemoteStopHeld(encodeG1Remote({ buttons: ['L2', 'B', 'up'] }))).toBe(true);
    expect(g1RemoteStopHeld(encodeG1Remote({ buttons: ['B'] }))).toBe(false);
    expect(g1RemoteStopHeld(encodeG1Remote({ buttons: ['L2', 'A'] }))).toBe(false);
    expect(g1RemoteButtons(encodeG1Remote({ buttons: ['Y', 'R1', 'down'] }))).toEqual(['R1', 'Y', 'down']);
  });

  it('refuses bytes of another length, before reading them', () => {
    const t0 = performance.now();
    expect(() => g1RemoteButtons(new Uint8Array(64 * 1024 * 1024))).toThrow(InputError);
    expect(() => g1RemoteButtons(new Uint8Array(39))).toThrow(/wireless_remote \[length\]: 39 bytes; the field is 40/);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});

describe('control actions of the G1 on DDS', () => {
  it('takes remote, gantry, status and the emulator actions; refuses kill_link, unknown buttons and stray keys with the field', () => {
    expect(decodeG1DdsControl({ action: 'remote', buttons: ['L2', 'B'], ms: 500 })).toEqual({
      ok: true,
      value: { action: 'remote', buttons: ['L2', 'B'], ms: 500 },
    });
    expect(decodeG1DdsControl({ action: 'gantry', lift: true }).ok).toBe(true);
    expect(decodeG1DdsControl({ action: 'drop', ms: 300 }).ok).toBe(true);
    expect(decodeG1DdsControl({ action: 'kill_link' })).toMatchObject({ ok: false, reason: /no meaning on DDS/ });
    expect(decodeG1DdsControl({ action: 'remote', buttons: ['Z'] })).toMatchObject({
      ok: false,
      reason: /^buttons\.0/,
    });
    expect(decodeG1DdsControl({ action: 'gantry', lift: true, x: 1 })).toMatchObject({ ok: false });
    expect(decodeG1DdsControl({ action: 'fly' })).toMatchObject({ ok: false, reason: /remote, gantry, status/ });
  });
});
