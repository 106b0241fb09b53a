import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { clipFromDto, clipToDto } from '../../src/api/clipDto';
import type {
  ApiMethod,
  ApiParams,
  SimEndEvent,
  SimEpisodeMetricsDto,
  LiveFramesEvent,
  SimRunResult,
  SimRunStarted,
} from '../../src/api/contract';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { ApiCallError, type ConsoleClient } from '../../renderer/src/api/consoleClient';
import {
  formatReadingValue,
  READING_ROWS,
  showFailure,
  showReading,
  UNAVAILABLE_TEXT,
} from '../../renderer/src/sim/readingsFormat';
import { BUILTIN_NOTE } from '../../renderer/src/ui/format';
import { handleApiEvent } from '../../renderer/src/api/pushRouter';
import { signUpFeaturePushes } from '../../renderer/src/app/featurePushes';
import { simRequestFromForm, startSimRun, stopAllSimRuns } from '../../renderer/src/sim/simActions';
import { useClipStore } from '../../renderer/src/playback/clipStore';
import { useConnectionStore } from '../../renderer/src/api/connectionStore';
import { setRobotProfile } from '../../renderer/src/robot/robotStore';
import { runTrajectory } from '../../renderer/src/overlay/overlayEngine';
import { liveStream } from '../../renderer/src/robot/liveStreams';
import { useRunStore } from '../../renderer/src/overlay/runStore';
import { patchSimForm, simLiveStore, useSimStore } from '../../renderer/src/sim/simStore';
import { sharedData } from '../helpers/sharedData';

// The renderer's side of a simulation run, without a browser: the readings table's formatting
// (unavailable is "—" with the reason, never 0), the form → sim.run params, and the flow of a run
// against a scripted client — accepted, frames into the overlay's live run (acknowledged), the end,
// the full recording fetched when frames were skipped for display, and STOP reaching every run.

const metrics = (over: Partial<SimEpisodeMetricsDto> = {}): SimEpisodeMetricsDto => ({
  contract: 'mb-metrics/1',
  K: 100,
  failure: { available: true, value: null },
  progressSoft: { available: true, value: 1 },
  progressStop: { available: true, value: null },
  mpjpeLMm: { available: true, value: 17.2337 },
  jointPosRmseRad: { available: true, value: 0.04491 },
  jointVelRmseRadS: { available: true, value: 0.2712 },
  jointAccRmsRadS2: { available: true, value: 7.24 },
  jointAccP95RadS2: { available: true, value: 14.6 },
  jointJerkRmsRadS3: { available: false, reason: 'needs at least 4 frames on the common timeline' },
  jointJerkP95RadS3: { available: true, value: 0 },
  ...over,
});

describe('readings format', () => {
  it('shows MPJPE-l in cm, the other readings in their units, and unavailable ones as "—" with the reason', () => {
    const m = metrics();
    const row = (k: string) => READING_ROWS.find((r) => r.key === k)!;
    expect(showReading(m, row('mpjpeLMm'))).toMatchObject({ text: '1.72', value: 17.2337 });
    expect(showReading(m, row('jointPosRmseRad')).text).toBe('0.0449');
    expect(showReading(m, row('jointJerkRmsRadS3'))).toEqual({
      text: UNAVAILABLE_TEXT,
      title: 'unavailable: needs at least 4 frames on the common timeline',
      value: null,
    });
    // A real zero is a zero, not a dash.
    expect(showReading(m, row('jointJerkP95RadS3')).text).toBe('0');
    expect(formatReadingValue(0.12345, row('progressSoft'))).toBe('0.123');
    expect(READING_ROWS.map((r) => r.label)).toEqual([
      'progress-soft',
      'MPJPE-l',
      'joint-pos RMSE',
      'joint-vel RMSE',
      'joint-acc RMS',
      'joint-acc P95',
      'joint-jerk RMS',
      'joint-jerk P95',
    ]);
  });

  it('shows the failure as yes / no / — with condition, body and frame', () => {
    expect(showFailure(metrics()).failed.text).toBe('no');
    const f = showFailure(
      metrics({
        failure: {
          available: true,
          value: { frame: 52, timeS: 1.04, condition: 'root_height', body: 'pelvis', error: 0.254, threshold: 0.25 },
        },
      }),
    );
    expect(f).toMatchObject({
      condition: 'root height',
      body: 'pelvis',
      frameText: '52 (1.04 s)',
      frame: 52,
      failed: { text: 'yes' },
    });
    const u = showFailure(metrics({ failure: { available: false, reason: 'no root position' } }));
    expect(u.failed).toEqual({ text: '—', title: 'unavailable: no root position', value: null });
  });
});

