import { describe, expect, it } from 'vitest';
import { quatFromYawPitchRoll, quatToYawPitchRoll } from '../../src/domain/calibration/attitude';
import {
  FALLEN_TILT_LIMIT_RAD,
  liveRootQuatOnReference,
  robotAlerts,
  tiltRadFromQuatWxyz,
} from '../../src/domain/robotLink/robotUpright';

// The IMU tilt the top bar shows and the banner that says a robot is down or limp.

const deg = (d: number) => (d * Math.PI) / 180;

describe('tilt from the IMU quaternion (w x y z)', () => {
  it('is 0 upright whatever the heading, and the pitch of a robot lying face down', () => {
    expect(tiltRadFromQuatWxyz([1, 0, 0, 0])).toBe(0);
    expect(tiltRadFromQuatWxyz(quatFromYawPitchRoll(deg(90), 0, 0))).toBeCloseTo(0, 12);
    expect(tiltRadFromQuatWxyz(quatFromYawPitchRoll(deg(40), deg(-58), 0))).toBeCloseTo(deg(58), 12);
    // roll and pitch together: the up axis moves by acos(cos φ cos θ)
    expect(tiltRadFromQuatWxyz(quatFromYawPitchRoll(0, deg(20), deg(20)))).toBeCloseTo(
      Math.acos(Math.cos(deg(20)) ** 2),
      12,
    );
  });

  it('normalises first, reads at an offset, and is NaN for a zero quaternion', () => {
    const q = quatFromYawPitchRoll(0, deg(35), 0).map((v) => v * 3);
    expect(tiltRadFromQuatWxyz([9, 9, ...q], 2)).toBeCloseTo(deg(35), 12);
    expect(tiltRadFromQuatWxyz([0, 0, 0, 0])).toBeNaN();
  });

  it('negative control: the same upright robot facing +y read in x y z w order looks as if it lay on its side', () => {
    const wxyz = quatFromYawPitchRoll(deg(90), 0, 0);
    const xyzw = [wxyz[1], wxyz[2], wxyz[3], wxyz[0]];
    expect(tiltRadFromQuatWxyz(wxyz)).toBeCloseTo(0, 12);
    expect(tiltRadFromQuatWxyz(xyzw)).toBeCloseTo(deg(90), 9);
  });
});

describe('the fallen/damped banner', () => {
  it('is empty for an upright robot whose controller is idle, ready, tracking or done, or unknown', () => {
    for (const s of ['idle', 'ready', 'tracking', 'done', null] as const)
      expect(robotAlerts({ tiltRad: deg(3), wbcState: s })).toEqual([]);
    expect(robotAlerts({ tiltRad: null, wbcState: null })).toEqual([]);
    expect(robotAlerts({ tiltRad: FALLEN_TILT_LIMIT_RAD, wbcState: 'idle' })).toEqual([]); // at the limit: not past it
  });

  it('names a fall past 30°, damping and fault, most severe first, with the reason', () => {
    expect(robotAlerts({ tiltRad: deg(58), wbcState: 'idle' })).toEqual([
      { code: 'fallen', message: 'robot fallen: tilt 58° (limit 30°)' },
    ]);
    expect(robotAlerts({ tiltRad: deg(2), wbcState: 'damping', wbcReason: 'damp command: interlock lost' })).toEqual([
      { code: 'damping', message: 'robot damped: motors limp: damp command: interlock lost' },
    ]);
    expect(robotAlerts({ tiltRad: deg(70), wbcState: 'fault' }).map((a) => a.code)).toEqual(['fault', 'fallen']);
    expect(robotAlerts({ tiltRad: deg(70), wbcState: 'damping' }).map((a) => a.code)).toEqual(['fallen', 'damping']);
  });
});

describe('the live root without motion capture', () => {
  it("takes the reference's heading and the IMU's roll and pitch", () => {
    const imu = quatFromYawPitchRoll(deg(170), deg(-58), deg(5));
    const ref = quatFromYawPitchRoll(deg(10), deg(1), 0);
    const ypr = quatToYawPitchRoll(liveRootQuatOnReference(imu, ref));
    expect(ypr.yawRad).toBeCloseTo(deg(10), 9);
    expect(ypr.pitchRad).toBeCloseTo(deg(-58), 9);
    expect(ypr.rollRad).toBeCloseTo(deg(5), 9);
    // negative control: the IMU's own yaw is not kept
    expect(Math.abs(ypr.yawRad - deg(170))).toBeGreaterThan(1);
  });
});
