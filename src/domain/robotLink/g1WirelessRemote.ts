import { InputError } from '../problems';
import { WIRELESS_REMOTE_BYTES } from './unitreeHgWire';

// The G1 wireless remote as LowState_.wireless_remote[40] carries it (docs/ROBOT_EMULATOR.md,
// "G1 on DDS"). Layout as unitree_sdk2 reads it (include/unitree/dds_wrapper/common/
// unitree_joystick.hpp, REMOTE_DATA_RX / BtnDataStruct / BtnUnion), little-endian:
//   bytes 0–1    head
//   bytes 2–3    buttons, a uint16 of one-bit fields from its least significant bit:
//                byte 2: bit 0 R1, 1 L1, 2 Start, 3 Select, 4 R2, 5 L2, 6 F1, 7 F2
//                byte 3: bit 0 A, 1 B, 2 X, 3 Y, 4 up, 5 right, 6 down, 7 left
//   bytes 4–23   float32 lx, rx, ry, L2 (analogue trigger), ly
//   bytes 24–39  unused
// The SDK's joystick names L2 "LT", R2 "RT", L1 "LB", R1 "RB", Select "back".
//
// The stop combination: unitree_rl_lab's G1 deploy state machine
// (deploy/robots/g1_29dof/config/config.yaml) leaves every active state for `Passive` (damping,
// kd 3 on every joint) on `LT + B`, i.e. L2 held and B pressed.

export const G1_REMOTE_BUTTONS = [
  'R1',
  'L1',
  'Start',
  'Select',
  'R2',
  'L2',
  'F1',
  'F2',
  'A',
  'B',
  'X',
  'Y',
  'up',
  'right',
  'down',
  'left',
] as const;
export type G1RemoteButton = (typeof G1_REMOTE_BUTTONS)[number];

export const G1_REMOTE_BUTTONS_OFFSET = 2;
export const G1_REMOTE_AXES_OFFSET = 4;
export const G1_REMOTE_AXES = ['lx', 'rx', 'ry', 'L2', 'ly'] as const;
export type G1RemoteAxis = (typeof G1_REMOTE_AXES)[number];

/** The buttons of the remote's stop (damping) combination in unitree_rl_lab's G1 deploy: LT + B. */
export const G1_REMOTE_STOP_COMBINATION: readonly G1RemoteButton[] = ['L2', 'B'];

export interface G1RemoteState {
  buttons: readonly G1RemoteButton[];
  axes?: Partial<Record<G1RemoteAxis, number>>;
}

/** The 40 wireless_remote bytes of these buttons held and these stick values. */
export function encodeG1Remote(state: G1RemoteState, out = new Uint8Array(WIRELESS_REMOTE_BYTES)): Uint8Array {
  if (out.length !== WIRELESS_REMOTE_BYTES)
    throw new InputError(
      { file: 'wireless_remote', key: 'length' },
      `${out.length} bytes; the field is ${WIRELESS_REMOTE_BYTES}`,
    );
  out.fill(0);
  let bits = 0;
  for (const b of state.buttons) {
    const i = G1_REMOTE_BUTTONS.indexOf(b);
    if (i < 0)
      throw new InputError({ file: 'wireless_remote', key: 'buttons' }, `"${String(b)}" is not a G1 remote button`);
    bits |= 1 << i;
  }
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  v.setUint16(G1_REMOTE_BUTTONS_OFFSET, bits, true);
  G1_REMOTE_AXES.forEach((a, i) => {
    const x = state.axes?.[a] ?? 0;
    if (!Number.isFinite(x))
      throw new InputError({ file: 'wireless_remote', key: `axes.${a}` }, `${x} is not a finite number`);
    v.setFloat32(G1_REMOTE_AXES_OFFSET + 4 * i, x, true);
  });
  return out;
}

/** The buttons held in 40 wireless_remote bytes. */
export function g1RemoteButtons(bytes: Uint8Array): G1RemoteButton[] {
  if (bytes.length !== WIRELESS_REMOTE_BYTES)
    throw new InputError(
      { file: 'wireless_remote', key: 'length' },
      `${bytes.length} bytes; the field is ${WIRELESS_REMOTE_BYTES}`,
    );
  const bits = bytes[G1_REMOTE_BUTTONS_OFFSET] | (bytes[G1_REMOTE_BUTTONS_OFFSET + 1] << 8);
  return G1_REMOTE_BUTTONS.filter((_, i) => (bits & (1 << i)) !== 0);
}

/** Whether the remote's stop combination (L2 + B) is held. */
export function g1RemoteStopHeld(bytes: Uint8Array): boolean {
  const held = g1RemoteButtons(bytes);
  return G1_REMOTE_STOP_COMBINATION.every((b) => held.includes(b));
}
