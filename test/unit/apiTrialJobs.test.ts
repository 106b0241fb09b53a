import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseApiEvent, type ApiEvent, type LiveFramesEvent, type TrialJobStatus } from '../../src/api/contract';
import type {
  Backend,
  BackendCapabilities,
  BackendLease,
  RobotBackend,
  StopDelivery,
  BackendListener,
  Presence,
} from '../../src/domain/backend/backend';
import { realRobotCapabilities } from '../helpers/robotCapabilities';
import { createStateFrame } from '../../src/domain/robot/stateFrame';
import { computeClipId } from '../../src/domain/motion/clipCommon';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import type { LoadedWorkload } from '../../src/domain/workload/snapshot';
import type { CalibrationRecord } from '../../src/domain/trace/records';
import { ClipCache } from '../../src/services/console/clipCache';
import { ConnectionRegistry } from '../../src/services/console/connectionRegistry';
import { EventHub } from '../../src/services/console/eventHub';
import { interlockLight, InterlockSessions } from '../../src/services/console/interlockSessions';
import { TrialJobs, type TrialServices } from '../../src/services/console/trialJobs';
import type { OffThreadFiles } from '../../src/services/console/offThread';
import type { EmbeddedSimulator } from '../../src/services/sim/embeddedSimulator';
import { loadWorkload } from '../../src/services/workload';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { openCampaign } from '../../src/services/trace';
import type { InterlockFeed } from '../../src/services/trial/interlockFeed';
import type { MatchedPairRequest, MatchedPairResult } from '../../src/services/trial/trialTypes';

// The console's calibration and trial plumbing (src/services/console/trialJobs.ts) around scripted
// trial services: stillness pushes and the capture result, accept → the record in a real
// campaign database, a matched pair as a job whose prompts are answered through trial.confirm,
// live readings batched with the robot's joint angles, the operator stop reaching the runner's
// signal (with 'intervention'), the refusal reasons passed verbatim, and the safety.status lights.

const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
let tmp: string;
let campaignDir: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-trialjobs-'));
  campaignDir = path.join(tmp, 'campaign');
  (await openCampaign(campaignDir, { create: true })).close();
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

let clipMemo: MotionClip | null = null;
function smallClip(): MotionClip {
  if (clipMemo) return clipMemo;
  const n = 11;
  const jointPosRad = new Float64Array(29 * n);
  for (let k = 0; k < n; k++) for (let j = 0; j < 29; j++) jointPosRad[29 * k + j] = 0.01 * j;
  const rootPosM = new Float64Array(3 * n);
  const rootQuatWxyz = new Float64Array(4 * n);
  for (let k = 0; k < n; k++) {
    rootPosM[3 * k + 2] = 0.79;
    rootQuatWxyz[4 * k] = 1;
  }
  const body = { fps: 50, frameCount: n, rootPosM, rootQuatWxyz, jointPosRad };
  return (clipMemo = {
    id: computeClipId(body.fps, body.frameCount, rootPosM, rootQuatWxyz, jointPosRad),
    name: 'tiny_clip',
    provenance: { file: 'tiny.json', format: 'json', fileSha256: '0'.repeat(64), fpsSource: 'file' },
    warnings: [],
    ...body,
  } as unknown as MotionClip);
}

/** A robot that streams one frame per `tick()`. */
class FakeRobot implements Backend {
  readonly id = 'fake-robot';
  readonly name = 'fake robot';
  readonly capabilities: BackendCapabilities = realRobotCapabilities(['remote']);
  presence: Presence = 'present';
  listener: BackendListener | null = null;
  t = 0;
  setListener(l: BackendListener | null): void {
    this.listener = l;
  }
  async tick(jointValue: number): Promise<void> {
    const f = createStateFrame(false);
    f.timeS = this.t += 0.002;
    f.jointPosRad.fill(jointValue);
    await this.listener?.([{ type: 'frames', runId: '', frames: [f] }]);
  }
  acquire(): Promise<BackendLease> {
    throw new Error('not used');
  }
  async close(): Promise<void> {}
}

const acknowledged = (command: 'stop' | 'damp', reason: string): StopDelivery => ({
  command,
  reason,
  attempts: 1,
  answer: 'ok',
  message: 'ok',
  firstSentAtMs: 0,
  settledAtMs: 0,
});

