import { useFrame, useThree } from '@react-three/fiber';
import { useEffect, useMemo, useRef } from 'react';
import * as THREE from 'three';
import { poseStore } from '../playback/poseStore';

// Floor with a metric grid, world axes and lights, in the z-up world. The grid is a texture on
// the floor rather than line geometry: 40 m lines that cross the camera's near plane are
// dropped by some rasterisers (SwiftShader among them), and a mip-mapped texture stays clean at
// grazing angles. The key light follows the robot so its shadow stays in the shadow map.

const FLOOR_SIZE_M = 60;
/** The viewport background: the floor fades into it towards the horizon. */
export const BACKGROUND_COLOR = 0x0b0e12;

/** One 1 m tile: a 0.25 m fine grid and a brighter 1 m line on the tile border. */
function makeGridTexture(maxAnisotropy: number): THREE.CanvasTexture {
  const px = 512;
  const canvas = document.createElement('canvas');
  canvas.width = px;
  canvas.height = px;
  const ctx = canvas.getContext('2d')!;
  ctx.fillStyle = '#15191f';
  ctx.fillRect(0, 0, px, px);
  ctx.fillStyle = '#232a34';
  for (let i = 1; i < 4; i++) {
    const p = (i * px) / 4;
    ctx.fillRect(p - 1, 0, 2, px);
    ctx.fillRect(0, p - 1, px, 2);
  }
  ctx.fillStyle = '#3b4656';
  for (const p of [0, px - 2]) {
    ctx.fillRect(p, 0, 2, px);
    ctx.fillRect(0, p, px, 2);
  }
  const tex = new THREE.CanvasTexture(canvas);
  tex.wrapS = THREE.RepeatWrapping;
  tex.wrapT = THREE.RepeatWrapping;
  tex.repeat.set(FLOOR_SIZE_M, FLOOR_SIZE_M);
  tex.anisotropy = maxAnisotropy;
  tex.colorSpace = THREE.SRGBColorSpace;
  return tex;
}

export function Stage() {
  const gl = useThree((s) => s.gl);
  const gridTexture = useMemo(() => makeGridTexture(gl.capabilities.getMaxAnisotropy()), [gl]);
  useEffect(() => () => gridTexture.dispose(), [gridTexture]);

  const light = useRef<THREE.DirectionalLight>(null);
  const lightTarget = useMemo(() => new THREE.Object3D(), []);
  useFrame(() => {
    const l = light.current;
    if (!l) return;
    const { rootPosM } = poseStore.getState();
    lightTarget.position.set(rootPosM[0], rootPosM[1], 0);
    l.position.set(rootPosM[0] + 2.5, rootPosM[1] - 1.5, 5);
    lightTarget.updateMatrixWorld();
  });

  return (
    <>
      <fog attach="fog" args={[BACKGROUND_COLOR, 8, 28]} />
      <hemisphereLight args={[0xdde6f5, 0x1a1d22, 1.4]} position={[0, 0, 1]} />
      <directionalLight
        ref={light}
        intensity={2.2}
        castShadow
        target={lightTarget}
        shadow-mapSize={[2048, 2048]}
        shadow-camera-left={-2.5}
        shadow-camera-right={2.5}
        shadow-camera-top={2.5}
        shadow-camera-bottom={-2.5}
        shadow-camera-near={0.5}
        shadow-camera-far={12}
        shadow-bias={-0.0005}
      />
      <directionalLight intensity={0.6} position={[-3, 2, 2]} />
      <primitive object={lightTarget} />
      <mesh receiveShadow name="floor">
        <planeGeometry args={[FLOOR_SIZE_M, FLOOR_SIZE_M]} />
        <meshStandardMaterial map={gridTexture} roughness={1} metalness={0} />
      </mesh>
      <axesHelper args={[0.5]} position={[0, 0, 0.002]} />
    </>
  );
}
