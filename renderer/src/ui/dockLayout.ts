// Sizes of the centre column (docs/CONSOLE.md "Layout"): the 3D viewport on top, the timeline
// under it, then the bottom dock (tab strip, splitter, the open board). The viewport never gets
// less than its minimum: the dock's height is clamped to what the column leaves over once the
// viewport's minimum, the timeline, the tab strip and the splitter are placed. Pure, so the
// clamping and the splitter's keys are unit-tested without a DOM (test/unit/rendererDockLayout.test.ts).

/** The viewport's minimum height in CSS px, whatever the dock shows (also `.viewport` min-height). */
export const VIEWPORT_MIN_HEIGHT_PX = 320;
/** The viewport's minimum width in CSS px: the centre column's grid minimum (`.workspace`). */
export const VIEWPORT_MIN_WIDTH_PX = 480;
/** An open dock's body is at least this tall when the column has the room (a board's controls and a few rows). */
export const DOCK_MIN_BODY_PX = 120;
/** The dock's body height before the operator drags the splitter. */
export const DOCK_DEFAULT_BODY_PX = 280;
/** Splitter keys: ↑/↓ move it this far, with Shift four times as far. */
export const SPLITTER_STEP_PX = 16;

/** Heights in the centre column, in CSS px, measured from the page. */
export interface CentreMeasure {
  /** The whole column. */
  columnPx: number;
  /** The timeline under the viewport (it wraps, so its height follows the column's width). */
  timelinePx: number;
  /** The dock's own chrome: splitter and tab strip. */
  dockChromePx: number;
}

/** The tallest the dock's body may be so that the viewport keeps VIEWPORT_MIN_HEIGHT_PX (never negative). */
export function dockMaxBodyPx(m: CentreMeasure): number {
  return Math.max(0, Math.floor(m.columnPx - m.timelinePx - m.dockChromePx - VIEWPORT_MIN_HEIGHT_PX));
}

/**
 * The body height to draw for a requested one: within [DOCK_MIN_BODY_PX, max]; when the column is
 * too short for even that minimum, the viewport wins and the body gets what is left (maybe 0).
 */
export function clampDockBodyPx(requestedPx: number, maxPx: number): number {
  const r = Number.isFinite(requestedPx) ? requestedPx : DOCK_DEFAULT_BODY_PX;
  return Math.round(Math.min(Math.max(r, DOCK_MIN_BODY_PX), maxPx));
}

/** What a key on the focused splitter does: a new requested height, a fold/unfold, or nothing. */
export type SplitterKeyAction = { kind: 'resize'; bodyPx: number } | { kind: 'toggle' } | { kind: 'none' };

/**
 * The splitter's keys (WAI-ARIA window splitter): ↑ taller dock, ↓ shorter (Shift ×4), Page Up the
 * tallest, Page Down the shortest, Enter folds or unfolds the dock. A folded dock (`bodyPx` 0) only
 * grows: ↓ and Page Down leave it folded. Home/End are left to the playhead (first/last frame),
 * Space to STOP.
 */
export function splitterKey(key: string, shiftKey: boolean, bodyPx: number, maxPx: number): SplitterKeyAction {
  const step = SPLITTER_STEP_PX * (shiftKey ? 4 : 1);
  if (bodyPx === 0 && (key === 'ArrowDown' || key === 'PageDown')) return { kind: 'none' };
  switch (key) {
    case 'ArrowUp':
      return { kind: 'resize', bodyPx: clampDockBodyPx(bodyPx + step, maxPx) };
    case 'ArrowDown':
      return { kind: 'resize', bodyPx: clampDockBodyPx(bodyPx - step, maxPx) };
    case 'PageUp':
      return { kind: 'resize', bodyPx: clampDockBodyPx(maxPx, maxPx) };
    case 'PageDown':
      return { kind: 'resize', bodyPx: clampDockBodyPx(DOCK_MIN_BODY_PX, maxPx) };
    case 'Enter':
      return { kind: 'toggle' };
    default:
      return { kind: 'none' };
  }
}
