import { z } from 'zod';
import { issueKey } from '../problems';
import { G1_JOINT_NAMES } from '../robot/g1Joints';

// The robot emulator's own client channel `/emulator/control` (docs/ROBOT_EMULATOR.md): what a
// test or an operator sends to play the human beside the robot (human_reset; place: put it down
// at a given pose, as the start-state sensitivity study needs) or to inject a fault (drop,
// freeze, nan, stall, estop, kill_link). Not part of g1-bridge/1: a real bridge has no such
// channel. Also the `--fault <action>@<time>[:<amount>]` CLI schedule.

export const EMULATOR_CONTROL_TOPIC = '/emulator/control';
export const EMULATOR_CONTROL_SCHEMA_NAME = 'motionbench-robot-emulator/1/Control';
/**
 * The serverInfo metadata key by which the emulator declares its control channel (value: the
 * topic). A client reads it — never the server's name — to know it may offer the human reset.
 */
export const EMULATOR_CONTROL_METADATA_KEY = 'emulator_control';

/** Whether a server's metadata declares the emulator's control channel. */
export function declaresEmulatorControl(metadata: Readonly<Record<string, string>>): boolean {
  return metadata[EMULATOR_CONTROL_METADATA_KEY] === EMULATOR_CONTROL_TOPIC;
}

/** Status ids the emulator answers a control message with (a Foxglove status to the sender). */
export const EMULATOR_CONTROL_STATUS_ID = { ok: 'emulator/control/ok', refused: 'emulator/control/refused' } as const;

export type EmulatorControlAction =
  | { action: 'human_reset' }
  | PlaceAction
  | { action: 'drop'; ms: number }
  | { action: 'freeze'; ms: number }
  | { action: 'nan'; frames: number }
  | { action: 'stall'; ms: number }
  | { action: 'estop' }
  | { action: 'release_estop' }
  | { action: 'kill_link' };

/**
 * The human puts the robot down, standing, at this pose: every joint by name (the 29 G1 joints,
 * rad; no order is assumed), the root's orientation as a unit quaternion in w, x, y, z order
 * (world frame; yaw included), the feet then placed on the floor. The emulator holds the pose
 * with its stand PD from there, so the pose it settles in is not exactly this one: whoever asks
 * for a pose measures the one reached.
 */
export interface PlaceAction {
  action: 'place';
  joint_pos_rad: Record<string, number>;
  root_quat_wxyz: [number, number, number, number];
}

/** How far from 1 the norm of a place quaternion may be (it is normalised after this check). */
export const PLACE_QUAT_NORM_TOLERANCE = 1e-6;

const ms = z.number().int().min(1).max(600_000);
const finite = z.number().finite();
const PlaceSchema = z
  .object({
    action: z.literal('place'),
    joint_pos_rad: z.record(z.string(), finite),
    root_quat_wxyz: z.tuple([finite, finite, finite, finite]),
  })
  .strict()
  .superRefine((v, ctx) => {
    const names = new Set<string>(G1_JOINT_NAMES);
    for (const k of Object.keys(v.joint_pos_rad))
      if (!names.has(k)) ctx.addIssue({ code: 'custom', path: ['joint_pos_rad', k], message: 'not a G1 joint name' });
    for (const n of G1_JOINT_NAMES)
      if (!(n in v.joint_pos_rad))
        ctx.addIssue({ code: 'custom', path: ['joint_pos_rad', n], message: 'missing (every joint is named)' });
    const norm = Math.hypot(...v.root_quat_wxyz);
    if (!(Math.abs(norm - 1) <= PLACE_QUAT_NORM_TOLERANCE))
      ctx.addIssue({
        code: 'custom',
        path: ['root_quat_wxyz'],
        message: `not a unit quaternion (norm ${norm}); w, x, y, z order`,
      });
  });
const ControlSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('human_reset') }),
  PlaceSchema,
  z.object({ action: z.literal('drop'), ms }),
  z.object({ action: z.literal('freeze'), ms }),
  z.object({ action: z.literal('nan'), frames: z.number().int().min(1).max(100_000) }),
  z.object({ action: z.literal('stall'), ms: z.number().int().min(1).max(10_000) }),
  z.object({ action: z.literal('estop') }),
  z.object({ action: z.literal('release_estop') }),
  z.object({ action: z.literal('kill_link') }),
]);

export const EMULATOR_CONTROL_ACTIONS = [
  'human_reset',
  'place',
  'drop',
  'freeze',
  'nan',
  'stall',
  'estop',
  'release_estop',
  'kill_link',
] as const;

/** Validates a parsed control message; `reason` names the field. */
export function decodeEmulatorControl(
  doc: unknown,
): { ok: true; value: EmulatorControlAction } | { ok: false; reason: string } {
  const r = ControlSchema.safeParse(doc);
  if (r.success) return { ok: true, value: r.data as EmulatorControlAction };
  const i = r.error.issues[0];
  if (i.path.length === 1 && i.path[0] === 'action') {
    return { ok: false, reason: `action must be one of ${EMULATOR_CONTROL_ACTIONS.join(', ')}` };
  }
  return { ok: false, reason: `${issueKey(i.path)}: ${i.message}` };
}

export interface ScheduledFault {
  /** Time after the emulator started, ms. */
  atMs: number;
  control: EmulatorControlAction;
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s)$/;
const toMs = (text: string, what: string): number => {
  const m = DURATION.exec(text);
  if (!m) throw new Error(`${what} must be a duration like 300ms or 5s, got "${text}"`);
  return Math.round(Number(m[1]) * (m[2] === 's' ? 1000 : 1));
};

/**
 * `--fault` spec: `<action>@<time>[:<amount>]`, e.g. `drop@5s:300ms`, `freeze@2s:1s`,
 * `nan@3s:5` (frames), `stall@4s:200ms`, `estop@10s`, `kill_link@6s`, `human_reset@20s`.
 */
export function parseFaultSpec(spec: string): ScheduledFault {
  const m = /^([a-z_]+)@([^:]+)(?::(.+))?$/.exec(spec.trim());
  if (!m) throw new Error(`fault "${spec}" must look like <action>@<time>[:<amount>], e.g. drop@5s:300ms`);
  const [, action, at, amount] = m;
  const atMs = toMs(at, `time of fault "${spec}"`);
  let doc: Record<string, unknown>;
  switch (action) {
    case 'drop':
    case 'freeze':
    case 'stall':
      if (amount === undefined)
        throw new Error(`fault "${spec}": ${action} needs a duration, e.g. ${action}@${at}:300ms`);
      doc = { action, ms: toMs(amount, `duration of fault "${spec}"`) };
      break;
    case 'nan':
      if (amount === undefined || !/^\d+$/.test(amount))
        throw new Error(`fault "${spec}": nan needs a frame count, e.g. nan@${at}:5`);
      doc = { action, frames: Number(amount) };
      break;
    case 'place':
      throw new Error(`fault "${spec}": place takes a whole pose; send it on ${EMULATOR_CONTROL_TOPIC}`);
    default:
      if (amount !== undefined) throw new Error(`fault "${spec}": ${action} takes no amount`);
      doc = { action };
  }
  const d = decodeEmulatorControl(doc);
  if (!d.ok) throw new Error(`fault "${spec}": ${d.reason}`);
  return { atMs, control: d.value };
}
