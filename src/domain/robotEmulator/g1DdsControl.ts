import { z } from 'zod';
import {
  G1_REMOTE_AXES,
  G1_REMOTE_BUTTONS,
  type G1RemoteAxis,
  type G1RemoteButton,
} from '../robotLink/g1WirelessRemote';
import { issueKey } from '../problems';
import { decodeEmulatorControl, EMULATOR_CONTROL_ACTIONS, type EmulatorControlAction } from './emulatorControl';

// The control channel of the emulated G1 on DDS (`motionbench emulate-robot --dds`,
// docs/ROBOT_EMULATOR.md "G1 on DDS"): the robot emulator's `/emulator/control` actions that mean
// something on a G1's wire, plus what only that face has:
//   remote    the wireless remote's buttons (and sticks) as LowState_.wireless_remote carries
//             them, held for `ms` (then released) or until the next remote action
//   gantry    lift the robot onto a gantry (the pelvis held upright above the floor) or lower it
//   status    answers with the emulator's state as JSON (tick, root height, link counters)
// kill_link has no meaning on DDS (there is no connection to end) and is refused there.

export type G1DdsControlAction =
  | Exclude<EmulatorControlAction, { action: 'kill_link' }>
  | { action: 'remote'; buttons: G1RemoteButton[]; axes?: Partial<Record<G1RemoteAxis, number>>; ms?: number }
  | { action: 'gantry'; lift: boolean }
  | { action: 'status' };

export const G1_DDS_CONTROL_ACTIONS = [
  ...EMULATOR_CONTROL_ACTIONS.filter((a) => a !== 'kill_link'),
  'remote',
  'gantry',
  'status',
] as const;

const ExtraSchema = z.discriminatedUnion('action', [
  z
    .object({
      action: z.literal('remote'),
      buttons: z.array(z.enum(G1_REMOTE_BUTTONS)).max(G1_REMOTE_BUTTONS.length),
      axes: z.partialRecord(z.enum(G1_REMOTE_AXES), z.number().finite().min(-1).max(1)).optional(),
      ms: z.number().int().min(1).max(600_000).optional(),
    })
    .strict(),
  z.object({ action: z.literal('gantry'), lift: z.boolean() }).strict(),
  z.object({ action: z.literal('status') }).strict(),
]);

/** Validates a parsed control message for the G1 on DDS; `reason` names the field. */
export function decodeG1DdsControl(
  doc: unknown,
): { ok: true; value: G1DdsControlAction } | { ok: false; reason: string } {
  const action = typeof doc === 'object' && doc !== null ? (doc as { action?: unknown }).action : undefined;
  if (action === 'remote' || action === 'gantry' || action === 'status') {
    const r = ExtraSchema.safeParse(doc);
    if (r.success) return { ok: true, value: r.data as G1DdsControlAction };
    const i = r.error.issues[0];
    return { ok: false, reason: `${issueKey(i.path)}: ${i.message}` };
  }
  if (action === 'kill_link')
    return { ok: false, reason: 'action: kill_link has no meaning on DDS (there is no connection to end)' };
  const d = decodeEmulatorControl(doc);
  if (!d.ok && d.reason.startsWith('action must be one of'))
    return { ok: false, reason: `action must be one of ${G1_DDS_CONTROL_ACTIONS.join(', ')}` };
  return d as { ok: true; value: G1DdsControlAction } | { ok: false; reason: string };
}
