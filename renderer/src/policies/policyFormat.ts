import type { PolicyInfo } from './policyStore';

// How the Policy and Sim trial panels describe an open policy. Pure: no React, no stores.

/** What a need asks of the backend, and where it can be met. */
const NEED_TEXT: Record<string, { what: string; where?: string }> = {
  base_lin_vel: { what: 'a root-velocity estimate', where: 'simulation only; the G1 does not stream it' },
  root_pose: { what: 'a root-position estimate' },
};

/** "base_lin_vel (a root-velocity estimate): simulation only; the G1 does not stream it". */
export function needText(need: string): string {
  const t = NEED_TEXT[need];
  if (!t) return need;
  return `${need} (${t.what})${t.where ? `: ${t.where}` : ''}`;
}

/** The note a policy binding carries in the Sim panel. */
export function policyNote(info: PolicyInfo): string {
  return `released policy ${info.family}, physics ${info.physicsId}, no root assist`;
}
