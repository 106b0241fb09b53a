import { BUILTIN_LABEL } from '../../../src/domain/sim/builtinBinding';

// Number and label formats more than one panel shows, so the same quantity reads the same in every
// panel. Pure: no React, no stores.

/** The note every result of a builtin binding carries (DESIGN §9). */
export const BUILTIN_NOTE = `builtin = ${BUILTIN_LABEL}`;

/** Why a panel that reads a campaign cannot open one yet. */
export const NO_CAMPAIGN_DIR = 'give the campaign folder (an absolute path on the machine running the services)';

/** A duration or an age in ms: "12 ms" below a second, "1.5 s" from there; "—" when unknown. */
export const formatMs = (v: number | null): string =>
  v === null ? '—' : v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(1)} s`;

/** A length stored in mm shown in cm with one decimal (MPJPE-l), "—" when unknown. */
export const mmAsCm = (mm: number | null): string => (mm === null ? '—' : (mm / 10).toFixed(1));

/** An angle in degrees with one decimal and its unit: "12.3°". */
export const deg = (rad: number): string => `${((rad * 180) / Math.PI).toFixed(1)}°`;
