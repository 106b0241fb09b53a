import { useFrame, useThree } from '@react-three/fiber';
import { useEffect, useRef } from 'react';
import type { Group } from 'three';
import { liveRootQuatOnReference } from '../../../src/domain/robotLink/robotUpright';
import type { ForwardKinematics } from '../../../src/domain/robot/forwardKinematics';
import type { RobotProfile } from '../../../src/domain/robot/robotProfile';
import { poseStore } from '../playback/poseStore';
import { liveStream } from '../robot/liveStreams';
import { drawnLiveRobots } from './drawnRobots';
import { poseGroups, useBuiltRobot } from './RobotModel';

// The live robot: a connected robot's newest measured joints (the newest row of its connection's
// live store, robot/liveStreams.ts, fed by its idle live stream at 15 Hz), drawn outside trials,
// as its own model in one identity colour that no sim branch, run or
// reference uses. With motion capture its measured root; without, the reference root's position
// and heading with the IMU's roll and pitch (liveRootQuatOnReference) — so a robot that fell is
// drawn fallen, never as a standing copy of the reference. Posed in useFrame from the transient
// store (no React state per frame); the Viewport mounts one per connected robot.

/** Identity colour of the live robot: orange, outside the run palette and the reference's light blue. */
export const LIVE_ROBOT_COLOR = '#ff8c1a';

export function LiveRobot({
  profile,
  fk,
  connectionId,
  visible,
}: {
  profile: RobotProfile;
  fk: ForwardKinematics;
  connectionId: string;
  visible: boolean;
}) {
  const robot = useBuiltRobot(profile, 'error');
  const invalidate = useThree((s) => s.invalidate);
  const root = useRef<Group>(null);
  const buffers = useRef({
    bodyPosM: new Float64Array(3 * profile.bodies.length),
    bodyQuatWxyz: new Float64Array(4 * profile.bodies.length),
    rootPosM: new Float64Array(3),
    rootQuatWxyz: Float64Array.of(1, 0, 0, 0),
  });

  useEffect(() => {
    if (!robot) return;
    for (const m of robot.bodyMaterials ?? []) {
      m.color.set(LIVE_ROBOT_COLOR);
      m.emissive.copy(m.color).multiplyScalar(0.22);
    }
    const entry = { ...buffers.current, drawn: false, materials: robot.bodyMaterials ?? [] };
    drawnLiveRobots.set(connectionId, entry);
    // The colour and the entry are set after the commit, so possibly after the frame that first
    // showed this model (render on demand: a standing robot asks for no further frame). Without a
    // frame now the model would stay drawn in the profile's grey and reported as not drawn.
    invalidate();
    return () => {
      if (drawnLiveRobots.get(connectionId) === entry) drawnLiveRobots.delete(connectionId);
    };
  }, [robot, connectionId, invalidate]);

  useFrame(() => {
    const stream = liveStream(connectionId);
    const pose = stream?.source === 'robot_idle' ? stream.newest() : null;
    const groups = robot?.groups ?? [];
    const show = visible && pose !== null && groups.length === profile.bodies.length;
    if (root.current) root.current.visible = show;
    const drawn = drawnLiveRobots.get(connectionId);
    if (drawn) drawn.drawn = show;
    if (!show) return;
    const b = buffers.current;
    const ref = poseStore.getState();
    if (pose.rootPosM) b.rootPosM.set(pose.rootPosM);
    else b.rootPosM.set(ref.rootPosM);
    if (pose.rootPosM && pose.rootQuatWxyz) b.rootQuatWxyz.set(pose.rootQuatWxyz);
    else if (pose.rootQuatWxyz) b.rootQuatWxyz.set(liveRootQuatOnReference(pose.rootQuatWxyz, ref.rootQuatWxyz));
    else b.rootQuatWxyz.set(ref.rootQuatWxyz);
    fk.compute(b.rootPosM, b.rootQuatWxyz, pose.jointPosRad, b.bodyPosM, b.bodyQuatWxyz);
    poseGroups(groups, b.bodyPosM, b.bodyQuatWxyz);
  });

  return (
    <group name={`live-${connectionId}`} ref={root}>
      {(robot?.groups ?? []).map((g) => (
        <primitive key={g.uuid} object={g} />
      ))}
    </group>
  );
}
