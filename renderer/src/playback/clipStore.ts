import { create } from 'zustand';
import type { LoadedClip } from '../../../src/api/clipDto';
import type { ApiError } from '../../../src/api/contract';

// The clip on display and the state of loading one (low rate). A failed load sets `error` and
// leaves `loaded` alone: the previous clip stays on screen.

/** Where the current or last attempted clip came from, so it can be reloaded with another fps. */
export type ClipSource = { kind: 'bytes'; fileName: string; bytesBase64: string } | { kind: 'path'; path: string };

export interface ClipState {
  loaded: LoadedClip | null;
  loading: boolean;
  /** Shown in the error banner until dismissed or the next successful load. */
  error: ApiError | null;
  lastSource: ClipSource | null;
  /** The operator's fps field, as typed ('' = take it from the file). */
  fpsText: string;
}

export const useClipStore = create<ClipState>(() => ({
  loaded: null,
  loading: false,
  error: null,
  lastSource: null,
  fpsText: '',
}));
