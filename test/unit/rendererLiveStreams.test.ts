import { describe, expect, it } from 'vitest';
import type { LiveFramesEvent } from '../../src/api/contract';
import {
  LIVE_RING_ROWS,
  LiveStream,
  liveStream,
  liveStreamsStore,
  retainLiveRobots,
  useIdleRobotIds,
  writeLiveFrames,
} from '../../renderer/src/robot/liveStreams';

// The renderer's per-connection live store: each connection's live.frames rows in a ring of typed
// arrays, read back by the overlay (rows of a batch) and by the live robot model (the newest row).

const J = 29;

function batch(
  connectionId: string,
  over: Partial<LiveFramesEvent> & { count: number; q0?: number; withRoot?: boolean },
): LiveFramesEvent {
  const { count: n, q0 = 0, withRoot = true, ...rest } = over;
  const source = rest.source ?? 'robot_idle';
  return {
    type: 'live.frames',
    seq: 0,
    source,
    connectionId,
    runId: source === 'robot_idle' ? null : 'run-1',
    jobId: source === 'trial_job' ? 'trial-x-1' : null,
    count: n,
    firstFrame: source === 'sim_run' ? 0 : null,
    frame: source === 'sim_run' ? null : Array.from({ length: n }, (_, i) => 100 + i),
    timeS: Array.from({ length: n }, (_, i) => i / 50),
    jointPosRad: Array.from({ length: n * J }, (_, k) => q0 + k / 100),
    rootPosM: withRoot ? Array.from({ length: 3 * n }, (_, k) => k) : null,
    rootQuatWxyz: withRoot ? Array.from({ length: n }, (_, i) => [1, i, 0, 0]).flat() : null,
    readings: null,
    droppedFrames: 0,
    ended: false,
    ...rest,
  };
}

