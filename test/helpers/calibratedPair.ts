import { withClip } from '../../src/domain/calibration/residuals';
import { MB_METRICS_1 } from '../../src/domain/metrics';
import type { CalibrationRecord } from '../../src/domain/trace/records';
import { loadRobotProfile, DEFAULT_MODEL_FILE } from '../../src/services/robot/loadRobotProfile';
import { openCampaign } from '../../src/services/trace';
import { parentTraceInputs } from '../../src/services/trace/parentInputs';
import { clipForPairId } from '../../src/services/trial/pairClip';

// A calibration of a qualification pair, stored as the matched-pair runner stores one: measured at
// the clip's first frame (a robot standing exactly at the reference start), bound to the clip by
// withClip, and the matched parent trace that names it. Stillness: every joint at 1e-6 rad (below
// the sensitivity σ floor) except the ones given. For the start-state sensitivity tests.

export async function storeCalibratedStart(
  campaignDir: string,
  pairId: string,
  jointStdRad: Record<string, number> = {},
): Promise<string> {
  const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
  const store = await openCampaign(campaignDir);
  try {
    const { clip } = clipForPairId(store, pairId);
    const J = profile.joints.length;
    const quat = Array.from(clip.rootQuatWxyz.subarray(0, 4));
    const stillness: Record<string, number> = { windowS: 1 };
    for (const j of profile.joints) stillness[`jointStdRad.${j.name}`] = jointStdRad[j.name] ?? 1e-6;
    const record: CalibrationRecord = withClip(
      {
        robotUnit: 'g1-test',
        capturedAt: '2026-12-02T06:00:00.000Z',
        clipId: clip.id,
        measured: {
          jointPosRad: Array.from(clip.jointPosRad.subarray(0, J)),
          imuQuatWxyz: quat,
          rootPosM: Array.from(clip.rootPosM.subarray(0, 3)),
          rootQuatWxyz: quat,
        },
        stillness,
        simulatorInitialState: null,
        residuals: { settledVsMeasured: null, measuredVsClipStart: null },
      },
      clip,
      profile,
    );
    const cal = store.putCalibration(record);
    const parent = store.getParentTrace(pairId)!;
    const binding = store.getBinding(parent.identity.bindingId, parent.identity.bindingVersion)!.binding;
    store.ensureParentTrace(
      parentTraceInputs({ binding, clip, profile, contract: MB_METRICS_1, calibrationId: cal.id }),
    );
    return cal.id;
  } finally {
    store.close();
  }
}
