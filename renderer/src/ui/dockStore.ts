import { create } from 'zustand';
import { DOCK_DEFAULT_BODY_PX } from './dockLayout';

// The bottom dock's state (low rate: a tab click, a splitter drag): which board it shows, whether
// it is folded to its tab strip, and the body height the operator asked for. What is drawn is that
// height clamped to the room the viewport leaves (dockLayout.ts), so a window made smaller then
// larger again gets the asked-for height back.

export type DockTab = 'qualification' | 'gap' | 'analysis';

export interface DockState {
  tab: DockTab;
  open: boolean;
  requestedBodyPx: number;
}

/** Opens on the Qualification board, as the console did before the dock. */
export const useDockStore = create<DockState>(() => ({
  tab: 'qualification',
  open: true,
  requestedBodyPx: DOCK_DEFAULT_BODY_PX,
}));

/** A tab click: shows that board; on the tab already shown, folds or unfolds the dock. */
export const clickDockTab = (tab: DockTab): void =>
  useDockStore.setState((s) => (s.tab === tab ? { open: !s.open } : { tab, open: true }));
export const toggleDock = (): void => useDockStore.setState((s) => ({ open: !s.open }));
/** The splitter moved (drag or key): that body height, and the dock unfolds if it was folded. */
export const resizeDock = (requestedBodyPx: number): void => useDockStore.setState({ requestedBodyPx, open: true });
