import { ForwardKinematics } from '../../domain/robot/forwardKinematics';
import { loadClipFile } from '../../services/motion/loadClipFile';
import { loadRobotProfile } from '../../services/robot/loadRobotProfile';
import { defineCommand, fpsOption, nonNegativeIntegerOption } from '../cliOptions';
import { printJson, UsageError } from '../cliSupport';

const usage = `usage: motionbench fk --clip <file> --frame <i> [--model <mjcf>] [--fps N] [--json]
  World pose of every body of the model (model body order, pelvis first) at frame i of the clip:
  bodies: [{name, pos: [x,y,z] (m), quat: [w,x,y,z]}].`;

export const fkCommand = defineCommand({
  name: 'fk',
  summary: 'world pose of every body at one frame of a clip',
  usage,
  strings: ['clip', 'frame', 'model', 'fps'],
  flags: ['json'],
  async run(values, io, { required }) {
    const clipFile = required('clip', 'absent');
    const frame = nonNegativeIntegerOption(values.frame, 'frame', 'a non-negative integer (a frame index)');
    if (frame === undefined) throw new UsageError(`--frame is required\n${usage}`);
    const fps = fpsOption(values.fps);
    const profile = loadRobotProfile(values.model);
    const clip = loadClipFile(clipFile, { fps, jointLimitsRad: profile.joints.map((j) => j.rangeRad) });
    if (frame >= clip.frameCount)
      throw new UsageError(`--frame ${frame} is past the clip's last frame (${clip.frameCount - 1})`);
    const fk = new ForwardKinematics(profile);
    const pos = new Float64Array(3 * fk.bodyCount);
    const quat = new Float64Array(4 * fk.bodyCount);
    fk.computeClipFrame(clip, frame, pos, quat);
    const bodies = profile.bodies.map((b, i) => ({
      name: b.name,
      pos: [pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]],
      quat: [quat[4 * i], quat[4 * i + 1], quat[4 * i + 2], quat[4 * i + 3]],
    }));
    if (values.json)
      printJson(io, { clip: clip.provenance.file, model: profile.sourceFile, frame, time_s: frame / clip.fps, bodies });
    else {
      io.stdout(
        `${clip.provenance.file} frame ${frame} (t = ${(frame / clip.fps).toFixed(4)} s), model ${profile.modelName}\n`,
      );
      for (const b of bodies)
        io.stdout(
          `  ${b.name.padEnd(28)} pos ${b.pos.map((v) => v.toFixed(5).padStart(9)).join(' ')}   quat ${b.quat.map((v) => v.toFixed(5).padStart(8)).join(' ')}\n`,
        );
    }
    return 0;
  },
});
