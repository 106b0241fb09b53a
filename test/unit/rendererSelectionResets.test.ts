import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clipFromDto, clipToDto } from '../../src/api/clipDto';
import type { CalibrationCaptureDto, TrialJobStatus } from '../../src/api/contract';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { startSelectionResets } from '../../renderer/src/app/selectionResets';
import { useCalibrationStore } from '../../renderer/src/calibration/calibrationStore';
import { useClipStore } from '../../renderer/src/clips/clipStore';
import { useGapReviewStore, type GapReviewState } from '../../renderer/src/gap/gapStore';
import { addRun, clearRuns } from '../../renderer/src/overlay/runActions';
import {
  useQualificationStore,
  type QualificationBoardState,
} from '../../renderer/src/qualification/qualificationStore';
import { setRobotProfile } from '../../renderer/src/robot/robotStore';
import { trialLiveStore, useTrialStore } from '../../renderer/src/trial/trialStore';
import { OUR_G1, sharedData } from '../helpers/sharedData';

// When the operator picks another pair, or the runs a replay drew are gone
// (another clip, another replay), the panels' stores drop what described the previous selection.
// Each reset stands beside a change that must not reset anything.

const capture = { ok: false, captureId: 'capture-1', message: 'x', reasons: [], stats: null } as CalibrationCaptureDto;
const job = (pairId: string, state: TrialJobStatus['state']) => ({ pairId, state }) as TrialJobStatus;
const gapReplay = { runs: [{ id: 'gap:real-1' }] } as NonNullable<GapReviewState['replay']>;
const qualReplay = { runId: 'sim-7' } as NonNullable<QualificationBoardState['replay']>;

let stop: () => void;
beforeAll(() => {
  setRobotProfile(loadRobotProfile(OUR_G1));
  const file = sharedData('motions/g1_moves/npz/B_HandsUp.npz');
  const clip = decodeMotionFile(new Uint8Array(fs.readFileSync(file)), { file: path.basename(file) });
  useClipStore.setState({ loaded: clipFromDto(clipToDto(clip)) });
  stop = startSelectionResets();
});
afterAll(() => stop());

beforeEach(() => {
  clearRuns();
  useTrialStore.setState({ selectedPairId: 'pair-a', job: null, error: null });
  useCalibrationStore.setState({ result: capture, acceptedId: 'cal-00aa', running: false, stillness: null });
});

describe('renderer: selection resets', () => {
  it('another pair picked: the calibration and the ended job of the previous pair are cleared', () => {
    useTrialStore.setState({ job: job('pair-a', 'stopped'), error: 'refused' });
    trialLiveStore.setState({ runId: 'real-0', samples: 120 });
    // Negative control: the same pair again, and a change of another field, keep everything.
    useTrialStore.setState({ selectedPairId: 'pair-a', starting: false });
    expect(useCalibrationStore.getState()).toMatchObject({ result: capture, acceptedId: 'cal-00aa' });
    expect(useTrialStore.getState().job?.pairId).toBe('pair-a');
    useTrialStore.setState({ selectedPairId: 'pair-b' });
    expect(useCalibrationStore.getState()).toMatchObject({ result: null, acceptedId: null });
    expect(useTrialStore.getState()).toMatchObject({ job: null, error: null });
    expect(trialLiveStore.getState()).toMatchObject({ runId: null, samples: 0 });
  });

  it('a running job stays when another pair is picked: it is what the robot is doing', () => {
    useTrialStore.setState({ job: job('pair-a', 'running') });
    useTrialStore.setState({ selectedPairId: 'pair-b' });
    expect(useTrialStore.getState().job?.state).toBe('running');
  });

  it('a replay whose runs are no longer drawn is cleared; other runs coming and going keep it', () => {
    addRun({ id: 'gap:real-1', live: false });
    addRun({ id: 'qual:sim-7', live: false });
    useGapReviewStore.setState({ replay: gapReplay, selected: 'pt-1', replaying: false });
    useQualificationStore.setState({ replay: qualReplay, selected: { bindingKey: 'b@1', clipId: 'c' } });
    addRun({ id: 'other', live: false }); // negative control
    expect(useGapReviewStore.getState().replay).toBe(gapReplay);
    expect(useQualificationStore.getState().replay).toBe(qualReplay);
    clearRuns(); // another clip loaded, or another replay starting
    expect(useGapReviewStore.getState()).toMatchObject({ replay: null, selected: null });
    expect(useQualificationStore.getState()).toMatchObject({ replay: null, selected: null });
  });

  it('the replay loading now keeps its selection while the runs of the previous one are dropped', () => {
    addRun({ id: 'gap:real-1', live: false });
    useGapReviewStore.setState({ replay: gapReplay, selected: 'pt-2', replaying: true });
    clearRuns();
    expect(useGapReviewStore.getState()).toMatchObject({ replay: null, selected: 'pt-2' });
    useGapReviewStore.setState({ replaying: false });
  });
});
