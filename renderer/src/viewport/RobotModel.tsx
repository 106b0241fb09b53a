import { useFrame } from '@react-three/fiber';
import { useEffect, useMemo, useRef } from 'react';
import type { Group } from 'three';
import type { RobotProfile } from '../../../src/domain/robot/robotProfile';
import { poseStore } from '../stores/poseStore';
import { buildBodyGroups, disposeBodyGroups } from './geomObjects';
import { setThreeQuaternionFromWxyz, setThreeVectorFromXyz } from './threeConvert';

/** The robot, posed every rendered frame from the transient pose store (no React state). */
export function RobotModel({ profile }: { profile: RobotProfile }) {
  const groups = useMemo(() => buildBodyGroups(profile), [profile]);
  useEffect(() => () => disposeBodyGroups(groups), [groups]);

  const root = useRef<Group>(null);

  useFrame(() => {
    const { bodyPosM, bodyQuatWxyz } = poseStore.getState();
    const posed = bodyPosM.length === 3 * groups.length;
    if (root.current) root.current.visible = posed;
    if (!posed) return;
    for (let i = 0; i < groups.length; i++) {
      setThreeVectorFromXyz(groups[i].position, bodyPosM, 3 * i);
      setThreeQuaternionFromWxyz(groups[i].quaternion, bodyQuatWxyz, 4 * i);
    }
  });

  return (
    <group name="robot" ref={root}>
      {groups.map((g) => (
        <primitive key={g.uuid} object={g} />
      ))}
    </group>
  );
}
