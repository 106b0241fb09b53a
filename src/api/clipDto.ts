import type { Warning } from '../domain/problems';
import type { MotionClip, CapabilityGroup, ClipFormat, FpsSource } from '../domain/motion/motionClip';

// The one place a MotionClip crosses the API boundary: Float64Array -> number[] on the Node
// side, number[] -> Float64Array in the renderer.

/** A MotionClip as it crosses the boundary: typed arrays as number[]. */
export interface ClipDto {
  id: string;
  name: string;
  fps: number;
  frameCount: number;
  /** (frameCount - 1) / fps, seconds. */
  durationS: number;
  file: string;
  format: ClipFormat;
  fileSha256: string;
  fpsSource: FpsSource;
  capabilityGroup?: string;
  /** N×3, metres. */
  rootPosM: number[];
  /** N×4, wxyz. */
  rootQuatWxyz: number[];
  /** N×29, radians, canonical G1 order. */
  jointPosRad: number[];
  /** At most MAX_WARNINGS_SENT warnings; warningCount is the full count. */
  warnings: Warning[];
  warningCount: number;
}

export const MAX_WARNINGS_SENT = 200;

export function clipToDto(clip: MotionClip): ClipDto {
  const dto: ClipDto = {
    id: clip.id,
    name: clip.name,
    fps: clip.fps,
    frameCount: clip.frameCount,
    durationS: clip.frameCount > 1 ? (clip.frameCount - 1) / clip.fps : 0,
    file: clip.provenance.file,
    format: clip.provenance.format,
    fileSha256: clip.provenance.fileSha256,
    fpsSource: clip.provenance.fpsSource,
    rootPosM: Array.from(clip.rootPosM),
    rootQuatWxyz: Array.from(clip.rootQuatWxyz),
    jointPosRad: Array.from(clip.jointPosRad),
    warnings: clip.warnings.slice(0, MAX_WARNINGS_SENT).map((w) => ({ ...w })),
    warningCount: clip.warnings.length,
  };
  if (clip.capabilityGroup !== undefined) dto.capabilityGroup = clip.capabilityGroup;
  return dto;
}

/** A clip as the renderer holds it: the domain MotionClip plus what the DTO adds. */
export interface LoadedClip {
  clip: MotionClip;
  durationS: number;
  warningCount: number;
}

export function clipFromDto(dto: ClipDto): LoadedClip {
  const clip: MotionClip = {
    id: dto.id,
    name: dto.name,
    fps: dto.fps,
    frameCount: dto.frameCount,
    rootPosM: Float64Array.from(dto.rootPosM),
    rootQuatWxyz: Float64Array.from(dto.rootQuatWxyz),
    jointPosRad: Float64Array.from(dto.jointPosRad),
    provenance: { file: dto.file, format: dto.format, fileSha256: dto.fileSha256, fpsSource: dto.fpsSource },
    warnings: dto.warnings,
  };
  if (dto.capabilityGroup !== undefined) clip.capabilityGroup = dto.capabilityGroup as CapabilityGroup;
  return { clip, durationS: dto.durationS, warningCount: dto.warningCount };
}

/**
 * An executed trajectory on the 50 Hz contract timeline, frame-major: a sim run's recording, an
 * episode replayed for the gap review, a matched trial's executed motion.
 */
export interface ExecutedTrajectoryDto {
  frames: number;
  /** s from the recording's first frame. */
  timeS: number[];
  /** frames×3, m; null without a measured global root (a real robot without motion capture): drawn at the reference root. */
  rootPosM: number[] | null;
  /** frames×4, wxyz. */
  rootQuatWxyz: number[] | null;
  /** frames×29, rad, canonical Unitree order. */
  jointPosRad: number[];
}
