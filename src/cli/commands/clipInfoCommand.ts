import { ForwardKinematics } from '../../domain/robot/forwardKinematics';
import { G1_JOINT_NAMES } from '../../domain/robot/g1Joints';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { JointLimitWarning } from '../../domain/motion/motionClip';
import { loadClipFile } from '../../services/motion/loadClipFile';
import { loadRobotProfile } from '../../services/robot/loadRobotProfile';
import { defineCommand, fpsOption } from '../cliOptions';
import { printJson, UsageError } from '../cliSupport';

const usage = `usage: motionbench clip info <file|folder> [--fps N] [--model <mjcf>] [--json]
  Reads a motion clip (LAFAN1-G1 CSV, BeyondMimic/mjlab NPZ, motionbench JSON, HoloMotion NPZ,
  ProtoMotions .motion, or a SONIC reference motion folder) and prints frames, fps and where it
  came from, the joint and quaternion order the file was read in, duration, root height range
  and joint-limit excursions (limits from --model, default: our G1 in assets/).`;

/** The root quaternion order each of our own formats fixes (peers' readers state theirs in provenance). */
const FORMAT_QUATERNION_ORDER: Partial<Record<string, string>> = {
  'lafan1-csv': 'xyzw (the format fixes it)',
  'mjlab-npz': 'wxyz (the format fixes it)',
  'motionbench-json': 'wxyz (the format fixes it)',
};

export interface ClipInfo {
  file: string;
  /** How the file's joint order was decided (NPZ) or where a peer's format states it, 'canonical (the format fixes it)', or null. */
  joint_order: string | null;
  /** The root quaternion order the file stores, and where that is stated; null when unknown. */
  quaternion_order: string | null;
  name: string;
  id: string;
  format: string;
  frames: number;
  fps: number;
  fps_source: string;
  duration_s: number;
  joints: number;
  root_z_min: number;
  root_z_max: number;
  limit_violations: { joint: string; frame: number; value: number }[];
  warnings: { code: string; message: string }[];
}

export function clipInfo(clip: MotionClip): ClipInfo {
  let zMin = Infinity;
  let zMax = -Infinity;
  for (let f = 0; f < clip.frameCount; f++) {
    const z = clip.rootPosM[3 * f + 2];
    if (z < zMin) zMin = z;
    if (z > zMax) zMax = z;
  }
  const limit = clip.warnings.filter((w): w is JointLimitWarning => w.code === 'joint_limit');
  return {
    file: clip.provenance.file,
    name: clip.name,
    id: clip.id,
    format: clip.provenance.format,
    frames: clip.frameCount,
    fps: clip.fps,
    fps_source: clip.provenance.fpsSource,
    duration_s: (clip.frameCount - 1) / clip.fps,
    joints: G1_JOINT_NAMES.length,
    joint_order:
      clip.provenance.jointOrder ?? (clip.provenance.format === 'mjlab-npz' ? null : 'canonical (the format fixes it)'),
    quaternion_order: clip.provenance.quaternionOrder ?? FORMAT_QUATERNION_ORDER[clip.provenance.format] ?? null,
    root_z_min: zMin,
    root_z_max: zMax,
    limit_violations: limit.map((w) => ({ joint: w.joint, frame: w.frame, value: w.value })),
    warnings: clip.warnings.filter((w) => w.code !== 'joint_limit').map((w) => ({ code: w.code, message: w.message })),
  };
}

export const clipInfoCommand = defineCommand({
  name: 'clip info',
  summary: 'frames, fps, duration, root height range and joint-limit excursions of a clip',
  usage,
  strings: ['fps', 'model'],
  flags: ['json'],
  positionals: 1,
  async run(values, io, { positionals }) {
    if (positionals.length !== 1) throw new UsageError(`clip info takes one file, got ${positionals.length}\n${usage}`);
    const fps = fpsOption(values.fps);
    const profile = loadRobotProfile(values.model);
    const clip = loadClipFile(positionals[0], {
      fps,
      jointLimitsRad: profile.joints.map((j) => j.rangeRad),
      kinematics: new ForwardKinematics(profile),
    });
    const info = clipInfo(clip);
    if (values.json) printJson(io, info);
    else {
      io.stdout(
        [
          `${info.file}`,
          `  name        ${info.name} (${info.id})`,
          `  format      ${info.format}`,
          `  frames      ${info.frames} at ${info.fps} fps (${info.fps_source}), ${info.duration_s.toFixed(3)} s`,
          `  joints      ${info.joints}${info.joint_order ? `, order ${info.joint_order}` : ''}`,
          ...(info.quaternion_order ? [`  quaternion  ${info.quaternion_order}`] : []),
          `  root z      ${info.root_z_min.toFixed(3)} .. ${info.root_z_max.toFixed(3)} m`,
          `  limits      ${info.limit_violations.length === 0 ? 'within the joint limits of ' + profile.modelName : `${info.limit_violations.length} excursion(s)`}`,
          ...info.limit_violations
            .slice(0, 20)
            .map((v) => `    ${v.joint} frame ${v.frame}: ${v.value.toFixed(4)} rad`),
          ...info.warnings.map((w) => `  warning     ${w.message}`),
        ].join('\n') + '\n',
      );
    }
    return 0;
  },
});