/** The fake robot with a robot link: it records the damps it receives. */
class DampableFakeRobot extends FakeRobot {
  readonly robotLink = { control: 'granted', emulatorControl: false } as unknown as RobotBackend['robotLink'];
  readonly wbcStatus = null;
  readonly damps: string[] = [];
  async damp(reason: string): Promise<StopDelivery> {
    this.damps.push(reason);
    return acknowledged('damp', reason);
  }
  async sendStop(reason: string): Promise<StopDelivery> {
    return acknowledged('stop', reason);
  }
  linkStats(): ReturnType<RobotBackend['linkStats']> {
    return { latencyMs: null } as unknown as ReturnType<RobotBackend['linkStats']>;
  }
}

function record(robotUnit: string): CalibrationRecord {
  return {
    robotUnit,
    capturedAt: '2026-01-01T00:00:00.000Z',
    clipId: null,
    measured: { jointPosRad: new Array(29).fill(0.02), imuQuatWxyz: [1, 0, 0, 0], rootPosM: null, rootQuatWxyz: null },
    stillness: { windowS: 1 },
    simulatorInitialState: null,
    residuals: { settledVsMeasured: null, measuredVsClipStart: null },
  };
}

interface Harness {
  jobs: TrialJobs;
  events: ApiEvent[];
  robot: FakeRobot;
  registry: ConnectionRegistry;
  hub: EventHub;
  interlocks: InterlockSessions;
  runnerSignal: () => AbortSignal | null;
}

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) {
    await h.jobs.close();
    await h.interlocks.shutdown();
    h.hub.close();
    await h.registry.close();
  }
});

async function harness(
  services: Partial<TrialServices>,
  withInterlock = true,
  robot: FakeRobot = new FakeRobot(),
): Promise<Harness> {
  const clip = smallClip();
  const clips = new ClipCache();
  clips.put(clip);
  const registry = new ConnectionRegistry({ factories: { robot: () => robot }, modelFile: DEFAULT_MODEL_FILE });
  const hub = new EventHub();
  const events: ApiEvent[] = [];
  const client = hub.attach({
    send: (e) => {
      events.push(e);
      queueMicrotask(() => client.ack(e.seq));
    },
  });
  const fakeLink = {
    path: '/dev/fake-interlock',
    state: 'safe',
    isArmedAndFresh: () => false,
    snapshot: () => ({
      atMs: 100,
      state: 'safe',
      deviceState: 'SAFE',
      portOpen: true,
      armedAndFresh: false,
      armPending: false,
      disarmPending: false,
      freshness: {
        lastStatusAtMs: 90,
        ageMs: 10,
        lastAnsweredSeq: 1,
        lastSentSeq: 1,
        rttMs: 1,
        rttP50Ms: 1,
        rttP99Ms: 1,
        rttMaxMs: 1,
        rttSamples: 1,
      },
      heartbeat: { periodMs: 20, latenessP99Ms: null, latenessMaxMs: null },
      counters: { garbageLines: 0, trips: 0 },
      lastTrip: null,
      lastEvent: null,
    }),
    arm: async () => ({ ok: false, reason: 'not_safe', detail: 'the box reports ESTOP: release the e-stop first' }),
    disarm: async () => ({ ok: true }),
    close: async () => {},
    closed: new Promise<void>(() => {}),
  };
  const interlocks = new InterlockSessions({
    open: async () =>
      ({ link: fakeLink, subscribe: () => () => {}, close: async () => {} }) as unknown as InterlockFeed,
  });
  if (withInterlock) await interlocks.open('/dev/fake-interlock');
  let signal: AbortSignal | null = null;
  const full: TrialServices = {
    captureRobotCalibration: async () => ({ ok: false, message: 'not scripted', reasons: [], stats: null }),
    runMatchedPair: async (req) => {
      signal = req.signal ?? null;
      throw new Error('not scripted');
    },
    listAdmittedPairs: () => [
      {
        pairId: 'pt-0123456789',
        clipId: clip.id,
        clipName: clip.name,
        bindingKey: 'builtin:assist=3000@1',
        bindingName: 'builtin@1 · assist 3000 N/m',
        bindingLabel: 'reference tracker',
        contractId: 'mb-metrics/1',
        admitted: true,
        reasons: [],
        decidedAt: '2026-01-01T00:00:00Z',
        snapshotHash: null,
        matched: null,
      },
    ],
    ...services,
  };
  const wrapped: TrialServices = {
    ...full,
    runMatchedPair: (req) => {
      signal = req.signal ?? null;
      return full.runMatchedPair(req);
    },
  };
  const jobs = new TrialJobs({
    hub,
    registry,
    interlocks,
    clips,
    profile: () => profile,
    services: wrapped,
    simulator: async () => ({}) as EmbeddedSimulator,
  });
  const h = { jobs, events, robot, registry, hub, interlocks, runnerSignal: () => signal };
  harnesses.push(h);
  await registry.addRemote('ws://127.0.0.1:9', 'robot');
  return h;
}

