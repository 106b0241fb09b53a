import { beforeEach, describe, expect, it } from 'vitest';
import type { ApiMethod, ApiParams } from '../../src/api/contract';
import type { PolicyCheckDto } from '../../src/api/policyContract';
import { ApiCallError, type ConsoleClient } from '../../renderer/src/api/consoleClient';
import { useConnectionStore } from '../../renderer/src/api/connectionStore';
import { useClipStore } from '../../renderer/src/playback/clipStore';
import { checkPolicy, usePolicyCheckStore } from '../../renderer/src/policies/policyCheckActions';
import { usePolicyStore, type PolicyInfo } from '../../renderer/src/policies/policyStore';

// The Policy panel's Check, without a browser and with a scripted client: a policy that carries
// its motion is checked on it (no clip sent); one that does not is checked on the clip on display;
// a refusal is kept as the check's error, for the policy it was made for.

const calls: { method: ApiMethod; params: unknown }[] = [];
let answer: PolicyCheckDto | ApiCallError;

const client = {
  transport: null as never,
  async call<M extends ApiMethod>(method: M, params: ApiParams<M>) {
    calls.push({ method, params });
    if (answer instanceof ApiCallError) throw answer;
    return answer as never;
  },
} as unknown as ConsoleClient;

const info = (motion: PolicyInfo['motion'], configuredMotion: PolicyInfo['configuredMotion'] = null): PolicyInfo =>
  ({ policyId: 'policy-0123456789abcdef', motion, configuredMotion }) as PolicyInfo;
const report = { verdict: { kind: 'normal_reading_tracks', line: 'ok', better: [] } } as unknown as PolicyCheckDto;

beforeEach(() => {
  calls.length = 0;
  useConnectionStore.setState({ client, status: 'connected' } as never);
  useClipStore.setState({ loaded: { clip: { id: 'clip-on-display' } } } as never);
  usePolicyCheckStore.setState({ checking: false, policyId: null, report: null, error: null });
});

describe('Policy panel: Check', () => {
  it('checks a policy with its own motion on that motion (no clip sent)', async () => {
    usePolicyStore.setState({ info: info({ frames: 165, fps: 50, clipId: 'clip-baked', fkResidualMaxM: null }) });
    answer = report;
    await checkPolicy();
    expect(calls).toEqual([{ method: 'policies.check', params: { policyId: 'policy-0123456789abcdef' } }]);
    expect(usePolicyCheckStore.getState()).toMatchObject({ checking: false, report, error: null });
  });

  it('checks a policy whose motion a configuration beside it names (HumanoidVerse, unitree_rl_lab) on that motion, not on the clip on display', async () => {
    usePolicyStore.setState({
      info: info(null, {
        file: '/p/Horse-stance_pose.pkl',
        fps: 30,
        source: '/p/config.yaml robot.motion.motion_file',
      }),
    });
    answer = report;
    await checkPolicy();
    expect(calls).toEqual([{ method: 'policies.check', params: { policyId: 'policy-0123456789abcdef' } }]);
  });

  it('checks a policy without one on the clip on display; a refusal becomes the check error', async () => {
    usePolicyStore.setState({ info: info(null) });
    answer = new ApiCallError({ code: 'input_error', message: 'x.onnx: no motion' });
    await checkPolicy(2);
    expect(calls[0].params).toEqual({ policyId: 'policy-0123456789abcdef', clipId: 'clip-on-display', seconds: 2 });
    const s = usePolicyCheckStore.getState();
    expect(s.report).toBeNull();
    expect(s.error?.code).toBe('input_error');
    expect(s.policyId).toBe('policy-0123456789abcdef');
  });
});
