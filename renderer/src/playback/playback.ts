import type { MotionClip } from '../../../src/domain/motion/motionClip';
import { useClipStore } from './clipStore';
import { useRobotStore } from '../robot/robotStore';
import { MAX_TICK_S, PlaybackRateMeter } from './playbackRate';
import { MEASURED_SPEED_HZ, usePlaybackStore } from './playbackStore';
import { poseStore } from './poseStore';

// The playhead. Seeking and playing go through here; every change of the shown frame writes
// the joint angles, root pose and forward kinematics of that frame into the transient pose
// store, which the viewport draws from. One requestAnimationFrame loop advances playback, and
// only while it plays.

/** Playhead in clip seconds (continuous while playing; the shown frame is floor(t·fps)). */
let playheadS = 0;

const currentClip = (): MotionClip | null => useClipStore.getState().loaded?.clip ?? null;

/** Writes frame `frame` of the current clip (or the model's default pose) into the pose store. */
function publishPose(frame: number): void {
  const { profile, fk } = useRobotStore.getState();
  const clip = currentClip();
  const prev = poseStore.getState();
  const bodyCount = fk?.bodyCount ?? 0;
  const bodyPosM = prev.bodyPosM.length === 3 * bodyCount ? prev.bodyPosM : new Float64Array(3 * bodyCount);
  const bodyQuatWxyz = prev.bodyQuatWxyz.length === 4 * bodyCount ? prev.bodyQuatWxyz : new Float64Array(4 * bodyCount);
  const { jointPosRad, rootPosM, rootQuatWxyz } = prev;
  const nj = jointPosRad.length;
  if (clip) {
    jointPosRad.set(clip.jointPosRad.subarray(nj * frame, nj * (frame + 1)));
    rootPosM.set(clip.rootPosM.subarray(3 * frame, 3 * frame + 3));
    rootQuatWxyz.set(clip.rootQuatWxyz.subarray(4 * frame, 4 * frame + 4));
    fk?.computeClipFrame(clip, frame, bodyPosM, bodyQuatWxyz);
  } else if (profile) {
    const pose = profile.defaultPose;
    jointPosRad.set(pose.jointPosRad);
    rootPosM.set(pose.rootPosM);
    rootQuatWxyz.set(pose.rootQuatWxyz);
    fk?.compute(rootPosM, rootQuatWxyz, jointPosRad, bodyPosM, bodyQuatWxyz);
  }
  poseStore.setState({
    clipId: clip?.id ?? null,
    frame,
    timeS: clip ? frame / clip.fps : 0,
    bodyPosM,
    bodyQuatWxyz,
    revision: prev.revision + 1,
  });
}

const frameAt = (clip: MotionClip, t: number): number =>
  Math.min(clip.frameCount - 1, Math.max(0, Math.floor(t * clip.fps + 1e-6)));

/** Shows `frame` (clamped to the clip) and moves the playhead there. */
export function seekFrame(frame: number): void {
  const clip = currentClip();
  if (!clip) {
    publishPose(0);
    return;
  }
  const f = Math.min(clip.frameCount - 1, Math.max(0, Math.round(frame)));
  playheadS = f / clip.fps;
  publishPose(f);
}

/** Shows the clip frame at time `t` seconds (floor(t·fps), clamped), e.g. a live run's newest sample. */
export function seekTimeS(t: number): void {
  const clip = currentClip();
  if (!clip) return;
  seekFrame(frameAt(clip, t));
}

export function stepFrames(delta: number): void {
  pause();
  seekFrame(poseStore.getState().frame + delta);
}

export function play(): void {
  const clip = currentClip();
  if (!clip || clip.frameCount < 2) return;
  // Playing from the last frame starts over.
  if (poseStore.getState().frame >= clip.frameCount - 1) seekFrame(0);
  usePlaybackStore.setState({ playing: true });
}

export function pause(): void {
  if (usePlaybackStore.getState().playing) usePlaybackStore.setState({ playing: false });
}

export function togglePlay(): void {
  if (usePlaybackStore.getState().playing) pause();
  else play();
}

/** Resets the playhead when a clip or the robot model changes (the last play's measured speed with it). */
export function resetPlayhead(): void {
  pause();
  usePlaybackStore.setState({ measuredSpeed: null });
  seekFrame(0);
}

/**
 * Advances the playhead with wall-clock time while playing. Returns a function that stops it.
 *
 * The requestAnimationFrame loop runs only while playing: it starts when `playing` turns true and
 * ends on the first tick that finds it false (paused, the clip's end without loop, a STOP). An
 * idle console then schedules no animation frames at all, so Chromium produces no frames for it
 * and the viewport's on-demand canvas (viewport/renderOnDemand.tsx) draws nothing.
 *
 * While it plays, the speed it achieves is measured (playbackRate.ts) into the playback store's
 * measuredSpeed, so the timeline can say when rendering cannot keep up.
 */
export function startPlaybackLoop(): () => void {
  let last: number | null = null;
  let raf = 0;
  const meter = new PlaybackRateMeter();
  let publishedAtMs = -Infinity;
  const tick = (now: number): void => {
    const { playing, speed, loop } = usePlaybackStore.getState();
    const clip = currentClip();
    if (!playing || !clip) {
      raf = 0;
      return;
    }
    raf = requestAnimationFrame(tick);
    const dtS = last === null ? 0 : Math.min(MAX_TICK_S, (now - last) / 1000);
    last = now;
    const endS = (clip.frameCount - 1) / clip.fps;
    playheadS += dtS * speed;
    meter.tick(now, dtS * speed);
    const measured = meter.rate();
    if (measured !== null && now - publishedAtMs >= 1000 / MEASURED_SPEED_HZ) {
      publishedAtMs = now;
      usePlaybackStore.setState({ measuredSpeed: measured });
    }
    if (playheadS >= endS) {
      if (loop) playheadS %= endS + 1 / clip.fps;
      else {
        playheadS = endS;
        usePlaybackStore.setState({ playing: false });
      }
    }
    const f = frameAt(clip, playheadS);
    if (f !== poseStore.getState().frame || poseStore.getState().clipId !== clip.id) publishPose(f);
  };
  const startIfPlaying = (): void => {
    if (raf !== 0 || !usePlaybackStore.getState().playing) return;
    last = null; // the first tick of a run of ticks advances nothing: time paused is not played
    meter.reset();
    publishedAtMs = -Infinity;
    raf = requestAnimationFrame(tick);
    // After raf is set: this store update calls startIfPlaying again, which must find the loop running.
    if (usePlaybackStore.getState().measuredSpeed !== null) usePlaybackStore.setState({ measuredSpeed: null });
  };
  const off = usePlaybackStore.subscribe(startIfPlaying);
  startIfPlaying();
  return () => {
    off();
    cancelAnimationFrame(raf);
    raf = 0;
  };
}