const until = async (cond: () => boolean, what: string, ms = 2000): Promise<void> => {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('calibration from the console', () => {
  it('pushes stillness, answers with residuals, and accept stores the record in the campaign', async () => {
    const h = await harness({
      captureRobotCalibration: async (req) => {
        req.onProgress?.({
          still: false,
          windowFilledS: 0.3,
          windowNeededS: 1,
          reasons: [{ code: 'joint_velocity', message: 'left_knee_joint moves' }],
          stats: null,
        });
        req.onProgress?.({ still: true, windowFilledS: 1, windowNeededS: 1, reasons: [], stats: null });
        return {
          ok: true,
          record: { ...record(req.link.robotUnit), clipId: req.clip!.id },
          residualsVsClip: {
            jointRad: new Array(29).fill(0.01),
            maxAbsJointRad: 0.01,
            maxAbsJoint: 'left_hip_pitch_joint',
            rmsJointRad: 0.01,
            rollRad: 0.001,
            pitchRad: -0.002,
            headingRad: null,
            rootPosM: null,
          },
          stats: {
            frames: 500,
            spanS: 1,
            rateHz: 500,
            tickGaps: 0,
            missingTicks: 0,
            maxIntervalS: 0.002,
            maxAbsJointVelRadS: 0.001,
            maxAbsJointVelJoint: 0,
            maxJointVelRmsRadS: 0.0005,
            maxJointVelRmsJoint: 0,
            maxGyroRadS: 0.001,
            maxJointRangeRad: 0.001,
            maxJointRangeJoint: 0,
          },
        };
      },
    });
    const r = await h.jobs.captureCalibration({ connectionId: 'robot-1', campaignDir, clipId: smallClip().id });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.robotUnit).toBe('ws://127.0.0.1:9/');
    expect(r.clip?.name).toBe('tiny_clip');
    expect(r.clipStartJointRad?.[3]).toBeCloseTo(0.03);
    expect(r.residualsVsClip?.maxAbsJoint).toBe('left_hip_pitch_joint');
    const still = h.events.filter((e) => e.type === 'calibration.stillness');
    expect(still.length).toBeGreaterThanOrEqual(2); // the first and the "still" one are never throttled away
    expect(still.at(-1)).toMatchObject({ captureId: r.captureId, progress: { still: true } });

    const a = await h.jobs.acceptCalibration({ captureId: r.captureId });
    expect(a.calibrationId).toMatch(/^cal-[0-9a-f]{24}$/);
    const store = await openCampaign(campaignDir, { readOnly: true });
    try {
      expect(store.getCalibration(a.calibrationId)?.record.robotUnit).toBe('ws://127.0.0.1:9/');
    } finally {
      store.close();
    }
    await expect(h.jobs.acceptCalibration({ captureId: r.captureId })).rejects.toMatchObject({
      code: 'not_found',
      field: 'params.captureId',
    });
  });

  it('refuses a simulator connection and an unknown clip, naming the field', async () => {
    const h = await harness({});
    await expect(h.jobs.captureCalibration({ connectionId: 'embedded-sim', campaignDir })).rejects.toMatchObject({
      code: 'bad_params',
      field: 'params.connectionId',
    });
    await expect(
      h.jobs.captureCalibration({ connectionId: 'robot-1', campaignDir, clipId: 'no_such_clip_anywhere' }),
    ).rejects.toMatchObject({ code: 'not_found', field: 'params.clipId' });
    await expect(
      h.jobs.captureCalibration({ connectionId: 'robot-1', campaignDir: path.join(tmp, 'missing') }),
    ).rejects.toMatchObject({ code: 'not_found', field: 'params.campaignDir' });
  });
});

