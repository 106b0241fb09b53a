import { Canvas } from '@react-three/fiber';
import { useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { ErrorLegend } from './ErrorLegend';
import { useRunStore } from '../overlay/runStore';
import { useConnectionStore } from '../api/connectionStore';
import { useIdleRobotIds } from '../robot/liveStreams';
import { useRobotStore } from '../robot/robotStore';
import { useSafetyStore } from '../safety/safetyStore';
import { CameraRig } from './CameraRig';
import { useMeshStore } from './meshStore';
import { RenderOnChange } from './renderOnDemand';
import { LIVE_ROBOT_COLOR, LiveRobot } from './LiveRobotModel';
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
 * The live robots' legend: which connection is drawn in the live colour, and where its root comes
 * from. While a real trial streams, the trial's own live run (error colours) shows the robot instead.
 */
function LiveRobotLegend({ ids, trialLive, globalRoot }: { ids: string[]; trialLive: boolean; globalRoot: boolean }) {
  if (ids.length === 0) return null;
  return (
    <span className="live-robot-legend" data-testid="live-robot-legend">
      <span className="live-robot-swatch" style={{ background: LIVE_ROBOT_COLOR }} />
      live robot {ids.join(', ')}
      <span className="muted">
        {trialLive
          ? ' · shown as the trial run while a trial streams'
          : globalRoot
            ? ' · measured joints, root from motion capture'
            : ' · measured joints; no motion capture: at the reference root, tilted as its IMU measures'}
      </span>
    </span>
  );
}

/** The 3D view: z-up world, ground grid, the reference pose, any executed runs and the live robot, posed by FK. */
export function Viewport() {
  const profile = useRobotStore((s) => s.profile);
  const fk = useRobotStore((s) => s.fk);
  const runIds = useRunStore(useShallow((s) => s.runs.map((r) => r.id)));
  const trialLive = useRunStore((s) => s.runs.some((r) => r.live && r.domain === 'real_robot'));
  const showReference = useRunStore((s) => s.showReference);
  const servicesUp = useConnectionStore((s) => s.status === 'connected');
  const liveIds = useIdleRobotIds((s) => s.ids);
  const shownLive = servicesUp ? liveIds : []; // kept to the connected robots by retainLiveRobots (robot/liveStreams.ts)
  const globalRoot = useSafetyStore((s) => s.robots.some((r) => shownLive.includes(r.connectionId) && r.globalRoot));
  const [follow, setFollow] = useState(true);
  const overlay = runIds.length > 0 || shownLive.length > 0;
  return (
    <div className="viewport" data-testid="viewport">
      {/* The 3D canvas and the one-line overlay at its top; the colour legend below it, outside the
          canvas, so it never covers the robot. */}
      <div className="viewport-canvas" data-testid="viewport-canvas">
        <Canvas
          frameloop="demand" // renderOnDemand.tsx: a frame when something shown changes, none while idle
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
          {profile && (
            <ReferenceRobot profile={profile} style={overlay ? 'ghost' : 'model'} visible={!overlay || showReference} />
          )}
          {profile && runIds.map((id) => <RunRobot key={id} profile={profile} runId={id} />)}
          {profile &&
            fk &&
            shownLive.map((id) => (
              <LiveRobot key={id} profile={profile} fk={fk} connectionId={id} visible={!trialLive} />
            ))}
          <CameraRig follow={follow} />
        </Canvas>
        <div className="viewport-overlay">
          <label className="check">
            <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} />
            Follow robot
          </label>
          {profile && <span className="muted">{profile.modelName} · z up · grid 1 m (fine 0.25 m)</span>}
          <MeshStatus />
          <LiveRobotLegend ids={shownLive} trialLive={trialLive} globalRoot={globalRoot} />
        </div>
      </div>
      {runIds.length > 0 && <ErrorLegend />}
    </div>
  );
}
