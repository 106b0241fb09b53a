import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiMethod, ApiParams, SimRunStarted } from '../../src/api/contract';
import { createConsoleApi, type ConsoleApi } from '../../src/services/console/consoleApiHandlers';
import { ApiCallError } from '../../renderer/src/api/consoleClient';
import { needText, policyNote } from '../../renderer/src/policies/policyFormat';
import { openPolicy, patchPolicyPath, showPolicyMotion } from '../../renderer/src/policies/policyActions';
import { policyStartRequestFromForm } from '../../renderer/src/qualification/qualificationActions';
import { useQualificationStore } from '../../renderer/src/qualification/qualificationStore';
import { simRequestFromForm, startSimRun } from '../../renderer/src/sim/simActions';
import { useClipStore } from '../../renderer/src/playback/clipStore';
import { useConnectionStore } from '../../renderer/src/api/connectionStore';
import { setRobotProfile } from '../../renderer/src/robot/robotStore';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { usePolicyStore } from '../../renderer/src/policies/policyStore';
import { patchSimForm, useSimStore } from '../../renderer/src/sim/simStore';
import { sharedData } from '../helpers/sharedData';
import { inProcessConsoleClient } from '../helpers/inProcessConsoleClient';

// The renderer's side of a released policy, without a browser, against the real policies.open
// of the console services (sim.run scripted): opening by path puts the baked motion on display;
// a failure names the file and keeps the previous policy; the Sim form names the policy by its
// id and refuses it on another clip; a services restart (policy forgotten) re-opens it and
// retries; the board's policy start takes the rollouts and limit fields.

const JUMP = sharedData('policies/beyondmimic/Jump_wose.onnx');
const WBC = sharedData('policies/wbc_mjlab');

let api: ConsoleApi;
const calls: { method: ApiMethod; params: unknown }[] = [];
/** sim.run answers not_found for the policy until policies.open was called again (a restarted services process). */
let forgotten = false;

beforeAll(() => {
  setRobotProfile(loadRobotProfile(DEFAULT_MODEL_FILE)); // the overlay draws runs on the robot model
  api = createConsoleApi({ transport: 'host' });
  const client = inProcessConsoleClient(api, (method, params) => {
    calls.push({ method, params });
    if (method === 'policies.open') forgotten = false;
    if (method === 'sim.run') {
      const p = params as ApiParams<'sim.run'>;
      if (forgotten)
        throw new ApiCallError({
          code: 'not_found',
          message: `policy ${p.binding} is not open in the console services`,
          field: 'params.binding',
        });
      const started: SimRunStarted = {
        runId: `sim-p-${calls.length}`,
        connectionId: p.connectionId,
        clipId: p.clipId,
        binding: {
          spec: p.binding,
          kind: 'onnx',
          id: 'beyondmimic/Jump_wose',
          version: 'v',
          label: 'beyondmimic policy Jump_wose',
          assistNPerM: null,
        },
        seed: 0,
        paceRealTime: null,
        durationS: 3.28,
        plannedFrames: 165,
      };
      return started;
    }
    return undefined;
  });
  useConnectionStore.setState({ client, status: 'connected' });
});

afterAll(async () => {
  await api?.close();
});