describe('matched trials from the console', () => {
  it('refuses to start without an interlock', async () => {
    const h = await harness({}, false);
    await expect(h.jobs.start({ campaignDir, pairId: 'pt-0123', connectionId: 'robot-1' })).rejects.toThrow(
      /no interlock is open/,
    );
  });

  it('prompts through pushes, streams live readings with the robot joints, and the operator stop reaches the runner', async () => {
    let release!: () => void;
    const h = await harness({
      runMatchedPair: async (req: MatchedPairRequest): Promise<MatchedPairResult> => {
        req.onProgress?.({
          type: 'phase',
          phase: 'waiting_confirmation',
          trialIndex: 0,
          message: 'confirm trial 1 of 1',
        });
        const ok = await req.operator.confirmTrial({
          pairId: req.pairId,
          runId: 'real_robot-1-aa',
          trialIndex: 0,
          trials: 1,
          clipName: 'tiny_clip',
          binding: 'builtin@1',
          bindingName: 'builtin@1 · no assist',
          calibrationCheck: { maxJointDiffRad: 0.01, attitudeDiffRad: 0.002 },
        });
        if (!ok) throw new Error('declined');
        req.onProgress?.({
          type: 'refusal',
          runId: 'real_robot-1-aa',
          reasons: [
            {
              code: 'interlock_not_armed',
              condition: 'interlock',
              message: 'the interlock is SAFE, not ARMED',
              values: {},
            },
          ],
        });
        req.onProgress?.({ type: 'phase', phase: 'running', trialIndex: 0, message: 'trial 1 of 1 running' });
        let frame = 0;
        await new Promise<void>((resolve) => {
          release = resolve;
          const timer = setInterval(() => {
            req.onProgress?.({
              type: 'live',
              runId: 'real_robot-1-aa',
              frame,
              timeS: frame / 50,
              mpjpeLMm: 10 + frame,
              jointRmseRad: 0.01,
              failed: frame >= 5,
              failure: frame >= 5 ? 'root_height of pelvis' : null,
            });
            frame++;
          }, 5);
          req.signal?.addEventListener('abort', () => {
            clearInterval(timer);
            resolve();
          });
        });
        req.onProgress?.({
          type: 'episode_end',
          runId: 'real_robot-1-aa',
          domain: 'real_robot',
          trialIndex: 0,
          outcome: req.signal?.reason === 'intervention' ? 'intervention' : 'aborted_by_operator',
          reason: 'the operator pressed stop',
          frames: frame,
          resumed: false,
        });
        return {
          pairId: req.pairId,
          parentTraceId: 'pt-m',
          calibrationId: 'cal-1',
          clip: { id: 'c', name: 'tiny_clip' },
          binding: { id: 'builtin', version: '1', label: 'x', name: 'builtin@1 · no assist' },
          sim: { runId: 'sim-1', outcome: 'completed', metrics: null, resumed: false },
          real: [],
          remaining: 1,
          stoppedEarly: 'stopped by the operator',
        };
      },
    });
    const started = await h.jobs.start({ campaignDir, pairId: 'pt-0123', connectionId: 'robot-1', trials: 1 });
    expect(started.status).toMatchObject({ state: 'running', pairId: 'pt-0123456789', clip: { name: 'tiny_clip' } });
    expect(started.reference?.name).toBe('tiny_clip');

    await until(() => h.events.some((e) => e.type === 'trial.prompt'), 'the prompt');
    const prompt = h.events.find((e) => e.type === 'trial.prompt')!;
    if (prompt.type !== 'trial.prompt') throw new Error('unreachable');
    expect(prompt.prompt).toMatchObject({
      kind: 'confirm_trial',
      trial: { trialIndex: 0, calibrationCheck: { maxJointDiffRad: 0.01 } },
    });
    expect(() => h.jobs.confirm({ jobId: started.status.jobId, promptId: 'prompt-other-1', ok: true })).toThrow(
      /not the one waiting/,
    );
    await h.robot.tick(0.25); // the robot's measured joints, paired with the live readings
    h.jobs.confirm({ jobId: started.status.jobId, promptId: prompt.prompt.promptId, ok: true });

    const isTrialLive = (e: ApiEvent): e is LiveFramesEvent => e.type === 'live.frames' && e.source === 'trial_job';
    await until(() => h.events.filter(isTrialLive).length >= 2, 'live batches');
    const lives = h.events.filter(isTrialLive);
    const first = lives[0];
    expect(first).toMatchObject({ connectionId: started.status.connectionId, jobId: started.status.jobId });
    expect(parseApiEvent(first)).toMatchObject({ ok: true });
    expect(first.runId).toBe('real_robot-1-aa');
    expect(first.jointPosRad.length).toBe(29 * first.count);
    expect(first.jointPosRad[7]).toBe(0.25);
    expect(first.rootPosM).toBeNull(); // no motion capture: drawn at the reference root
    expect(first.frame![0]).toBe(0);
    await until(() => h.events.filter(isTrialLive).some((e) => e.readings!.failed!.includes(true)), 'the failure flag');
    const failedBatch = h.events.filter(isTrialLive).find((e) => e.readings!.failed!.includes(true));
    expect(failedBatch).toMatchObject({ readings: { failure: 'root_height of pelvis' } });
    const progress = h.events.filter((e) => e.type === 'trial.progress');
    expect(
      progress.some(
        (e) =>
          e.type === 'trial.progress' &&
          e.detail?.type === 'refusal' &&
          e.detail.reasons[0].message === 'the interlock is SAFE, not ARMED',
      ),
    ).toBe(true);

    expect(h.jobs.stop({ all: true, intervention: true, reason: 'operator stop (key:Space)' })).toEqual({
      stopped: [started.status.jobId],
    });
    expect(h.runnerSignal()?.reason).toBe('intervention');
    await until(() => h.jobs.status({ jobId: started.status.jobId })?.state !== 'running', 'the end');
    const end = h.jobs.status({ jobId: started.status.jobId }) as TrialJobStatus;
    expect(end).toMatchObject({
      state: 'stopped',
      episodes: [{ outcome: 'intervention', domain: 'real_robot' }],
      stopRequested: { intervention: true },
    });
    expect(end.result?.stoppedEarly).toBe('stopped by the operator');
    void release;
  });

  it("the operator's STOP (all) damps a connected robot that no job holds; a job's own stop does not", async () => {
    const robot = new DampableFakeRobot();
    const h = await harness({}, true, robot);
    const id = h.registry.list().find((c) => c.kind === 'robot')!.id;
    await h.registry.connect(id);
    // negative control: stopping one job (none here) sends nothing to the robot
    expect(() => h.jobs.stop({ jobId: 'trial-nope-1' })).toThrow();
    expect(robot.damps).toEqual([]);
    expect(h.jobs.stop({ all: true, reason: 'operator stop (key:Escape)' })).toEqual({ stopped: [] });
    await until(() => robot.damps.length === 1, 'the damp');
    expect(robot.damps).toEqual(['STOP: operator stop (key:Escape)']);
  });

  it('ends a prompt unanswered when stopped, and needs a note to confirm a reset', async () => {
    const h = await harness({
      runMatchedPair: async (req) => {
        const note = await req.operator.confirmReset({ trialIndex: 1, afterOutcome: 'completed', tripped: false });
        return {
          pairId: req.pairId,
          parentTraceId: 'p',
          calibrationId: 'c',
          clip: { id: 'c', name: 'n' },
          binding: { id: 'b', version: '1', label: 'l', name: 'b@1 · no assist' },
          sim: { runId: 's', outcome: 'completed', metrics: null, resumed: true },
          real: [],
          remaining: 2,
          stoppedEarly: note === null ? 'the operator did not confirm the reset' : null,
        };
      },
    });
    const started = await h.jobs.start({ campaignDir, pairId: 'pt-0123456789', connectionId: 'robot-1', trials: 2 });
    await until(() => h.jobs.status({})?.prompt !== null, 'the reset prompt');
    const p = h.jobs.status({})!.prompt!;
    expect(p.kind).toBe('confirm_reset');
    expect(() => h.jobs.confirm({ jobId: started.status.jobId, promptId: p.promptId, ok: true, note: '  ' })).toThrow(
      /needs a note/,
    );
    h.jobs.stop({ jobId: started.status.jobId });
    await until(() => h.jobs.status({})?.state !== 'running', 'the end');
    expect(h.jobs.status({})).toMatchObject({
      state: 'stopped',
      prompt: null,
      result: { stoppedEarly: 'the operator did not confirm the reset' },
    });
  });
});

