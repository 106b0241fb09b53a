import { describe, expect, it } from 'vitest';
import {
  clampDockBodyPx,
  DOCK_DEFAULT_BODY_PX,
  DOCK_MIN_BODY_PX,
  dockMaxBodyPx,
  splitterKey,
  SPLITTER_STEP_PX,
  VIEWPORT_MIN_HEIGHT_PX,
} from '../../renderer/src/app/dockLayout';
import { clickDockTab, resizeDock, useDockStore } from '../../renderer/src/app/dockStore';

// The bottom dock never takes the viewport below its minimum
// (renderer/src/app/dockLayout.ts), and its tabs show a board or fold the dock (dockStore.ts).

/** The centre column at 1366×768: 720 px under the top bar, a 100 px timeline, 37 px of dock chrome. */
const SMALL = { columnPx: 720, timelinePx: 100, dockChromePx: 37 };

describe('dock height', () => {
  it('leaves the viewport its minimum: column − timeline − chrome − 320 px', () => {
    expect(dockMaxBodyPx(SMALL)).toBe(720 - 100 - 37 - VIEWPORT_MIN_HEIGHT_PX);
    const body = clampDockBodyPx(10_000, dockMaxBodyPx(SMALL));
    expect(SMALL.columnPx - SMALL.timelinePx - SMALL.dockChromePx - body).toBe(VIEWPORT_MIN_HEIGHT_PX);
  });

  it('keeps a requested height that fits, and the body minimum when asked for less', () => {
    const max = dockMaxBodyPx({ columnPx: 1032, timelinePx: 70, dockChromePx: 37 });
    expect(clampDockBodyPx(DOCK_DEFAULT_BODY_PX, max)).toBe(DOCK_DEFAULT_BODY_PX);
    expect(clampDockBodyPx(10, max)).toBe(DOCK_MIN_BODY_PX);
    expect(clampDockBodyPx(Number.NaN, max)).toBe(DOCK_DEFAULT_BODY_PX);
  });

  it('gives the viewport priority over the body minimum in a column too short for both', () => {
    const max = dockMaxBodyPx({ columnPx: 500, timelinePx: 100, dockChromePx: 37 });
    expect(max).toBe(43);
    expect(clampDockBodyPx(DOCK_MIN_BODY_PX, max)).toBe(43);
    expect(dockMaxBodyPx({ columnPx: 300, timelinePx: 100, dockChromePx: 37 })).toBe(0);
  });
});

describe('splitter keys', () => {
  const max = dockMaxBodyPx(SMALL);
  it('↑/↓ move by a step (Shift ×4), clamped at both ends', () => {
    expect(splitterKey('ArrowUp', false, 200, max)).toEqual({ kind: 'resize', bodyPx: 200 + SPLITTER_STEP_PX });
    expect(splitterKey('ArrowDown', true, 200, max)).toEqual({ kind: 'resize', bodyPx: 200 - 4 * SPLITTER_STEP_PX });
    expect(splitterKey('ArrowUp', true, max - 1, max)).toEqual({ kind: 'resize', bodyPx: max });
    expect(splitterKey('ArrowDown', false, DOCK_MIN_BODY_PX, max)).toEqual({
      kind: 'resize',
      bodyPx: DOCK_MIN_BODY_PX,
    });
  });

  it('a folded dock (0 px) only grows: ↑ opens it at its minimum, ↓ and Page Down leave it folded', () => {
    expect(splitterKey('ArrowUp', false, 0, max)).toEqual({ kind: 'resize', bodyPx: DOCK_MIN_BODY_PX });
    expect(splitterKey('PageUp', false, 0, max)).toEqual({ kind: 'resize', bodyPx: max });
    expect(splitterKey('ArrowDown', false, 0, max)).toEqual({ kind: 'none' });
    expect(splitterKey('PageDown', true, 0, max)).toEqual({ kind: 'none' });
    expect(splitterKey('Enter', false, 0, max)).toEqual({ kind: 'toggle' });
  });

  it('Page Up/Down go to the tallest/shortest, Enter folds; Home/End and Space are not the splitter’s', () => {
    expect(splitterKey('PageUp', false, 200, max)).toEqual({ kind: 'resize', bodyPx: max });
    expect(splitterKey('PageDown', false, 200, max)).toEqual({ kind: 'resize', bodyPx: DOCK_MIN_BODY_PX });
    expect(splitterKey('Enter', false, 200, max)).toEqual({ kind: 'toggle' });
    for (const key of ['Home', 'End', ' ', 'ArrowLeft', 'Escape'])
      expect(splitterKey(key, false, 200, max), key).toEqual({ kind: 'none' });
  });
});

describe('dock tabs and splitter', () => {
  it('a click on another tab shows its board; on the tab shown it folds, then unfolds, the dock', () => {
    useDockStore.setState({ tab: 'qualification', open: true });
    clickDockTab('gap');
    expect(useDockStore.getState()).toMatchObject({ tab: 'gap', open: true });
    clickDockTab('gap');
    expect(useDockStore.getState()).toMatchObject({ tab: 'gap', open: false });
    clickDockTab('qualification');
    expect(useDockStore.getState()).toMatchObject({ tab: 'qualification', open: true });
    clickDockTab('qualification');
    clickDockTab('qualification');
    expect(useDockStore.getState()).toMatchObject({ tab: 'qualification', open: true });
  });

  it('moving the splitter of a folded dock unfolds it at that height', () => {
    useDockStore.setState({ open: false, requestedBodyPx: 200 });
    resizeDock(150);
    expect(useDockStore.getState()).toMatchObject({ open: true, requestedBodyPx: 150 });
  });
});
