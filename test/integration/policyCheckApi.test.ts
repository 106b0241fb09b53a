import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/api/contract';
import type { PolicyCheckDto } from '../../src/api/policyContract';
import { createConsoleApi, type ConsoleApi } from '../../src/services/console/consoleApiHandlers';
import { plainResult } from '../../src/services/console/serializedResult';
import { sharedData } from '../helpers/sharedData';

// policies.check through the console API (the Policy panel's Check): the opened policy is checked
// in the services' file worker, so the loop that carries STOP stays responsive while MuJoCo runs
// the five readings; the request is validated (an unknown policy id, a window beyond the bound)
// before anything runs. A wall-clock test: `realtime` project.

const LOOP_BOUND_MS = 100;
const JUMP = sharedData('policies/beyondmimic/Jump_wose.onnx');

let api: ConsoleApi;
let loop: IntervalHistogram;
beforeAll(() => {
  api = createConsoleApi({ transport: 'host' });
  loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
});
afterAll(async () => {
  loop?.disable();
  await api?.close();
});

describe('policies.check', () => {
  it('checks an opened policy off the services loop: the normal reading tracks, every control falls', async () => {
    const opened = await api.invoke('policies.open', { path: JUMP });
    expect(opened.ok).toBe(true);
    const { policyId } = plainResult((opened as { ok: true; result: unknown }).result) as { policyId: string };
    loop.reset();
    const t0 = performance.now();
    const out = await api.invoke('policies.check', { policyId, seconds: 2 });
    const ms = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 30));
    const loopMaxMs = loop.max / 1e6;
    expect(out.ok, JSON.stringify(out)).toBe(true);
    const r = plainResult((out as { ok: true; result: unknown }).result) as PolicyCheckDto;
    console.log(
      `policies.check Jump_wose (2 s): ${ms.toFixed(0)} ms, services loop max delay ${loopMaxMs.toFixed(1)} ms; ${r.verdict.line}`,
    );
    expect(r.runs.map((x) => x.reading)).toEqual([
      'normal',
      'joint_order_other',
      'joint_order_mirrored',
      'quaternion_xyzw',
    ]);
    expect(r.runs[0].failure).toBeNull();
    expect(r.runs.slice(1).every((x) => x.failure !== null)).toBe(true);
    expect(r.verdict.kind).toBe('normal_reading_tracks');
    expect(r.seconds).toBeCloseTo(2);
    expect(loopMaxMs).toBeLessThan(LOOP_BOUND_MS);
  }, 120_000);

  it('refuses an unknown policy and a window beyond the bound, before running anything', async () => {
    const unknown = await api.invoke('policies.check', { policyId: 'policy-0123456789abcdef' });
    expect(unknown.ok).toBe(false);
    expect((unknown as { error: ApiError }).error.code).toBe('not_found');
    const long = await api.invoke('policies.check', { policyId: 'policy-0123456789abcdef', seconds: 600 });
    expect(long.ok).toBe(false);
    expect((long as { error: ApiError }).error.code).toBe('too_large');
    const path = await api.invoke('policies.check', { policyId: JUMP });
    expect((path as { error: ApiError }).error.code).toBe('bad_params');
  }, 30_000);
});
