import type { StartResiduals } from '../calibration/residuals';
import { CALIBRATION_CHECK } from './trialChecks';

// The verdict on a captured start pose against the clip's first frame, shown before the
// calibration is accepted. The tolerance is the one the runner admits each trial's start with
// (CALIBRATION_CHECK: a fresh capture against the pair's calibration, per joint and in roll/pitch):
// a calibration farther than that from the clip's first frame starts every trial of the pair, and
// its simulation branch, away from the reference (the gap review then finds its worst frame at
// frame 0). Outside it, Accept asks for an explicit confirmation; it is not refused.

export interface StartPoseVerdict {
  within: boolean;
  /** One line per figure beyond the tolerance, with the value and the limit. */
  reasons: string[];
  /** One line for the operator. */
  summary: string;
}

const deg = (rad: number): string => `${((rad * 180) / Math.PI).toFixed(1)}°`;

export function startPoseVerdict(
  r: Pick<StartResiduals, 'jointRad' | 'maxAbsJointRad' | 'maxAbsJoint' | 'rollRad' | 'pitchRad'>,
  jointNames: readonly string[],
): StartPoseVerdict {
  const jointLimit = CALIBRATION_CHECK.maxJointDiffRad;
  const attLimit = CALIBRATION_CHECK.maxAttitudeDiffRad;
  const reasons: string[] = [];
  const out = r.jointRad
    .map((d, j) => ({ joint: jointNames[j] ?? `joint ${j}`, d }))
    .filter((x) => !(Math.abs(x.d) <= jointLimit))
    .sort((a, b) => Math.abs(b.d) - Math.abs(a.d));
  if (out.length > 0) {
    const listed = out
      .slice(0, 3)
      .map((x) => `${x.joint.replace(/_joint$/, '')} ${deg(x.d)}`)
      .join(', ');
    reasons.push(
      `${out.length} joint${out.length === 1 ? '' : 's'} beyond ${deg(jointLimit)} of the clip's first frame: ${listed}${out.length > 3 ? ', …' : ''}`,
    );
  }
  for (const [name, v] of [
    ['roll', r.rollRad],
    ['pitch', r.pitchRad],
  ] as const)
    if (!(Math.abs(v) <= attLimit)) reasons.push(`${name} ${deg(v)} beyond ${deg(attLimit)}`);
  const within = reasons.length === 0;
  return {
    within,
    reasons,
    summary: within
      ? `start pose within tolerance: max |Δ| ${deg(r.maxAbsJointRad)} ≤ ${deg(jointLimit)}, roll ${deg(r.rollRad)} and pitch ${deg(r.pitchRad)} within ${deg(attLimit)}`
      : `start pose OUTSIDE tolerance: ${reasons.join('; ')}`,
  };
}
