import { create } from 'zustand';

// Playback controls (low rate). The playhead itself lives in the transient pose store.

export const PLAYBACK_SPEEDS = [0.1, 0.25, 0.5, 1, 2, 4] as const;

export interface PlaybackState {
  playing: boolean;
  /** Playback rate relative to real time. */
  speed: number;
  loop: boolean;
  /**
   * Speed achieved by the last play, clip seconds per wall second (playbackRate.ts), updated at
   * most MEASURED_SPEED_HZ; null until measured. Cleared when a play starts or the clip changes.
   */
  measuredSpeed: number | null;
}

/** Most updates of measuredSpeed a second: a low-rate figure for React. */
export const MEASURED_SPEED_HZ = 2;

export const usePlaybackStore = create<PlaybackState>(() => ({
  playing: false,
  speed: 1,
  loop: false,
  measuredSpeed: null,
}));
