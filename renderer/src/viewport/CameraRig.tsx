import { useFrame, useThree } from '@react-three/fiber';
import { useEffect, useMemo, useRef } from 'react';
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { poseStore } from '../playback/poseStore';

// Orbit camera around the robot. With `follow`, the orbit target (and the camera with it) moves
// with the robot's root in the ground plane, so walking clips stay in view; height is left to
// the operator. z is up (MuJoCo convention): the camera's `up` is set before the controls exist.

const TARGET_HEIGHT_M = 0.65;

export function CameraRig({ follow }: { follow: boolean }) {
  const camera = useThree((s) => s.camera);
  const domElement = useThree((s) => s.gl.domElement);
  const invalidate = useThree((s) => s.invalidate);
  const controls = useMemo(() => {
    camera.up.set(0, 0, 1);
    const c = new OrbitControls(camera, domElement);
    c.enableDamping = true;
    c.dampingFactor = 0.12;
    c.minDistance = 0.4;
    c.maxDistance = 40;
    c.maxPolarAngle = Math.PI * 0.495;
    c.target.set(0, 0, TARGET_HEIGHT_M);
    c.update();
    return c;
  }, [camera, domElement]);
  useEffect(() => {
    // The canvas renders on demand: user input asks for a frame; damping asks for more below.
    const onChange = (): void => invalidate();
    controls.addEventListener('change', onChange);
    return () => {
      controls.removeEventListener('change', onChange);
      controls.dispose();
    };
  }, [controls, invalidate]);

  useEffect(() => invalidate(), [follow, invalidate]); // "Follow robot" toggled: move the camera now

  const delta = useRef(new THREE.Vector3());
  useFrame(() => {
    if (follow) {
      const { rootPosM } = poseStore.getState();
      delta.current.set(rootPosM[0] - controls.target.x, rootPosM[1] - controls.target.y, 0);
      if (delta.current.lengthSq() > 1e-12) {
        controls.target.add(delta.current);
        camera.position.add(delta.current);
      }
    }
    if (controls.update()) invalidate(); // still moving (damping): render another frame
  });
  return null;
}
