import { create } from 'zustand';

// Loading state of the robot model's mesh files (low rate): what the viewport's status line and
// the end-to-end tests read. The geometries themselves live in viewport/meshCache.ts.

export interface MeshFailure {
  name: string;
  message: string;
}

export interface MeshState {
  /** The model the counts belong to (RobotProfile.sourceFile). */
  modelFile: string | null;
  /** Meshes the drawn geoms reference. */
  total: number;
  loaded: number;
  failed: MeshFailure[];
  /** Triangles of the loaded meshes, for the status line. */
  triangles: number;
}

export const useMeshStore = create<MeshState>(() => ({
  modelFile: null,
  total: 0,
  loaded: 0,
  failed: [],
  triangles: 0,
}));