describe('a released policy in the renderer', () => {
  it('names a missing file and opens nothing', async () => {
    patchPolicyPath(`${JUMP}.missing`);
    await openPolicy();
    const s = usePolicyStore.getState();
    expect(s.info).toBeNull();
    expect(s.error).toMatchObject({ code: 'input_error', location: { file: `${JUMP}.missing` } });
    patchPolicyPath('  ');
    await openPolicy();
    expect(usePolicyStore.getState().error).toMatchObject({ code: 'bad_params', field: 'params.path' });
  });

  it('opens Jump_wose: its baked motion becomes the clip on display', async () => {
    patchPolicyPath(JUMP);
    await openPolicy();
    const { info, bakedClip, error } = usePolicyStore.getState();
    expect(error).toBeNull();
    expect(info).toMatchObject({
      family: 'beyondmimic',
      observationSize: 154,
      needs: [],
      motion: { frames: 165, fps: 50 },
    });
    expect('bakedClip' in info!).toBe(false); // the arrays live in the clip store only
    expect(bakedClip!.clip.id).toBe(info!.motion!.clipId);
    expect(useClipStore.getState()).toMatchObject({
      loaded: { clip: { id: info!.motion!.clipId, frameCount: 165, name: 'Jump_wose' } },
      lastSource: null,
      error: null,
    });
    expect(policyNote(info!)).toBe('released policy beyondmimic, physics mjlab-g1/1@5ms×4, no root assist');
  });

  it('keeps the open policy when another open fails', async () => {
    const before = usePolicyStore.getState().info!.policyId;
    patchPolicyPath(sharedData('policies/beyondmimic'));
    await openPolicy();
    expect(usePolicyStore.getState().error?.reason).toMatch(/4 \.onnx files .*; name one/);
    expect(usePolicyStore.getState().info!.policyId).toBe(before);
  });

  it('names the policy by its id in sim.run, and refuses it on another clip', () => {
    const { info } = usePolicyStore.getState();
    patchSimForm({ bindingChoice: 'policy', pace: 'max', seedText: '0', maxSecondsText: '' });
    expect(simRequestFromForm()).toMatchObject({
      ok: true,
      params: { binding: info!.policyId, clipId: info!.motion!.clipId, paceRealTime: null },
    });
    const shown = useClipStore.getState().loaded!;
    useClipStore.setState({ loaded: { ...shown, clip: { ...shown.clip, id: 'clip-0123', name: 'other' } } });
    expect(simRequestFromForm()).toEqual({
      ok: false,
      reason:
        'policy beyondmimic/Jump_wose tracks only the motion baked into it (Jump_wose): show its motion (Policy panel) to run it',
    });
    showPolicyMotion();
    expect(useClipStore.getState().loaded!.clip.id).toBe(info!.motion!.clipId);
    expect(simRequestFromForm().ok).toBe(true);
  });

  it('re-opens a policy the services forgot and retries the run once', async () => {
    calls.length = 0;
    forgotten = true;
    await startSimRun();
    expect(calls.map((c) => c.method)).toEqual(['sim.run', 'policies.open', 'sim.run']);
    expect(calls[1].params).toEqual({ path: JUMP });
    expect(useSimStore.getState().error).toBeNull();
    expect(useSimStore.getState().runs.at(-1)).toMatchObject({
      binding: { spec: usePolicyStore.getState().info!.policyId },
      state: 'starting',
    });
  });

  it('qualifies the open policy with the board’s rollouts and limit, not its core-v1 fields', () => {
    const form = {
      ...useQualificationStore.getState().form,
      bindingsText: 'builtin',
      clipsText: 'ub_wave_right',
      rolloutsText: '1',
      limitText: '',
    };
    expect(policyStartRequestFromForm(form)).toEqual({
      ok: true,
      policyId: usePolicyStore.getState().info!.policyId,
      rollouts: 1,
    });
    expect(policyStartRequestFromForm({ ...form, rolloutsText: '0' })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('rollouts'),
    });
  });

  it('a policy without a baked motion runs the clip on display', async () => {
    patchPolicyPath(WBC);
    await openPolicy();
    const { info, bakedClip } = usePolicyStore.getState();
    expect(info).toMatchObject({ family: 'wbc-mjlab', motion: null });
    expect(bakedClip).toBeNull();
    expect(simRequestFromForm()).toMatchObject({ ok: true, params: { binding: info!.policyId } });
  });

  it('says what a need asks of the backend', () => {
    expect(needText('base_lin_vel')).toBe(
      'base_lin_vel (a root-velocity estimate): simulation only; the G1 does not stream it',
    );
    expect(needText('root_pose')).toBe('root_pose (a root-position estimate)');
    expect(needText('something_new')).toBe('something_new');
  });
});
