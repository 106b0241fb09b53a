import { useFrame, useThree } from '@react-three/fiber';
import { useEffect, useRef, useState } from 'react';
import * as THREE from 'three';
import type { Group } from 'three';
import type { RobotProfile } from '../../../src/domain/robot/robotProfile';
import { useConnectionStore } from '../api/connectionStore';
import { errorColorRgb } from '../overlay/errorScale';
import { shownBodyErrors } from '../overlay/overlayEngine';
import { overlayStore } from '../overlay/overlayStore';
import { runColorRgb } from '../overlay/runColors';
import { useRunStore } from '../overlay/runStore';
import { poseStore } from '../playback/poseStore';
import { drawnReference, drawnRunMaterials, drawnRunVisible } from './drawnRobots';
import { buildRobot, type BuiltRobot, type RobotStyle } from './geomObjects';
import { cachedMeshGeometry, meshGeometry } from './meshCache';
import { setThreeQuaternionFromWxyz, setThreeVectorFromXyz } from './threeConvert';

// Robots in the viewport, posed every rendered frame from transient stores (no React state):
//   ReferenceRobot — the reference clip frame on display (poseStore): the model's own colours,
//                    or a translucent ghost while executed runs are overlaid
//   RunRobot       — one executed run at the playhead (overlayStore), each body coloured by its
//                    position error against the reference, or (colour mode "by run") the whole
//                    robot in the run's identity colour

const NO_GROUPS: THREE.Group[] = [];
const NO_MATERIALS: THREE.MeshStandardMaterial[] = [];

/**
 * The three.js objects of one robot, built in an effect and disposed by its cleanup (so React's
 * StrictMode remount builds a fresh one instead of reusing a disposed one). Null until built.
 */
export function useBuiltRobot(profile: RobotProfile, style: RobotStyle): BuiltRobot | null {
  const [robot, setRobot] = useState<BuiltRobot | null>(null);
  const invalidate = useThree((s) => s.invalidate);
  useEffect(() => {
    const built = buildRobot(
      profile,
      style,
      (name) => {
        const cached = cachedMeshGeometry(profile, name);
        if (cached) return cached;
        const client = useConnectionStore.getState().client;
        return client ? meshGeometry(profile, name, client) : null;
      },
      () => invalidate(), // a mesh arrived: draw it (also when it was cached and arrives a tick later)
    );
    setRobot(built);
    return () => built.dispose();
  }, [profile, style, invalidate]);
  return robot;
}

export function poseGroups(groups: THREE.Group[], bodyPosM: Float64Array, bodyQuatWxyz: Float64Array): void {
  for (let i = 0; i < groups.length; i++) {
    setThreeVectorFromXyz(groups[i].position, bodyPosM, 3 * i);
    setThreeQuaternionFromWxyz(groups[i].quaternion, bodyQuatWxyz, 4 * i);
  }
}

export function ReferenceRobot({
  profile,
  style,
  visible = true,
}: {
  profile: RobotProfile;
  style: 'model' | 'ghost';
  visible?: boolean;
}) {
  const groups = useBuiltRobot(profile, style)?.groups ?? NO_GROUPS;
  const root = useRef<Group>(null);
  useEffect(() => {
    drawnReference.groups = groups;
    return () => {
      if (drawnReference.groups === groups) drawnReference.groups = null;
    };
  }, [groups]);
  useFrame(() => {
    const { bodyPosM, bodyQuatWxyz } = poseStore.getState();
    const posed = bodyPosM.length === 3 * groups.length;
    if (root.current) root.current.visible = posed && visible;
    if (posed && visible) poseGroups(groups, bodyPosM, bodyQuatWxyz);
  });
  return (
    <group name={`reference-${style}`} ref={root}>
      {groups.map((g) => (
        <primitive key={g.uuid} object={g} />
      ))}
    </group>
  );
}

const rgb: [number, number, number] = [0, 0, 0];

export function RunRobot({ profile, runId }: { profile: RobotProfile; runId: string }) {
  const robot = useBuiltRobot(profile, 'error');
  const groups = robot?.groups ?? NO_GROUPS;
  const materials = robot?.bodyMaterials ?? NO_MATERIALS;
  const root = useRef<Group>(null);
  useEffect(() => {
    if (materials === NO_MATERIALS) return;
    drawnRunMaterials.set(runId, materials);
    return () => {
      if (drawnRunMaterials.get(runId) === materials) {
        drawnRunMaterials.delete(runId);
        drawnRunVisible.delete(runId);
      }
    };
  }, [runId, materials]);

  useFrame(() => {
    const frame = overlayStore.getState().frames.get(runId);
    const meta = useRunStore.getState().runs.find((r) => r.id === runId);
    const errors = shownBodyErrors(runId);
    const show = groups.length > 0 && frame !== undefined && frame.valid && errors !== null && meta?.visible === true;
    if (root.current) root.current.visible = show;
    drawnRunVisible.set(runId, show);
    if (!show) return;
    poseGroups(groups, frame.bodyPosM, frame.bodyQuatWxyz);
    const byRun = useRunStore.getState().colorMode === 'run';
    if (byRun) runColorRgb(meta.colorSlot, rgb);
    for (let b = 0; b < materials.length; b++) {
      if (!byRun) errorColorRgb(errors[b], rgb);
      const m = materials[b];
      m.color.setRGB(rgb[0], rgb[1], rgb[2], THREE.SRGBColorSpace);
      m.emissive.copy(m.color).multiplyScalar(0.22);
    }
  });

  return (
    <group name={`run-${runId}`} ref={root}>
      {groups.map((g) => (
        <primitive key={g.uuid} object={g} />
      ))}
    </group>
  );
}
