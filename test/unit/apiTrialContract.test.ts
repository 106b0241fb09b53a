import { describe, expect, it } from 'vitest';
import { parseApiEvent, parseRequest } from '../../src/api/contract';

// The interlock.*, calibration.* and trial.* requests and pushes of the console API
// (src/api/trialContract.ts): what is accepted, and that a bad request names its field.

const bad = (method: string, params: unknown) => {
  const r = parseRequest(method, params);
  if (r.ok) throw new Error(`${method} accepted ${JSON.stringify(params)}`);
  return r.error;
};

describe('trial contract: requests', () => {
  it('accepts well-formed requests', () => {
    const good: [string, unknown][] = [
      ['interlock.list', {}],
      ['interlock.open', { path: '/dev/ttyUSB0' }],
      ['interlock.open', { path: 'COM3' }],
      ['interlock.arm', {}],
      ['interlock.status', {}],
      ['calibration.capture', { connectionId: 'robot-1', campaignDir: '/tmp/c', clipId: 'ub_wave_right', timeoutS: 5 }],
      ['calibration.accept', { captureId: 'capture-abc-1' }],
      ['trial.queue', { campaignDir: '/tmp/c', trials: 3 }],
      [
        'trial.start',
        {
          campaignDir: '/tmp/c',
          pairId: 'pt-1234abcd',
          connectionId: 'robot-1',
          calibrationId: 'cal-0123456789abcdef01234567',
          trials: 1,
        },
      ],
      ['trial.confirm', { jobId: 'trial-x-1', promptId: 'prompt-y-2', ok: true, note: 'put back by A. Operator' }],
      ['trial.stop', { all: true, reason: 'operator stop (key:Space)' }],
      ['trial.stop', { jobId: 'trial-x-1', intervention: true }],
      ['trial.status', {}],
      ['trial.episode', { campaignDir: '/tmp/c', runId: 'real_robot-1-ab' }],
      ['connections.add', { url: 'ws://127.0.0.1:9000', kind: 'robot' }],
    ];
    for (const [m, p] of good) expect(parseRequest(m, p), `${m} ${JSON.stringify(p)}`).toMatchObject({ ok: true });
  });

  it('names the offending field of a bad request', () => {
    expect(bad('interlock.open', { path: 'ttyUSB0' })).toMatchObject({ code: 'bad_params', field: 'params.path' });
    expect(bad('interlock.open', { path: '/dev/tty\0x' }).message).toMatch(/params\.path: contains a NUL/);
    expect(bad('interlock.open', {})).toMatchObject({ field: 'params.path' });
    expect(bad('interlock.arm', { force: true })).toMatchObject({ field: 'params.force' });
    expect(bad('calibration.capture', { connectionId: 'Robot 1', campaignDir: '/tmp/c' })).toMatchObject({
      field: 'params.connectionId',
    });
    expect(bad('calibration.capture', { connectionId: 'robot-1', campaignDir: 'relative/c' }).message).toMatch(
      /params\.campaignDir: must be an absolute path/,
    );
    expect(bad('calibration.capture', { connectionId: 'robot-1', campaignDir: '/tmp/c', timeoutS: 0 })).toMatchObject({
      field: 'params.timeoutS',
    });
    expect(
      bad('calibration.capture', { connectionId: 'robot-1', campaignDir: '/tmp/c', clipId: '../etc/passwd' }),
    ).toMatchObject({ field: 'params.clipId' });
    expect(bad('calibration.accept', { captureId: 'cal-1' })).toMatchObject({ field: 'params.captureId' });
    expect(
      bad('trial.start', { campaignDir: '/tmp/c', pairId: 'pt-1234', connectionId: 'robot-1', trials: 0 }),
    ).toMatchObject({ field: 'params.trials' });
    expect(
      bad('trial.start', { campaignDir: '/tmp/c', pairId: 'pt-1234', connectionId: 'robot-1', trials: 11 }),
    ).toMatchObject({ field: 'params.trials' });
    expect(
      bad('trial.start', { campaignDir: '/tmp/c', pairId: 'pt-1234', connectionId: 'robot-1', calibrationId: 'nope' }),
    ).toMatchObject({ field: 'params.calibrationId' });
    expect(bad('trial.start', { campaignDir: '/tmp/c', connectionId: 'robot-1' })).toMatchObject({
      field: 'params.pairId',
    });
    expect(bad('trial.confirm', { jobId: 'trial-x-1', promptId: 'prompt-y-2' })).toMatchObject({ field: 'params.ok' });
    expect(bad('trial.confirm', { jobId: 'qual-x-1', promptId: 'prompt-y-2', ok: true })).toMatchObject({
      field: 'params.jobId',
    });
    expect(
      bad('trial.confirm', { jobId: 'trial-x-1', promptId: 'prompt-y-2', ok: true, note: 'x'.repeat(501) }),
    ).toMatchObject({ code: 'too_large', field: 'params.note' });
    expect(bad('trial.stop', {}).message).toMatch(/params\.jobId: give either jobId or all: true/);
    expect(bad('trial.stop', { all: true, jobId: 'trial-x-1' })).toMatchObject({ field: 'params.jobId' });
    expect(bad('connections.add', { url: 'ws://127.0.0.1:9000', kind: 'toaster' })).toMatchObject({
      field: 'params.kind',
    });
  });
});

describe('trial contract: pushes', () => {
  const live = {
    type: 'live.frames',
    seq: 3,
    source: 'trial_job',
    connectionId: 'robot-1',
    runId: 'real_robot-1-ab',
    jobId: 'trial-x-1',
    count: 2,
    firstFrame: null,
    frame: [10, 11],
    timeS: [0.2, 0.22],
    jointPosRad: new Array(58).fill(0.1),
    rootPosM: null,
    rootQuatWxyz: null,
    readings: {
      mpjpeLMm: [12.5, null],
      jointRmseRad: [0.01, 0.02],
      firstFailureFrame: null,
      failed: [false, true],
      failure: 'root_height of pelvis at frame 11',
    },
    droppedFrames: 0,
    ended: false,
  };

  it("validates a trial's live.frames, safety.status and trial.progress", () => {
    expect(parseApiEvent(live)).toMatchObject({ ok: true });
    const status = { type: 'safety.status', seq: 0, atMs: 1, interlock: null, robots: [] };
    expect(parseApiEvent({ ...status, host: { kernelAutogroups: false } })).toMatchObject({ ok: true });
    // the host's scheduler facts are part of the push: a status without them is refused
    expect(parseApiEvent(status)).toMatchObject({ ok: false });
    const r = parseApiEvent({ ...live, readings: { ...live.readings, failed: [false, 'yes'] } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/^readings\.failed\.1:/);
    const r2 = parseApiEvent({ type: 'trial.progress', seq: 1, jobId: 'trial-x-1', status: {}, detail: null });
    expect(r2.ok).toBe(false);
    if (!r2.ok) expect(r2.reason).toMatch(/^status\./);
  });
});
