import { describe, expect, it } from 'vitest';
import { apiEventSchema, LIVE_JOINTS, LIVE_SOURCES, parseApiEvent } from '../../src/api/contract';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';

// The live pose stream's one push (live.frames): a batch per connection and run, columns
// frame-major and checked against `count`, the source's identity fields consistent with it.

const sim = (count = 2) => ({
  type: 'live.frames',
  seq: 4,
  source: 'sim_run',
  connectionId: 'embedded-sim',
  runId: 'sim-abc-1',
  jobId: null,
  count,
  firstFrame: 10,
  frame: null,
  timeS: Array.from({ length: count }, (_, i) => (10 + i) / 50),
  jointPosRad: new Array(29 * count).fill(0.1),
  rootPosM: new Array(3 * count).fill(0.5),
  rootQuatWxyz: Array.from({ length: count }, () => [1, 0, 0, 0]).flat(),
  readings: {
    mpjpeLMm: new Array(count).fill(12),
    jointRmseRad: new Array(count).fill(null),
    firstFailureFrame: new Array(count).fill(-1),
    failed: null,
    failure: null,
  },
  droppedFrames: 0,
  ended: false,
});

const idle = {
  type: 'live.frames',
  seq: 5,
  source: 'robot_idle',
  connectionId: 'robot-1',
  runId: null,
  jobId: null,
  count: 1,
  firstFrame: null,
  frame: [123456],
  timeS: [17.5],
  jointPosRad: new Array(29).fill(0),
  rootPosM: null,
  rootQuatWxyz: [1, 0, 0, 0],
  readings: null,
  droppedFrames: 3,
  ended: false,
};

const reason = (value: unknown): string => {
  const r = parseApiEvent(value);
  if (r.ok) throw new Error('expected a refusal');
  return r.reason;
};

describe('live.frames', () => {
  it('is the one live pose push of the contract, its rows in the canonical 29-joint order', () => {
    const types = apiEventSchema.options.map((o) => o.shape.type.value as string);
    expect(types.filter((t) => t === 'live.frames')).toHaveLength(1);
    for (const old of ['sim.frames', 'trial.live', 'robot.live']) expect(types).not.toContain(old);
    expect(LIVE_SOURCES).toEqual(['sim_run', 'trial_job', 'robot_idle']);
    expect(LIVE_JOINTS).toBe(G1_JOINT_NAMES.length);
  });

  it('validates a simulation run’s batch and a robot’s idle pose', () => {
    expect(parseApiEvent(sim())).toMatchObject({ ok: true, event: { source: 'sim_run', count: 2 } });
    expect(parseApiEvent(idle)).toMatchObject({ ok: true, event: { runId: null, readings: null } });
    // the last batch of an idle stream may have no rows
    const end = { ...idle, count: 0, frame: [], timeS: [], jointPosRad: [], rootQuatWxyz: null, ended: true };
    expect(parseApiEvent(end)).toMatchObject({ ok: true });
  });

  it('refuses a column whose length does not follow count', () => {
    expect(reason({ ...sim(), jointPosRad: new Array(57).fill(0) })).toMatch(
      /^jointPosRad: has 57 values, expected 2×29/,
    );
    expect(reason({ ...sim(), rootPosM: [0, 0, 0.8] })).toMatch(/^rootPosM: has 3 values, expected 2×3/);
    expect(reason({ ...sim(), rootQuatWxyz: [1, 0, 0, 0] })).toMatch(/^rootQuatWxyz: has 4 values, expected 2×4/);
    expect(reason({ ...sim(), timeS: [0.2] })).toMatch(/^timeS:/);
    const s = sim();
    expect(reason({ ...s, readings: { ...s.readings, mpjpeLMm: [1] } })).toMatch(/^readings\.mpjpeLMm: has 1 values/);
    expect(reason({ ...idle, frame: [1, 2] })).toMatch(/^frame:/);
  });

  it('refuses a quaternion under a name without its component order, and unknown fields', () => {
    const { rootQuatWxyz, ...rest } = sim();
    expect(reason({ ...rest, rootQuat: rootQuatWxyz })).toMatch(/rootQuat/);
    expect(reason(rest)).toMatch(/^rootQuatWxyz:/);
    expect(reason({ ...sim(), live: {} })).toMatch(/live/);
  });

  it('refuses identity fields that contradict the source', () => {
    expect(reason({ ...idle, runId: 'sim-abc-1' })).toMatch(/^runId: the idle live pose has no run/);
    expect(reason({ ...sim(), runId: null })).toMatch(/^runId: a sim_run names its run/);
    expect(reason({ ...sim(), source: 'trial_job' })).toMatch(/^jobId: a trial_job names its job/);
    expect(reason({ ...sim(), jobId: 'trial-x-1' })).toMatch(/^jobId: a sim_run has no job/);
    expect(reason({ ...sim(), frame: [10, 11] })).toMatch(/^firstFrame: give either firstFrame or a frame column/);
    expect(reason({ ...idle, readings: sim(1).readings })).toMatch(/^readings: the idle live pose has no readings/);
    expect(reason({ ...idle, count: 0, frame: [], timeS: [], jointPosRad: [], rootQuatWxyz: null })).toMatch(
      /^count: a batch without rows must end the stream/,
    );
    expect(reason({ ...idle, source: 'robot' })).toMatch(/^source:/);
    expect(reason({ ...idle, connectionId: 'Robot 1' })).toMatch(/^connectionId:/);
  });
});