describe('safety status', () => {
  it('pushes the interlock light and the robot link age at 5 Hz', async () => {
    const h = await harness({});
    await h.robot.tick(0);
    await until(() => h.events.some((e) => e.type === 'safety.status'), 'a safety.status push', 1500);
    const s = h.events.find((e) => e.type === 'safety.status');
    if (s?.type !== 'safety.status') throw new Error('unreachable');
    expect(s.interlock).toMatchObject({ path: '/dev/fake-interlock', light: 'SAFE', lastStatusAgeMs: 10 });
    expect(s.robots[0]).toMatchObject({
      connectionId: 'robot-1',
      presence: 'present',
      freshLimitMs: 50,
      globalRoot: false,
    });
    const arm = await h.interlocks.arm();
    expect(arm).toMatchObject({
      ok: false,
      reason: 'not_safe',
      detail: 'the box reports ESTOP: release the e-stop first',
    });
  });

  it('pushes once more when the last robot and the box have gone (chips clear), then stays quiet', async () => {
    const h = await harness({});
    await h.robot.tick(0);
    await until(() => h.events.some((e) => e.type === 'safety.status'), 'a safety.status push', 1500);
    await h.interlocks.close();
    await h.registry.disconnect('robot-1');
    const empty = () =>
      h.events.filter(
        (e) =>
          e.type === 'safety.status' && e.interlock === null && e.robots.every((r) => r.presence === 'disconnected'),
      );
    await until(() => empty().length > 0, 'a push with nothing connected', 1500);
    const pushes = h.events.filter((e) => e.type === 'safety.status').length;
    await new Promise((r) => setTimeout(r, 600)); // three push periods
    expect(empty()).toHaveLength(1);
    expect(h.events.filter((e) => e.type === 'safety.status').length).toBe(pushes);
  });

  it('maps monitor states to lights', () => {
    expect(interlockLight(null)).toBe('CLOSED');
    expect(interlockLight({ state: 'armed', portOpen: true })).toBe('ARMED');
    expect(interlockLight({ state: 'estop', portOpen: true })).toBe('ESTOP');
    expect(interlockLight({ state: 'lost', portOpen: false })).toBe('LOST');
    expect(interlockLight({ state: 'disconnected', portOpen: false })).toBe('CLOSED');
  });
});

