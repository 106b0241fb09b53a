import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clipFromDto, clipToDto } from '../../src/api/clipDto';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { useClipStore } from '../../renderer/src/clips/clipStore';
import { pause, play, resetPlayhead, seekFrame, startPlaybackLoop } from '../../renderer/src/playback/playback';
import { usePlaybackStore } from '../../renderer/src/playback/playbackStore';
import { PlaybackRateMeter, slowPlaybackNote } from '../../renderer/src/playback/playbackRate';
import { poseStore } from '../../renderer/src/playback/poseStore';
import { setRobotProfile } from '../../renderer/src/robot/robotStore';
import { OUR_G1, sharedData } from '../helpers/sharedData';

// The playhead's requestAnimationFrame loop runs only while a clip plays, so an
// idle console schedules no animation frames (Chromium then produces none, and the on-demand
// viewport draws none). requestAnimationFrame is a hand-driven fake here: `frame(ms)` runs the
// callbacks queued so far at that time, as the browser would on one display frame.

let queued: Map<number, FrameRequestCallback>;
let nextId: number;
let requests: number;

function frame(nowMs: number): void {
  const due = [...queued.values()];
  queued.clear();
  for (const cb of due) cb(nowMs);
}

beforeAll(() => {
  setRobotProfile(loadRobotProfile(OUR_G1));
  const file = sharedData('motions/g1_moves/npz/B_HandsUp.npz'); // 60 fps
  const clip = decodeMotionFile(new Uint8Array(fs.readFileSync(file)), { file: path.basename(file) });
  useClipStore.setState({ loaded: clipFromDto(clipToDto(clip)) });
});

beforeEach(() => {
  queued = new Map();
  nextId = 1;
  requests = 0;
  globalThis.requestAnimationFrame = (cb: FrameRequestCallback): number => {
    requests++;
    queued.set(nextId, cb);
    return nextId++;
  };
  globalThis.cancelAnimationFrame = (id: number): void => void queued.delete(id);
  usePlaybackStore.setState({ playing: false, speed: 1, loop: false, measuredSpeed: null });
  resetPlayhead();
});

afterEach(() => {
  pause();
});

describe('renderer: the playback loop', () => {
  it('requests no animation frame while nothing plays', () => {
    const stop = startPlaybackLoop();
    for (let t = 0; t < 1000; t += 16) frame(t);
    expect(requests).toBe(0);
    expect(queued.size).toBe(0);
    stop();
  });

  it('ticks while playing, advancing the pose with wall-clock time, and stops ticking once paused', () => {
    const stop = startPlaybackLoop();
    const rev0 = poseStore.getState().revision;
    play();
    expect(queued.size).toBe(1); // play() started the loop
    for (let t = 0; t <= 500; t += 16) frame(1000 + t);
    expect(poseStore.getState().frame).toBe(29); // 496 ms at 60 fps, from frame 0
    expect(poseStore.getState().revision).toBeGreaterThan(rev0);
    pause();
    frame(1600); // the pending tick sees the pause and requests no further frame
    const after = requests;
    for (let t = 1616; t < 2600; t += 16) frame(t);
    expect(requests).toBe(after);
    expect(queued.size).toBe(0);
    expect(poseStore.getState().frame).toBe(29);
    // Playing again resumes from there: the paused time is not played.
    play();
    frame(5000);
    frame(5100);
    expect(poseStore.getState().frame).toBe(35);
    stop();
    expect(queued.size).toBe(0); // stopping the loop cancels its pending frame
  });

  it('stops by itself at the end of the clip without loop', () => {
    const stop = startPlaybackLoop();
    usePlaybackStore.setState({ speed: 4 });
    play();
    for (let t = 0; t <= 3000; t += 16) frame(t); // 12 s of clip time: past the 7.3 s clip's end
    expect(usePlaybackStore.getState().playing).toBe(false);
    expect(poseStore.getState().frame).toBe(useClipStore.getState().loaded!.clip.frameCount - 1);
    expect(queued.size).toBe(0);
    stop();
  });

  it('measures the speed it achieves: real time at 60 Hz, 0.31× when each frame takes 800 ms', () => {
    const stop = startPlaybackLoop();
    play();
    for (let t = 0; t <= 3000; t += 16) frame(1000 + t); // 60 Hz display frames
    const fast = usePlaybackStore.getState().measuredSpeed!;
    expect(fast).toBeCloseTo(1, 2);
    expect(slowPlaybackNote(fast, 1)).toBeNull(); // negative control: real time is not reported
    pause();
    frame(4100);
    play();
    expect(usePlaybackStore.getState().measuredSpeed).toBeNull(); // a new play is measured afresh
    seekFrame(0);
    // Rendering takes 800 ms a frame: each frame advances at most MAX_TICK_S (0.25 s) of clip.
    for (let t = 0; t <= 4000; t += 800) frame(10_000 + t);
    const slow = usePlaybackStore.getState().measuredSpeed!;
    expect(slow).toBeCloseTo(0.25 / 0.8, 2);
    expect(slowPlaybackNote(slow, 1)).toBe('0.31× real time (1× asked) — rendering cannot keep up');
    pause();
    stop();
  });
});

describe('renderer: the playback rate meter', () => {
  it('gives no verdict before its window spans a second, then clip seconds per wall second', () => {
    const m = new PlaybackRateMeter();
    m.tick(0, 0);
    m.tick(500, 0.25);
    expect(m.rate()).toBeNull();
    m.tick(1000, 0.25);
    expect(m.rate()).toBeCloseTo(0.5, 6);
    // Only the last 2 s count: after a slow start, a second at real time lifts the figure.
    for (let t = 1100; t <= 4000; t += 100) m.tick(t, 0.1);
    expect(m.rate()).toBeCloseTo(1, 6);
    m.reset();
    expect(m.rate()).toBeNull();
  });

  it('reports playback below 90% of the requested speed, also below 1× asked', () => {
    expect(slowPlaybackNote(null, 1)).toBeNull();
    expect(slowPlaybackNote(0.95, 1)).toBeNull();
    expect(slowPlaybackNote(0.24, 0.25)).toBeNull();
    expect(slowPlaybackNote(0.1, 0.25)).toBe('0.1× real time (0.25× asked) — rendering cannot keep up');
    expect(slowPlaybackNote(2, 4)).toBe('2× real time (4× asked) — rendering cannot keep up');
  });
});
