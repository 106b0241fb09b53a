import { Canvas, useThree } from '@react-three/fiber';
import { useEffect, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { useMeshStore } from '../stores/meshStore';
import { poseStore } from '../stores/poseStore';
import { useRobotStore } from '../stores/robotStore';
import { overlayStore, useRunStore } from '../stores/runStore';
import { CameraRig } from './CameraRig';
import { ErrorLegend } from './ErrorLegend';
import { ReferenceRobot, RunRobot } from './RobotModel';
import { Stage } from './Stage';

const BACKGROUND = '#0b0e12'; // = BACKGROUND_COLOR in Stage.tsx

function MeshStatus() {
  const { total, loaded, failed, triangles } = useMeshStore();
  if (total === 0) return null;
  const done = loaded + failed.length === total;
  return (
    <span
      className={failed.length > 0 ? 'mesh-status bad' : 'mesh-status muted'}
      data-testid="mesh-status"
      title={failed.map((f) => `${f.name}: ${f.message}`).join('\n') || undefined}
    >
      {done ? `meshes ${loaded}/${total}` : `loading meshes ${loaded}/${total}…`}
      {triangles > 0 && ` · ${Math.round(triangles / 1000)}k tri`}
      {failed.length > 0 && ` · ${failed.length} failed (${failed[0].name}: ${failed[0].message})`}
    </span>
  );
}

/**
 * The canvas renders on demand (frameloop="demand"), not 60 times a second: a frame is drawn when
 * something shown changes — the reference pose, the overlay, run visibility and colour mode, a
 * mesh arriving, camera input (CameraRig) or a resize. An idle console costs no GPU time.
 */
function RenderOnChange() {
  const invalidate = useThree((s) => s.invalidate);
  useEffect(() => {
    const offs = [poseStore.subscribe(() => invalidate()), overlayStore.subscribe(() => invalidate()), useRunStore.subscribe(() => invalidate()), useMeshStore.subscribe(() => invalidate())];
    invalidate();
    return () => offs.forEach((off) => off());
  }, [invalidate]);
  return null;
}

/** The 3D view: z-up world, ground grid, the reference pose and any executed runs, posed by FK. */
export function Viewport() {
  const profile = useRobotStore((s) => s.profile);
  const runIds = useRunStore(useShallow((s) => s.runs.map((r) => r.id)));
  const showReference = useRunStore((s) => s.showReference);
  const [follow, setFollow] = useState(true);
  const overlay = runIds.length > 0;
  return (
    <div className="viewport" data-testid="viewport">
      <Canvas
        frameloop="demand"
        shadows
        dpr={[1, 2]}
        camera={{ position: [2.25, -1.55, 1.2], up: [0, 0, 1], fov: 40, near: 0.02, far: 200 }}
        gl={{ antialias: true }}
        onCreated={({ scene }) => {
          scene.background = null;
        }}
        style={{ background: BACKGROUND }}
      >
        <RenderOnChange />
        <Stage />
        {profile && <ReferenceRobot profile={profile} style={overlay ? 'ghost' : 'model'} visible={!overlay || showReference} />}
        {profile && runIds.map((id) => <RunRobot key={id} profile={profile} runId={id} />)}
        <CameraRig follow={follow} />
      </Canvas>
      <div className="viewport-overlay">
        <label className="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} />
          Follow robot
        </label>
        {profile && <span className="muted">{profile.modelName} · z up · grid 1 m (fine 0.25 m)</span>}
        <MeshStatus />
      </div>
      {overlay && <ErrorLegend />}
    </div>
  );
}