describe('sim run in the renderer', () => {
  const calls: { method: ApiMethod; params: unknown }[] = [];
  let started: SimRunStarted;
  let result: SimRunResult | null = null;
  const NPZ = sharedData('motions/g1_moves/npz/B_HandsUp.npz');

  beforeAll(() => {
    signUpFeaturePushes();
    const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
    setRobotProfile(profile);
    const clip = decodeMotionFile(new Uint8Array(fs.readFileSync(NPZ)), { file: 'B_HandsUp.npz' });
    useClipStore.setState({ loaded: clipFromDto(JSON.parse(JSON.stringify(clipToDto(clip)))) });
    const client: ConsoleClient = {
      transport: null as never,
      async call<M extends ApiMethod>(method: M, params: ApiParams<M>) {
        calls.push({ method, params });
        if (method === 'sim.run') {
          const p = params as ApiParams<'sim.run'>;
          if (p.connectionId === 'remote-1')
            throw new ApiCallError({ code: 'conflict', message: 'remote-1 is in use by run sim-x' });
          started = {
            runId: 'sim-t-1',
            connectionId: p.connectionId,
            clipId: p.clipId,
            binding: {
              spec: p.binding,
              kind: 'builtin',
              id: 'builtin',
              version: 'pd1-x',
              label: 'reference tracker, not a policy (root assist 3000 N/m)',
              assistNPerM: 3000,
            },
            seed: p.seed ?? 0,
            paceRealTime: p.paceRealTime ?? 1,
            durationS: 7.32,
            plannedFrames: 367,
          };
          return started as never;
        }
        if (method === 'sim.result') return result as never;
        return { stopped: [] } as never;
      },
    };
    useConnectionStore.setState({ client, status: 'connected' });
  });

  it('builds sim.run params from the form and names a bad field', () => {
    patchSimForm({ bindingChoice: 'assist', assistText: '3000', seedText: '4', pace: 'max', maxSecondsText: '' });
    expect(simRequestFromForm()).toMatchObject({
      ok: true,
      params: { connectionId: 'embedded-sim', binding: 'builtin:assist=3000', seed: 4, paceRealTime: null },
    });
    patchSimForm({ bindingChoice: 'builtin', pace: '2', maxSecondsText: '4' });
    expect(simRequestFromForm()).toMatchObject({
      ok: true,
      params: { binding: 'builtin', paceRealTime: 2, maxSeconds: 4 },
    });
    patchSimForm({ seedText: '1.5' });
    expect(simRequestFromForm()).toMatchObject({ ok: false, reason: expect.stringContaining('seed') });
    patchSimForm({ seedText: '0', bindingChoice: 'assist', assistText: '0' });
    expect(simRequestFromForm()).toMatchObject({ ok: false, reason: expect.stringContaining('root assist') });
    patchSimForm({ assistText: '3000', maxSecondsText: '', pace: '1' });
  });

  it('shows a refusal', async () => {
    patchSimForm({ connectionId: 'remote-1' });
    await startSimRun();
    expect(useSimStore.getState().error).toBe('remote-1 is in use by run sim-x');
    patchSimForm({ connectionId: 'embedded-sim' });
  });

  it('adds a live run to the overlay, feeds it the pushed frames (acknowledged), ends it, and replays the recording when frames were skipped', async () => {
    calls.length = 0;
    await startSimRun();
    expect(calls[0]).toMatchObject({ method: 'sim.run', params: { binding: 'builtin:assist=3000', paceRealTime: 1 } });
    expect(useSimStore.getState().runs.at(-1)).toMatchObject({ runId: 'sim-t-1', ordinal: 1, state: 'starting' });
    expect(useRunStore.getState().runs).toEqual([
      expect.objectContaining({
        id: 'sim-t-1',
        label: '#1 builtin + assist 3000 N/m · seed 0',
        live: true,
        note: BUILTIN_NOTE,
        source: 'embedded-sim',
      }),
    ]);
    const frame = (k: number) => ({
      t: k / 50,
      root: [0.01 * k, 0, 0.79],
      quat: [1, 0, 0, 0],
      q: new Array(29).fill(k / 100),
    });
    const batch = (seq: number, k0: number, n: number, dropped = 0): LiveFramesEvent => {
      const fs = Array.from({ length: n }, (_, i) => frame(k0 + i));
      return {
        type: 'live.frames',
        seq,
        source: 'sim_run',
        connectionId: 'embedded-sim',
        runId: 'sim-t-1',
        jobId: null,
        firstFrame: k0,
        frame: null,
        count: n,
        timeS: fs.map((f) => f.t),
        rootPosM: fs.flatMap((f) => f.root),
        rootQuatWxyz: fs.flatMap((f) => f.quat),
        jointPosRad: fs.flatMap((f) => f.q),
        readings: {
          mpjpeLMm: new Array(n).fill(12),
          jointRmseRad: new Array(n).fill(0.03),
          firstFailureFrame: new Array(n).fill(-1),
          failed: null,
          failure: null,
        },
        droppedFrames: dropped,
        ended: false,
      };
    };
    calls.length = 0;
    handleApiEvent(batch(0, 0, 4));
    handleApiEvent(batch(1, 10, 3, 6)); // frames 4..9 skipped for display
    expect(calls.map((c) => [c.method, (c.params as { seq: number }).seq])).toEqual([
      ['events.ack', 0],
      ['events.ack', 1],
    ]);
    expect(runTrajectory('sim-t-1')!.count).toBe(7);
    // the overlay read them from the connection's live store
    expect(liveStream('embedded-sim')).toMatchObject({ source: 'sim_run', runId: 'sim-t-1', written: 7 });
    expect(liveStream('embedded-sim')!.newest()!.frame).toBe(12);
    expect(simLiveStore.getState().runs.get('sim-t-1')).toMatchObject({
      framesReceived: 7,
      droppedFrames: 6,
      mpjpeLMm: 12,
      firstFailureFrame: -1,
    });
    expect(useSimStore.getState().runs.at(-1)!.state).toBe('running');

    // The end: the recording (13 frames) replaces the 7 shown.
    const all = Array.from({ length: 13 }, (_, k) => frame(k));
    result = {
      runId: 'sim-t-1',
      state: 'ended',
      started,
      end: null,
      trajectory: {
        frames: 13,
        timeS: all.map((f) => f.t),
        rootPosM: all.flatMap((f) => f.root),
        rootQuatWxyz: all.flatMap((f) => f.quat),
        jointPosRad: all.flatMap((f) => f.q),
      },
    };
    const end: SimEndEvent = {
      type: 'sim.end',
      seq: 2,
      runId: 'sim-t-1',
      outcome: 'completed',
      reason: 'reached the end of the clip',
      frames: 13,
      plannedFrames: 13,
      simSeconds: 0.24,
      wallSeconds: 0.3,
      trajectorySha256: 'a'.repeat(64),
      failure: null,
      referenceLiftM: 0,
      metrics: metrics(),
      droppedFrames: 6,
      stopRequestedAtMs: null,
    };
    handleApiEvent(end);
    expect(useRunStore.getState().runs[0]).toMatchObject({ live: false, outcome: 'completed' });
    await expect.poll(() => runTrajectory('sim-t-1')!.count).toBe(13);
    expect(useSimStore.getState().runs.at(-1)).toMatchObject({
      state: 'ended',
      replayFromRecording: true,
      end: { outcome: 'completed' },
    });
    expect(calls.some((c) => c.method === 'sim.result')).toBe(true);
  });

  it('STOP asks the services to stop every run, whatever the console knows of', () => {
    calls.length = 0;
    stopAllSimRuns('key:Space');
    expect(calls).toEqual([{ method: 'sim.stop', params: { all: true, reason: 'operator stop (key:Space)' } }]);
  });
});

describe('sim.run refusal beside a real trial', () => {
  it('names the panel’s "run anyway" checkbox, not the API field; other errors verbatim', async () => {
    const { simRunErrorText } = await import('../../renderer/src/sim/simActions');
    const refusal = new ApiCallError({
      code: 'conflict',
      message:
        "trial trial-1 is running (pair pt-1) on this machine: a simulation here would take the cores its robot's timing needs; wait for its end, or set allowDuringRealTrial to run anyway",
      field: 'params.allowDuringRealTrial',
    });
    expect(simRunErrorText(refusal)).toBe(
      'trial trial-1 is running (pair pt-1) on this machine: a simulation here would take the cores its robot\'s timing needs; wait for its end, or tick "run anyway" above',
    );
    // Negative control: a conflict on another field (the connection in use) is shown as the services said it.
    const busy = new ApiCallError({
      code: 'conflict',
      message: 'Embedded simulator is in use by run sim-1: stop it or wait for its end',
      field: 'params.connectionId',
    });
    expect(simRunErrorText(busy)).toBe('Embedded simulator is in use by run sim-1: stop it or wait for its end');
  });
});
