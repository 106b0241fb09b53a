import type * as THREE from 'three';
import type { RobotProfile } from '../../../src/domain/robot/robotProfile';
import { base64ToBytes } from '../api/base64';
import { ApiCallError, type ConsoleClient } from '../api/consoleClient';
import { drawableGeoms } from './geomObjects';
import { parseMeshGeometry } from './meshGeometry';
import { useMeshStore } from './meshStore';

// Mesh geometries of the loaded robot model, fetched once per model through robot.getMesh and
// parsed in the renderer. One promise per (model, mesh): every robot drawn (reference ghost and
// each executed run) shares the same BufferGeometry. Fetches run a few at a time so the link and
// the main thread stay responsive while a 19 MB model (Menagerie's G1) arrives.

const CONCURRENCY = 4;

const cache = new Map<string, Promise<THREE.BufferGeometry>>();
let cacheModel: string | null = null;
let active = 0;
const queue: Array<() => void> = [];

const key = (modelFile: string, name: string): string => `${modelFile}\u0000${name}`;

function slot<T>(task: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const run = (): void => {
      active++;
      task()
        .then(resolve, reject)
        .finally(() => {
          active--;
          queue.shift()?.();
        });
    };
    if (active < CONCURRENCY) run();
    else queue.push(run);
  });
}

/** The mesh asset names the drawn geoms of `profile` reference. */
export function drawnMeshNames(profile: RobotProfile): string[] {
  const names = new Set<string>();
  for (const g of drawableGeoms(profile)) if (g.type === 'mesh' && g.mesh) names.add(g.mesh.name);
  return [...names];
}

/**
 * Starts loading every mesh the profile draws (idempotent per model) and tracks progress in the
 * mesh store. Call when the robot model is set.
 */
export function preloadProfileMeshes(profile: RobotProfile, client: ConsoleClient): void {
  if (cacheModel !== profile.sourceFile) {
    for (const p of cache.values())
      void p.then(
        (g) => g.dispose(),
        () => {},
      );
    cache.clear();
    cacheModel = profile.sourceFile;
  }
  const names = drawnMeshNames(profile);
  useMeshStore.setState({ modelFile: profile.sourceFile, total: names.length, loaded: 0, failed: [], triangles: 0 });
  for (const name of names) {
    void meshGeometry(profile, name, client).then(
      (g) => {
        if (useMeshStore.getState().modelFile !== profile.sourceFile) return;
        useMeshStore.setState((s) => ({
          loaded: s.loaded + 1,
          triangles: s.triangles + g.getAttribute('position').count / 3,
        }));
      },
      (err: unknown) => {
        if (useMeshStore.getState().modelFile !== profile.sourceFile) return;
        const message =
          err instanceof ApiCallError ? err.error.message : err instanceof Error ? err.message : String(err);
        useMeshStore.setState((s) => ({ failed: [...s.failed, { name, message }] }));
      },
    );
  }
}

/** The geometry of one mesh of the profile (fetched and parsed on first request). */
export function meshGeometry(
  profile: RobotProfile,
  name: string,
  client: ConsoleClient,
): Promise<THREE.BufferGeometry> {
  const k = key(profile.sourceFile, name);
  let p = cache.get(k);
  if (!p) {
    p = slot(async () => {
      const dto = await client.call('robot.getMesh', { name });
      return parseMeshGeometry(dto.format, base64ToBytes(dto.bytesBase64));
    });
    cache.set(k, p);
    // A failure is not cached: the next request (e.g. after a reconnection) tries again.
    p.catch(() => {
      if (cache.get(k) === p) cache.delete(k);
    });
  }
  return p;
}

/** A lookup for geomObjects: the cached promise, or null when the mesh was never requested. */
export function cachedMeshGeometry(profile: RobotProfile, name: string): Promise<THREE.BufferGeometry> | null {
  return cache.get(key(profile.sourceFile, name)) ?? null;
}