describe('core-v1 before a trial (warmUp)', () => {
  function jobsWith(files: OffThreadFiles | undefined): TrialJobs {
    const registry = new ConnectionRegistry({ factories: {}, modelFile: DEFAULT_MODEL_FILE });
    const jobs = new TrialJobs({
      hub: new EventHub(),
      registry,
      interlocks: new InterlockSessions({ open: async () => ({}) as InterlockFeed }),
      clips: new ClipCache(),
      profile: () => profile,
      ...(files && { files }),
      services: {} as TrialServices,
      simulator: async () => ({}) as EmbeddedSimulator,
    });
    return jobs;
  }
  const findClip = (jobs: TrialJobs, ref: string): MotionClip | null =>
    (jobs as unknown as { findClip(ref: string): MotionClip | null }).findClip(ref);

  it('asks the file worker for it, once, and uses what the worker made (nothing generated on this loop)', async () => {
    const clip = smallClip();
    let resolve!: (wl: LoadedWorkload) => void;
    const calls: string[] = [];
    const files = {
      builtinWorkload: (id: string) => {
        calls.push(id);
        return new Promise<LoadedWorkload>((r) => (resolve = r));
      },
    } as unknown as OffThreadFiles;
    const jobs = jobsWith(files);
    jobs.warmUp();
    jobs.warmUp(); // a second box Open while the first generation runs asks for nothing more
    expect(calls).toEqual(['core-v1']);
    const snapshot = { clips: [{ id: clip.id, name: 'from-the-worker' }] } as unknown as LoadedWorkload['snapshot'];
    resolve({ snapshot, clips: [clip] });
    await new Promise((r) => setTimeout(r, 0));
    // The worker's workload is the one used: a real core-v1 has no clip of this name.
    expect(findClip(jobs, 'from-the-worker')).toBe(clip);
    jobs.warmUp();
    expect(calls).toHaveLength(1);
    await jobs.close();
  });

  it('control: without a file worker it is generated on this loop at once (the real core-v1)', async () => {
    const jobs = jobsWith(undefined);
    jobs.warmUp();
    expect(findClip(jobs, 'from-the-worker')).toBeNull();
    const wl = loadWorkload('core-v1');
    expect(findClip(jobs, wl.snapshot.clips[0].name)?.id).toBe(wl.snapshot.clips[0].id);
    await jobs.close();
  });
});
