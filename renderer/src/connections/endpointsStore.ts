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
  /**
   * What is added: a remote simulator or a robot-side runner by URL (robot link limits), or "G1
   * over DDS" (the services start the runner for the interface and domain below).
   */
  addKind: 'remote_simulator' | 'robot' | 'g1_dds';
  /** G1 over DDS: the network interface, as typed. */
  ddsInterfaceText: string;
  /** G1 over DDS: the domain id, as typed. */
  ddsDomainText: string;
  /** G1 over DDS: the operator declares the robot hangs on its gantry (the runner's --after-clip gantry). */
  ddsOnGantry: boolean;
  /**
   * G1 over DDS: the operator declares a standing controller keeps the robot up after a clip (the
   * runner's --after-clip standing_policy); exclusive with ddsOnGantry.
   */
  ddsStanding: boolean;
  /** G1 over DDS: the standing controller's folder (unitree_rl_lab G1 velocity policy), as typed. */
  ddsStandingPolicyText: string;
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
  ddsInterfaceText: '',
  ddsDomainText: '0',
  ddsOnGantry: false,
  ddsStanding: false,
  ddsStandingPolicyText: '',
  actionError: null,
  busy: [],
}));
