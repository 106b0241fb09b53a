import { create } from 'zustand';
import type { LoadedClip } from '../../../src/api/clipDto';
import type { ApiError } from '../../../src/api/contract';
import type { PolicyInfoDto } from '../../../src/api/policyContract';

// The released policy opened in this console (policies.open) and the state of opening one (low
// rate). A failed open sets `error` and leaves `info` alone: the previous policy stays open. The
// policy's baked motion is kept here as well, so it can be put back on display after another clip
// was opened (the services hold it in their clip cache under `info.motion.clipId`).

/** What the Policy panel shows: the services' answer without the baked clip's arrays. */
export type PolicyInfo = Omit<PolicyInfoDto, 'bakedClip'>;

export interface PolicyState {
  /** The operator's path field (a policy file or folder on the machine running the services). */
  pathText: string;
  /** The declared preset to read the file under ('' for none: the file states its interface). */
  preset: string;
  opening: boolean;
  info: PolicyInfo | null;
  /** The motion the policy carries, as the clip store holds a clip; null without one. */
  bakedClip: LoadedClip | null;
  /** The last failed open, shown in the panel until the next open. */
  error: ApiError | null;
}

export const usePolicyStore = create<PolicyState>(() => ({
  pathText: '',
  preset: '',
  opening: false,
  info: null,
  bakedClip: null,
  error: null,
}));
