import { Buffer } from 'node:buffer';
import path from 'node:path';
import { MAX_MESH_FILE_BYTES, type MeshDto, type MeshFormat } from '../../api/contract';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { InputError } from '../../domain/problems';
import { readBoundedFile } from '../files/boundedRead';
import { ApiFailure } from './apiFailure';

// robot.getMesh: the bytes of a mesh the loaded model references. The caller names a mesh asset;
// the file comes from the profile (MJCF <mesh file>, meshdir applied, joined with the model's
// directory by the MJCF reader), so no request can reach a path the model does not name.

const FORMATS: Record<string, MeshFormat> = { '.stl': 'stl', '.obj': 'obj' };

/** Mesh asset name → file, over every geom of the profile (visual and collision). */
export function profileMeshFiles(profile: RobotProfile): Map<string, string> {
  const files = new Map<string, string>();
  for (const body of profile.bodies) {
    for (const g of body.geoms) {
      if (g.type === 'mesh' && g.mesh) files.set(g.mesh.name, g.mesh.file);
    }
  }
  return files;
}

export function readProfileMesh(profile: RobotProfile, name: string): MeshDto {
  const file = profileMeshFiles(profile).get(name);
  if (file === undefined) {
    throw new ApiFailure(
      'not_found',
      `the robot model ${profile.modelName} references no mesh named "${name}"`,
      'params.name',
    );
  }
  const format = FORMATS[path.extname(file).toLowerCase()];
  if (!format) {
    throw new ApiFailure(
      'unsupported',
      `mesh "${name}" (${path.basename(file)}): only STL and OBJ meshes can be drawn`,
    );
  }
  // A regular file of at most MAX_MESH_FILE_BYTES, judged on the open descriptor; ENOENT and
  // friends map to structured errors in toApiError.
  let bytes: Uint8Array;
  try {
    bytes = readBoundedFile(file, { bytes: MAX_MESH_FILE_BYTES, what: 'meshes sent to the console' });
  } catch (err) {
    if (err instanceof InputError && /larger than|grew past/.test(err.reason)) {
      throw new ApiFailure('too_large', `mesh "${name}" (${path.basename(file)}): ${err.reason}`);
    }
    throw err;
  }
  return {
    name,
    format,
    byteLength: bytes.length,
    bytesBase64: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64'),
  };
}
