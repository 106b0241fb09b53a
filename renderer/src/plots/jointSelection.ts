import { create } from 'zustand';

// The joint the operator picked in the Joints table (JointTable.tsx): its error over time is
// plotted for the run shown in the Overlay panel's plots. Low rate, React state.

export interface JointSelectionState {
  /** Index in the canonical joint order, or null for none. */
  joint: number | null;
}

export const useJointSelection = create<JointSelectionState>(() => ({ joint: null }));

/** Selects joint `index`, or clears the selection when it is already the selected one. */
export function toggleJointSelection(index: number): void {
  useJointSelection.setState((s) => ({ joint: s.joint === index ? null : index }));
}
