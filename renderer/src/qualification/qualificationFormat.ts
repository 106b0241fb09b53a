import type { QualificationCellDto, QualificationReportDto } from '../../../src/api/contract';
import { mmAsCm } from '../ui/format';

// How the Qualification board writes its figures and cell tooltips. Pure: no React, no stores.

export const GROUP_TEXT: Record<string, string> = {
  upper_body: 'upper body',
  locomotion: 'locomotion',
  in_place: 'in place',
  dynamic: 'dynamic',
  low_posture: 'low posture',
};

/** The name of a binding of the report (bindingName), or its key when the report does not list it. */
export const reportBindingName = (report: QualificationReportDto | null, key: string): string =>
  report?.bindings.find((b) => b.key === key)?.name ?? key;

/** The run id a qualification replay draws its rollout under in the run store. */
export const qualificationReplayRunId = (runId: string): string => `qual:${runId}`;

/** A share as a whole percentage ("97%"), "—" when unknown. */
export const pct = (v: number | null): string => (v === null ? '—' : `${(v * 100).toFixed(0)}%`);

/** Seconds as m:ss ("--:--" when unknown), for elapsed time and ETA. */
export function minutesSeconds(s: number | null): string {
  if (s === null || !Number.isFinite(s)) return '--:--';
  const t = Math.round(s);
  return `${Math.floor(t / 60)}:${String(t % 60).padStart(2, '0')}`;
}

/** The tooltip of one matrix cell: its state, its figures and (rejected) the reasons, and what a click does. */
export function cellTitle(
  c: QualificationCellDto | undefined,
  running: boolean,
  clipName: string,
  binding: string,
): string {
  const head = `${binding} × ${clipName}`;
  if (running) return `${head}: running now`;
  if (!c) return `${head}: pending (not run yet)`;
  if (c.state === 'pending') return `${head}: pending (rollouts recorded, no decision yet)`;
  const figs = `SR ${pct(c.sr)} · progress-soft ${c.progressSoft === null ? '—' : c.progressSoft.toFixed(3)} · MPJPE-l ${mmAsCm(c.mpjpeLMm)} cm · ${c.rollouts} rollout(s)`;
  return c.state === 'admitted'
    ? `${head}: admitted\n${figs}\nclick: replay the worst rollout`
    : `${head}: rejected\n${figs}\n${c.reasons.map((r) => `• ${r}`).join('\n')}\nclick: replay the worst rollout at its worst frame`;
}
