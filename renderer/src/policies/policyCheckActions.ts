import { create } from 'zustand';
import type { ApiError } from '../../../src/api/contract';
import type { PolicyCheckDto } from '../../../src/api/policyContract';
import { toApiError } from '../api/apiErrors';
import { useConnectionStore } from '../api/connectionStore';
import { useClipStore } from '../playback/clipStore';
import { usePolicyStore } from './policyStore';

// The Policy panel's Check (policies.check): the open policy run for its first seconds under the
// normal reading and under each negative control, in the services' file worker. A policy that
// carries or configures its motion is checked on it; any other on the clip on display. The report
// belongs to the policy it was made for and is dropped when another policy is opened.

export interface PolicyCheckState {
  checking: boolean;
  /** The policy id the report (or the error) is for. */
  policyId: string | null;
  report: PolicyCheckDto | null;
  error: ApiError | null;
}

export const usePolicyCheckStore = create<PolicyCheckState>(() => ({
  checking: false,
  policyId: null,
  report: null,
  error: null,
}));

/** Checks the open policy (a no-op while a check runs). */
export async function checkPolicy(seconds?: number): Promise<void> {
  const client = useConnectionStore.getState().client;
  const info = usePolicyStore.getState().info;
  if (!client || !info || usePolicyCheckStore.getState().checking) return;
  // A policy with a motion of its own (baked or configured) is checked on it, never on the clip on display.
  const ownMotion = info.motion !== null || info.configuredMotion !== null;
  const clipId = ownMotion ? undefined : useClipStore.getState().loaded?.clip.id;
  usePolicyCheckStore.setState({ checking: true, policyId: info.policyId, report: null, error: null });
  try {
    const report = await client.call('policies.check', {
      policyId: info.policyId,
      ...(clipId !== undefined ? { clipId } : {}),
      ...(seconds !== undefined ? { seconds } : {}),
    });
    usePolicyCheckStore.setState({ checking: false, report });
  } catch (err) {
    usePolicyCheckStore.setState({ checking: false, error: toApiError(err) });
  }
}