describe('per-connection live store', () => {
  it('splits a batch into rows by the 29-joint row width, with or without a root', () => {
    const { rows } = writeLiveFrames(batch('robot-11', { count: 2, source: 'trial_job' }));
    expect(rows).toHaveLength(2);
    expect(rows[1].timeS).toBe(0.02);
    expect(rows[1].frame).toBe(101);
    expect(Array.from(rows[1].rootPosM!)).toEqual([3, 4, 5]);
    expect(Array.from(rows[1].rootQuatWxyz!)).toEqual([1, 1, 0, 0]);
    expect(Array.from(rows[1].jointPosRad)).toEqual(Array.from({ length: J }, (_, k) => (J + k) / 100));
    const noRoot = writeLiveFrames(batch('robot-11', { count: 2, source: 'trial_job', withRoot: false })).rows;
    expect(noRoot[0]).toMatchObject({ timeS: 0, rootPosM: null, rootQuatWxyz: null });
    expect(Array.from(noRoot[0].jointPosRad)).toEqual(Array.from({ length: J }, (_, k) => k / 100));
    // a sim run's rows are numbered from firstFrame
    const sim = writeLiveFrames(batch('embedded-sim-x', { count: 3, source: 'sim_run', firstFrame: 40 })).rows;
    expect(sim.map((r) => r.frame)).toEqual([40, 41, 42]);
  });

  it('never shows a frame of one connection on another', () => {
    writeLiveFrames(batch('robot-1', { count: 1, q0: 0.5 }));
    writeLiveFrames(batch('robot-2', { count: 1, q0: -0.5 }));
    writeLiveFrames(batch('robot-1', { count: 1, q0: 0.7 }));
    expect(liveStream('robot-1')!.newest()!.jointPosRad[0]).toBeCloseTo(0.7, 12);
    expect(liveStream('robot-2')!.newest()!.jointPosRad[0]).toBeCloseTo(-0.5, 12);
    expect(liveStream('robot-2')!.written).toBe(1);
    // a trial on robot-1 replaces robot-1's idle stream only
    writeLiveFrames(batch('robot-1', { count: 2, source: 'trial_job', q0: 0.9 }));
    expect(liveStream('robot-1')).toMatchObject({ source: 'trial_job', runId: 'run-1', written: 2 });
    expect(liveStream('robot-2')).toMatchObject({ source: 'robot_idle', written: 1 });
    expect(liveStream('robot-2')!.newest()!.jointPosRad[0]).toBeCloseTo(-0.5, 12);
    // the live robot models: only the idle ones
    expect(useIdleRobotIds.getState().ids).toContain('robot-2');
    expect(useIdleRobotIds.getState().ids).not.toContain('robot-1');
    // negative control: a connection nothing streamed on has no stream
    expect(liveStream('robot-3')).toBeUndefined();
  });

  it('ends an idle stream on its last batch, and keeps only connected idle robots', () => {
    writeLiveFrames(batch('robot-21', { count: 1 }));
    writeLiveFrames(batch('robot-22', { count: 1 }));
    expect(useIdleRobotIds.getState().ids).toEqual(expect.arrayContaining(['robot-21', 'robot-22']));
    const before = liveStreamsStore.getState().revision;
    writeLiveFrames(
      batch('robot-21', { count: 0, frame: [], timeS: [], jointPosRad: [], withRoot: false, ended: true }),
    );
    expect(liveStream('robot-21')).toBeUndefined();
    expect(useIdleRobotIds.getState().ids).not.toContain('robot-21');
    expect(liveStreamsStore.getState().revision).toBeGreaterThan(before);
    // an idle robot's end arriving after its trial's first rows leaves the trial's stream alone
    writeLiveFrames(batch('robot-23', { count: 1 }));
    writeLiveFrames(batch('robot-23', { count: 2, source: 'trial_job' }));
    writeLiveFrames(
      batch('robot-23', { count: 0, frame: [], timeS: [], jointPosRad: [], withRoot: false, ended: true }),
    );
    expect(liveStream('robot-23')).toMatchObject({ source: 'trial_job', written: 2 });
    retainLiveRobots(['robot-2']);
    expect(liveStream('robot-22')).toBeUndefined();
    expect(liveStream('robot-2')).toBeDefined();
    expect(liveStream('robot-11')).toBeDefined(); // not an idle robot: safety.status does not list it
  });

  it('asks for a redraw only when an idle robot moved visibly', () => {
    writeLiveFrames(batch('robot-31', { count: 1, q0: 0.1 }));
    const r0 = liveStreamsStore.getState().revision;
    writeLiveFrames(batch('robot-31', { count: 1, q0: 0.1 + 1e-4 })); // encoder noise
    expect(liveStreamsStore.getState().revision).toBe(r0);
    writeLiveFrames(batch('robot-31', { count: 1, q0: 0.2 }));
    expect(liveStreamsStore.getState().revision).toBe(r0 + 1);
  });

  it('holds the newest rows in a ring, and grows for a batch larger than the ring', () => {
    const s = new LiveStream('robot-41', 'trial_job', 'run-1', 'trial-x-1', 4);
    s.write(batch('robot-41', { count: 3, source: 'trial_job' }));
    s.write(batch('robot-41', { count: 3, source: 'trial_job', q0: 1 }));
    expect(s.written).toBe(6);
    expect(s.oldest).toBe(2);
    expect(() => s.row(1)).toThrow(RangeError);
    expect(s.row(5).jointPosRad[0]).toBeCloseTo(1 + (2 * J) / 100, 12);
    const big = s.write(batch('robot-41', { count: 9, source: 'trial_job' }));
    expect(s.rowsFrom(big)).toHaveLength(9);
    expect(s.oldest).toBe(big); // the rows before it went with the smaller ring
    expect(() => s.row(big - 1)).toThrow(RangeError);
    expect(LIVE_RING_ROWS).toBeGreaterThanOrEqual(500); // a trial's largest batch fits whole
  });
});
