import { create } from 'zustand';
import type { ConnectionInfo } from '../../../src/api/contract';

// The endpoints of the Connections panel (embedded simulator, remote simulators, the robot) and
// its form (low rate: React state). Polled and changed by endpointsActions.ts.

export interface EndpointsState {
  entries: ConnectionInfo[];
  /** Wall-clock ms of the last successful poll; null before the first. */
  polledAtMs: number | null;
  /** The last failed poll, cleared by the next good one. */
  pollError: string | null;
  /** The URL field, as typed. */
  urlText: string;
  /** What the URL is: a remote simulator or the physical robot (robot link limits). */
  addKind: 'remote_simulator' | 'robot';
  /** Why the last add/connect/remove failed (shown under the form). */
  actionError: { action: string; message: string } | null;
  /** Entry ids (or 'add') with an action in flight. */
  busy: string[];
}

export const useEndpointsStore = create<EndpointsState>(() => ({
  entries: [],
  polledAtMs: null,
  pollError: null,
  urlText: '',
  addKind: 'remote_simulator',
  actionError: null,
  busy: [],
}));
