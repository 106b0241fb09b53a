import { Canvas } from '@react-three/fiber';
import { useState } from 'react';
import { useRobotStore } from '../stores/robotStore';
import { CameraRig } from './CameraRig';
import { RobotModel } from './RobotModel';
import { Stage } from './Stage';

const BACKGROUND = '#0b0e12'; // = BACKGROUND_COLOR in Stage.tsx

/** The 3D view: z-up world, ground grid, the robot posed from forward kinematics. */
export function Viewport() {
  const profile = useRobotStore((s) => s.profile);
  const [follow, setFollow] = useState(true);
  return (
    <div className="viewport" data-testid="viewport">
      <Canvas
        shadows
        dpr={[1, 2]}
        camera={{ position: [2.25, -1.55, 1.2], up: [0, 0, 1], fov: 40, near: 0.02, far: 200 }}
        gl={{ antialias: true }}
        onCreated={({ scene }) => {
          scene.background = null;
        }}
        style={{ background: BACKGROUND }}
      >
        <Stage />
        {profile && <RobotModel profile={profile} />}
        <CameraRig follow={follow} />
      </Canvas>
      <div className="viewport-overlay">
        <label className="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} />
          Follow robot
        </label>
        {profile && <span className="muted">{profile.modelName} · z up · grid 1 m (fine 0.25 m)</span>}
      </div>
    </div>
  );
}
