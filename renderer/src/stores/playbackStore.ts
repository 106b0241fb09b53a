import { create } from 'zustand';

// Playback controls (low rate). The playhead itself lives in the transient pose store.

export const PLAYBACK_SPEEDS = [0.1, 0.25, 0.5, 1, 2, 4] as const;

export interface PlaybackState {
  playing: boolean;
  /** Playback rate relative to real time. */
  speed: number;
  loop: boolean;
}

export const usePlaybackStore = create<PlaybackState>(() => ({ playing: false, speed: 1, loop: false }));
