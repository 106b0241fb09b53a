import { useFrame, useThree } from '@react-three/fiber';
import { useEffect } from 'react';
import { overlayStore } from '../overlay/overlayStore';
import { useRunStore } from '../overlay/runStore';
import { poseStore } from '../playback/poseStore';
import { liveStreamsStore } from '../robot/liveStreams';
import { useMeshStore } from './meshStore';

// The viewport's canvas renders on demand (<Canvas frameloop="demand">): a frame is drawn only
// when something it shows has changed, so an idle console costs no GPU time (with software GL,
// as in headless Chromium, a 60 Hz loop of an unchanged scene costs most of a core).
//
// What asks for a frame (invalidate()):
//   poseStore      the reference frame on display: scrubbing, frame keys, playback, follow-live
//   overlayStore   the executed runs at the playhead: live frames, recordings, error mode
//   useRunStore    runs added or removed, visibility, colour mode, the ghost toggle
//   liveStreamsStore  the live robot's idle pose moving visibly, a live robot appearing or going
//                  (15 Hz at most while a robot is connected and moving)
//   useMeshStore   mesh files arriving; each robot also asks when its own mesh objects get their
//                  geometry (RobotModel.tsx), which can be a tick after the store counted it
//   CameraRig      orbit input, and every frame while the orbit's damping still moves
//   react-three    a resize of the canvas (r3f invalidates on every change of its own state) and
//                  any change React makes to a three.js object it manages
//
// While a clip plays or a run streams, this renders once per change, which is as often as there
// is something new to show, up to the display rate: the playhead's requestAnimationFrame tick
// publishes a pose whenever the shown clip frame changes, and every push of a live run moves the
// overlay (and, following live, the playhead); r3f coalesces all invalidations of one animation
// frame into one render. We chose this over switching to frameloop="always" while playing or
// streaming: it draws exactly the frames that differ (a 30 fps clip at 1× renders 30 times a
// second, not 60; at 0.1× three times), it needs no second notion of "something is moving" that
// a missed transition (a run that ends while paused, a STOP) could leave switched on, and the
// same subscriptions serve replay, scrubbing and live runs.

let framesRendered = 0;

/** Frames the viewport has rendered since the page loaded (for the e2e tests, testing/testHooks.ts). */
export const viewportFramesRendered = (): number => framesRendered;

/** Subscribes the stores the viewport draws from to the canvas's invalidate(), and counts frames. */
export function RenderOnChange() {
  const invalidate = useThree((s) => s.invalidate);
  useEffect(() => {
    const offs = [
      poseStore.subscribe(() => invalidate()),
      overlayStore.subscribe(() => invalidate()),
      useRunStore.subscribe(() => invalidate()),
      useMeshStore.subscribe(() => invalidate()),
      liveStreamsStore.subscribe(() => invalidate()),
    ];
    invalidate();
    return () => offs.forEach((off) => off());
  }, [invalidate]);
  useFrame(() => {
    framesRendered++;
  });
  return null;
}
