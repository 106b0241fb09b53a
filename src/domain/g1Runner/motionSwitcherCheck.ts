// Whether a low-level controller may take the G1's motors, from the motion switcher's CheckMode
// (src/domain/robotLink/unitreeApiWire.ts has the protocol and its sources). Unitree's low-level
// examples run only while CheckMode's mode name is empty (no high-level mode, such as the app's or
// the remote's "ai" locomotion, owns the motors); they query before their first LowCmd. The runner
// asks at `prepare` (its first command that moves the robot: the ramp) and `start` refuses unless
// that answer allowed it.

import type { RunnerMotionSwitcherStatus } from '../bridge/g1BridgeContract';
import {
  MOTION_SWITCHER_API_ID,
  MOTION_SWITCHER_TOPICS,
  parseCheckModeData,
  type ApiResponse,
} from '../robotLink/unitreeApiWire';

/** What came back for one CheckMode, as the runner's status shows it. */
export type MotionSwitcherAnswer =
  | { kind: 'mode'; name: string; form: string; latencyMs: number }
  | { kind: 'error'; code: number; latencyMs: number }
  | { kind: 'malformed'; reason: string; latencyMs: number }
  | { kind: 'no_answer'; waitedMs: number; matchedServices: number };

export interface MotionSwitcherVerdict {
  allow: boolean;
  /** One trace line; on a refusal, the refusal's reason (what the operator must do). */
  line: string;
}

/** Reads a response already matched to our request by identity id. */
export function answerFromResponse(r: ApiResponse, latencyMs: number): MotionSwitcherAnswer {
  if (r.apiId !== BigInt(MOTION_SWITCHER_API_ID.checkMode))
    return { kind: 'malformed', reason: `answer carries api_id ${r.apiId}, not CheckMode's 1001`, latencyMs };
  if (r.code !== 0) return { kind: 'error', code: r.code, latencyMs };
  try {
    const m = parseCheckModeData(r.data);
    return { kind: 'mode', name: m.name, form: m.form, latencyMs };
  } catch (err) {
    return { kind: 'malformed', reason: (err as Error).message, latencyMs };
  }
}

export function motionSwitcherVerdict(a: MotionSwitcherAnswer, domainId: number): MotionSwitcherVerdict {
  const tag = 'g1-runner: motion switcher:';
  switch (a.kind) {
    case 'mode':
      if (a.name === '')
        return {
          allow: true,
          line: `${tag} no high-level motion mode is active${a.form ? ` (form ${a.form})` : ''}: motors free for low-level control (answered in ${a.latencyMs.toFixed(0)} ms)`,
        };
      return {
        allow: false,
        line:
          `${tag} the high-level motion mode "${a.name}"${a.form ? ` (form ${a.form})` : ''} owns the motors: ` +
          `release it before low-level control (the remote: L2 + B to damp, then L2 + R2 for debug mode, ` +
          `as Unitree's deploy guide says; or end the mode from Unitree's app), then prepare again ` +
          `(docs/ROBOT_SETUP.md §2)`,
      };
    case 'error':
      return {
        allow: false,
        line: `${tag} CheckMode failed with status code ${a.code}: whether a high-level mode owns the motors is unknown; check the robot, then prepare again`,
      };
    case 'malformed':
      return {
        allow: false,
        line: `${tag} CheckMode's answer is unreadable (${a.reason}); whether a high-level mode owns the motors is unknown`,
      };
    case 'no_answer':
      return {
        allow: true,
        line:
          `${tag} no motion switcher answered on domain ${domainId} within ${a.waitedMs.toFixed(0)} ms ` +
          `(a simulator, or a robot without the service; ${a.matchedServices} reader(s) of ${MOTION_SWITCHER_TOPICS.request} matched)`,
      };
  }
}

/** The answer and its verdict as the runner's status carries them (g1-bridge/1 `runner.motion_switcher`). */
export function motionSwitcherStatus(a: MotionSwitcherAnswer, v: MotionSwitcherVerdict): RunnerMotionSwitcherStatus {
  const answer = a.kind === 'mode' ? (a.name === '' ? 'free' : 'mode') : a.kind === 'malformed' ? 'unreadable' : a.kind;
  return { answer, mode: a.kind === 'mode' && a.name !== '' ? a.name : null, allowed: v.allow, detail: v.line };
}
