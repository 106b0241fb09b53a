import { useThrottledPose } from '../playback/useThrottledPose';
import { toggleJointSelection, useJointSelection } from './jointSelection';
import { useRobotStore } from '../robot/robotStore';

const DEG = 180 / Math.PI;

/** Where `v` lies in [lo, hi] as a fraction, clamped to [0, 1]. */
const fraction = (v: number, lo: number, hi: number): number => Math.min(1, Math.max(0, (v - lo) / (hi - lo)));

/** The 29 joint angles of the shown frame, with each joint's range. Refreshed at ~12 Hz. */
export function JointTable() {
  const joints = useRobotStore((s) => s.profile?.joints);
  const q = useThrottledPose((s) => Array.from(s.jointPosRad));
  const hasClip = useThrottledPose((s) => s.clipId !== null);
  const selected = useJointSelection((s) => s.joint);
  if (!joints) return null;
  return (
    <section className="panel panel-grow">
      <h2>Joints · {hasClip ? 'shown frame' : 'model default pose'}</h2>
      <table className="joint-table" data-testid="joint-table">
        <thead>
          <tr>
            <th>Joint</th>
            <th className="num">rad</th>
            <th className="num">deg</th>
            <th>Range</th>
          </tr>
        </thead>
        <tbody>
          {joints.map((j) => {
            const v = q[j.index] ?? 0;
            const range = j.rangeRad;
            const outside = range !== null && (v < range[0] || v > range[1]);
            return (
              <tr
                key={j.name}
                className={
                  [outside && 'outside', selected === j.index && 'selected'].filter(Boolean).join(' ') || undefined
                }
                onClick={() => toggleJointSelection(j.index)}
                title="Click to plot this joint's error over time (Overlay panel)"
                aria-selected={selected === j.index}
                data-testid={`joint-row-${j.name}`}
              >
                <td className="joint-name" title={j.name}>
                  {j.name.replace(/_joint$/, '')}
                </td>
                <td className="num">{v.toFixed(3)}</td>
                <td className="num">{(v * DEG).toFixed(1)}</td>
                <td>
                  {range ? (
                    <div
                      className="limit-bar"
                      title={`${range[0].toFixed(3)} … ${range[1].toFixed(3)} rad${outside ? ' — OUTSIDE' : ''}`}
                    >
                      {range[0] < 0 && range[1] > 0 && (
                        <div className="limit-zero" style={{ left: `${fraction(0, range[0], range[1]) * 100}%` }} />
                      )}
                      <div className="limit-mark" style={{ left: `${fraction(v, range[0], range[1]) * 100}%` }} />
                    </div>
                  ) : (
                    <span className="muted">unlimited</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
