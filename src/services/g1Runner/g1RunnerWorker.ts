// The runner's real-time thread: the G1's DDS link (controller end), the safety reducer
// (src/domain/g1Runner/g1RunnerSafety.ts), the binding on board, and LowCmd at 500 Hz repeating the
// latest targets. It runs at a raised priority and owns everything that moves or damps the robot,
// so a stalled bridge thread (the console's WebSocket) cannot stop damping: the watchdogs and the
// 500 Hz loop live here. Started through simWorkerBootstrap.mjs by g1Runner.ts.

import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { createStateFrame, type StateFrame } from '../../domain/robot/stateFrame';
import {
  initialRunnerState,
  LOW_CMD_PERIOD_MS,
  motorCommand,
  reduceRunner,
  type JointLimits,
  type MotorCommandOut,
  type RunnerEffect,
  type RunnerEvent,
} from '../../domain/g1Runner/g1RunnerSafety';
import { resampleClip } from '../../domain/motion/resample';
import {
  motionSwitcherStatus,
  motionSwitcherVerdict,
  type MotionSwitcherVerdict,
} from '../../domain/g1Runner/motionSwitcherCheck';
import type { MotionClip } from '../../domain/motion/motionClip';
import { G1_NUM_JOINTS } from '../../domain/robot/g1Joints';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { BuiltinTracker } from '../../domain/sim/builtinTracker';
import { emptyLowCmd, type LowState } from '../../domain/robotLink/unitreeHgWire';
import { createControlCommand, type ControlObservation, type Controller } from '../../domain/wbc/controller';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import { G1DdsController } from '../dds/g1DdsEndpoints';
import { MotionSwitcherClient } from '../dds/motionSwitcherClient';
import {
  raiseThreadPriority,
  RUNNER_RT_PRIORITY,
  setThisThreadRealtimeFifo,
  thisThreadIdOrNull,
} from '../os/threadPriority';
import { loadRobotProfile } from '../robot/loadRobotProfile';
import { OnboardComputer, type OnboardStandingController } from '../robotEmulator/onboardComputer';
import { RECORD_RATE_HZ } from '../sim/simEngine';
import type { FromRunnerWorker, RunnerWorkerInit, ToRunnerWorker } from './g1RunnerProtocol';
import { listenForInterlockTrips, type InterlockTripListener } from './interlockTripListener';

if (!parentPort) throw new Error('g1RunnerWorker.ts must run in a worker thread');
const main = parentPort;
const post = (m: FromRunnerWorker): void => main.postMessage(m);
const { init, emergency } = workerData as { init: RunnerWorkerInit; emergency: SharedArrayBuffer };
/** [0]: set by the bridge thread when its process is going down; [1]: set here once damping was sent. */
const emergencyCells = new Int32Array(emergency);

/** Niceness of this thread: the same raised priority as the interlock keeper's threads. */
const RUNNER_NICE = -10;
/** G1 motors have no published limit above this, N·m (used where the model declares none). */
const FALLBACK_EFFORT_NM = 139;

const raised = raiseThreadPriority(RUNNER_NICE);

/**
 * Policies are loaded and run on an onboard-computer thread of their own (the emulator's), so
 * loading an ONNX session (a synchronous native call of up to seconds) never holds this thread's
 * 500 Hz loop and watchdogs; each control step is a synchronous call to it (the inference time).
 * It starts with the runner, as a robot's PC boots before any trial: its start (the modules,
 * onnxruntime's start-up: hundreds of ms of CPU on a loaded machine) is then over before the
 * console arms the interlock, and a `prepare` only opens the policy's session. It starts and loads
 * at normal priority (onboardComputerWorker.ts), never at this thread's; it steps under SCHED_FIFO
 * one below this thread, as this thread waits for each step. Created here, before this thread
 * switches to SCHED_FIFO below: a new thread starts with its creator's policy.
 */
const onboard = new OnboardComputer({ stepRtPriority: RUNNER_RT_PRIORITY - 1 });
onboard.whenReady().then(
  () => trace(`g1-runner: onboard computer thread ${onboard.threadId} ready (loads at normal priority)`),
  () => {}, // a failed start is reported by the load that needs it
);

/**
 * This thread under SCHED_FIFO (threadPriority.ts): a nice −10 does not bound how long it waits
 * for a CPU once woken (measured up to 177 ms on the loaded 2-core machine, beside other sessions
 * at −10), and its own lowstate watchdog then damps the robot. Without reset-on-fork, and before
 * the DDS participant opens below: Cyclone's receive and event threads, which the participant
 * starts from this thread, inherit it, as lowstate receipt is on the safety path. Nothing else is
 * created from this thread after this point. Refused (no privilege): it runs at RUNNER_NICE.
 */
const realtime = setThisThreadRealtimeFifo(RUNNER_RT_PRIORITY, false);
const monoMs = (): number => Number(process.hrtime.bigint() - init.originMonoNs) / 1e6;

function jointLimits(profile: RobotProfile): JointLimits {
  const J = G1_NUM_JOINTS;
  const l: JointLimits = {
    lowerRad: new Float64Array(J).fill(-Math.PI),
    upperRad: new Float64Array(J).fill(Math.PI),
    effortNm: new Float64Array(J).fill(FALLBACK_EFFORT_NM),
  };
  for (const j of profile.joints) {
    if (j.index < 0 || j.index >= J || !j.rangeRad) continue;
    l.lowerRad[j.index] = j.rangeRad[0];
    l.upperRad[j.index] = j.rangeRad[1];
  }
  for (const a of profile.actuators)
    if (a.forceRange && a.jointIndex >= 0 && a.jointIndex < J)
      l.effortNm[a.jointIndex] = Math.max(Math.abs(a.forceRange[0]), Math.abs(a.forceRange[1]));
  return l;
}

const profile = loadRobotProfile(init.modelFile);
const limits = jointLimits(profile);
const defaultPose = Float64Array.from(profile.defaultPose.jointPosRad);
const state = initialRunnerState(init.afterClip, monoMs());
const link = new G1DdsController({ interfaceName: init.interfaceName, domainId: init.domainId });
/**
 * The robot's motion switcher (unitree_sdk2 MotionSwitcherClient's CheckMode), asked at `prepare`:
 * prepare's ramp is the runner's first command that moves the robot, and Unitree's low-level
 * examples ask before their first LowCmd. The wait is asynchronous on this thread's event loop
 * (timers and DDS deliveries), so the 500 Hz loop keeps its period meanwhile.
 */
const switcher = new MotionSwitcherClient(link.participant);
let switcherVerdict: MotionSwitcherVerdict | null = null;
/** Counts stop/hold/damp/close: a prepare that waited across one of them does not go on. */
let interruptions = 0;

const frame: StateFrame = createStateFrame(false);
let haveFrame = false;
let tickHigh = 0;
let lastRawTick: number | null = null;

interface Episode {
  runId: string;
  clip: MotionClip;
  controller: Controller;
  startNs: number;
  rateHz: number;
  /** Control steps of the whole clip (the emulator's timeline: (K − 1)·M). */
  steps: number;
  lastStep: number;
  obs: ControlObservation;
  frames: number;
}
let prepared: {
  runId: string;
  clip: MotionClip;
  binding: WbcBinding;
  controller: Controller;
  pendingId: number | null;
} | null = null;
let episode: Episode | null = null;
const ctlOut = createControlCommand();
const cmd = emptyLowCmd();
const out: MotorCommandOut = { q: cmd.q, dq: cmd.dq, tau: cmd.tau, kp: cmd.kp, kd: cmd.kd };
for (let j = 0; j < G1_NUM_JOINTS; j++) cmd.mode[j] = 1;

const trace = (line: string): void => post({ type: 'trace', line });

function apply(ev: RunnerEvent): RunnerEffect[] {
  const fx = reduceRunner(state, ev, limits);
  for (const e of fx) {
    switch (e.type) {
      case 'mode':
        post({ type: 'mode', mode: e.mode, cause: e.cause });
        trace(`g1-runner: motors: ${e.mode} (${e.cause})`);
        if (e.mode === 'damping') sendNow(); // damping goes on the wire at once, not at the next period
        if (e.mode === 'standing') startStanding();
        break;
      case 'episode_end': {
        const ep = episode;
        episode = null;
        const frames = ep?.frames ?? 0;
        post({
          type: 'episode_end',
          runId: e.runId,
          outcome: e.outcome,
          reason: e.reason,
          frames,
          simSeconds: ep ? frames * 0.002 : 0,
        });
        break;
      }
      case 'refused':
      case 'accepted':
        break;
    }
  }
  return fx;
}

function nowStampNs(): number {
  return Number(process.hrtime.bigint() - init.originMonoNs);
}

let listenerErrors = 0;
link.onMessage(({ message: m, receiptNs }) => {
  try {
    onLowState(m, Number(receiptNs - init.originMonoNs));
  } catch (err) {
    // A fault here must not escape into DDS's delivery: damp, count, say it once in a while.
    if (listenerErrors++ % 500 === 0)
      trace(`g1-runner: lowstate handling failed: ${(err as Error).stack ?? String(err)}`);
    apply({ type: 'damp', reason: `lowstate handling failed: ${(err as Error).message}` });
  }
});

function onLowState(m: LowState, stampNs: number): void {
  // tick is a uint32 counter: unwrapped to a monotonic count (a step back by more than half the
  // range is a wrap; a smaller one, a reordered sample, is not).
  if (lastRawTick !== null && m.tick < lastRawTick && lastRawTick - m.tick > 2 ** 31) tickHigh += 2 ** 32;
  lastRawTick = m.tick;
  apply({
    type: 'lowstate',
    nowMs: stampNs / 1e6,
    q: m.q,
    dq: m.dq,
    quatWxyz: m.imu.quaternion,
    wirelessRemote: m.wirelessRemote,
    modeMachine: m.modeMachine,
  });
  for (let j = 0; j < G1_NUM_JOINTS; j++) {
    frame.jointPosRad[j] = m.q[j];
    frame.jointVelRadS[j] = m.dq[j];
    frame.jointTauNm[j] = m.tauEst[j];
  }
  frame.imu.quatWxyz.set(m.imu.quaternion);
  frame.imu.gyroRadS.set(m.imu.gyroscope);
  frame.imu.accelMS2.set(m.imu.accelerometer);
  frame.rootQuatWxyz!.set(m.imu.quaternion);
  frame.tick = tickHigh + m.tick;
  frame.timeS = stampNs / 1e9;
  haveFrame = true;
  const ep = episode;
  if (ep) {
    const tS = Math.max(0, (stampNs - ep.startNs) / 1e9);
    frame.referenceFrame = Math.min(ep.clip.frameCount - 1, Math.round(tS * ep.clip.fps));
    ep.frames++;
  } else frame.referenceFrame = null;
  post({ type: 'frame', frame });
}

function sendNow(): void {
  motorCommand(state, monoMs(), limits, out);
  cmd.modePr = 0;
  cmd.modeMachine = state.modeMachine;
  link.send(cmd);
  sent++;
}

function controlStep(ep: Episode): void {
  const tS = (nowStampNs() - ep.startNs) / 1e9;
  if (tS < 0) return;
  const n = Math.floor(tS * ep.rateHz + 1e-9);
  if (n <= ep.lastStep) return;
  ep.lastStep = n;
  if (n >= ep.steps) {
    apply({ type: 'clip_end', runId: ep.runId });
    return;
  }
  if (!haveFrame) return;
  ep.obs.step = n;
  ep.obs.timeS = n / ep.rateHz;
  ep.obs.referenceFrame = Math.min(ep.obs.reference.frameCount - 1, n);
  ep.controller.step(ep.obs, ctlOut);
  apply({ type: 'targets', q: ctlOut.jointTargetRad, kp: ctlOut.kp, kd: ctlOut.kd });
}

// The 500 Hz loop: each period runs the watchdogs, the binding when its step is due, and writes
// one LowCmd. A late period is not caught up with a burst: the latest targets go out once.
let sent = 0;
let stopped = false;
let nextDueMs = monoMs();
let lastSendMs: number | null = null;
const periods: number[] = [];
let timer: NodeJS.Timeout | null = null;
/** Sleeps the last fraction of a period (a timer wakes up to ~1 ms late): no CPU is spent waiting. */
const sleepCell = new Int32Array(new SharedArrayBuffer(4));
function loop(): void {
  timer = null;
  if (stopped) return;
  if (Atomics.load(emergencyCells, 0) !== 0) return lastResort('the runner process is exiting');
  const early = nextDueMs - monoMs();
  if (early > 0.05) Atomics.wait(sleepCell, 0, 0, early);
  const now = monoMs();
  apply({ type: 'tick', nowMs: now });
  if (episode && state.mode === 'tracking') controlStep(episode);
  if (state.mode === 'standing') standingStep(now);
  sendNow();
  if (lastSendMs !== null && periods.length < 100_000) periods.push(now - lastSendMs);
  lastSendMs = now;
  nextDueMs += LOW_CMD_PERIOD_MS;
  if (nextDueMs < now - LOW_CMD_PERIOD_MS) nextDueMs = now + LOW_CMD_PERIOD_MS;
  timer = setTimeout(loop, Math.max(0, Math.floor(nextDueMs - monoMs() - 1)));
}

const statsTimer = setInterval(() => {
  const c = link.counters();
  const p = periods.splice(0).sort((a, b) => a - b);
  const mean = p.length ? p.reduce((a, b) => a + b, 0) / p.length : 0;
  post({
    type: 'stats',
    stats: {
      lowCmdSent: sent,
      lowStateReceived: c.received,
      crcErrors: c.crcErrors,
      periodMeanMs: mean,
      periodMaxMs: p.length ? p[p.length - 1] : 0,
      periodP99Ms: p.length ? p[Math.min(p.length - 1, Math.floor(p.length * 0.99))] : 0,
      mode: state.mode,
      remoteStopHeld: state.remoteStopHeld,
    },
  });
}, 1000);

let loaded: { key: string; controller: Controller } | null = null;

async function onboardComputer(): Promise<OnboardComputer> {
  await onboard.whenReady();
  return onboard;
}

// The standing controller (--after-clip standing_policy): loaded on the onboard computer at the
// first prepare, beside the binding's policy, so the switch at the clip end has no load gap. At the
// switch its observation histories are filled with the state measured then and its last action is
// zero (unitree_rl_lab State_RLBase::enter → env->reset()), and it steps at once, then every step_dt.
let standingCtl: OnboardStandingController | null = null;
const standingTarget = new Float64Array(G1_NUM_JOINTS);
let standingNextMs = 0;
let standingLastTraceMs = 0;
/**
 * Consecutive standing steps the onboard computer did not answer. A late step keeps the latest
 * targets on the wire, as unitree_rl_lab's deploy does (its control loop sends whatever action the
 * policy thread last produced); this many in a row damp.
 */
const STANDING_MAX_MISSED_STEPS = 3;
let standingMissed = 0;

async function loadStanding(): Promise<OnboardStandingController> {
  if (standingCtl) return standingCtl;
  if (!init.standingPolicyPath) throw new Error('--after-clip standing_policy needs --standing-policy <folder>');
  const t0 = performance.now();
  const c = await (await onboardComputer()).loadStanding(init.standingPolicyPath);
  trace(
    `g1-runner: the onboard computer loaded the standing controller ${c.identity.id}@${c.identity.version} in ${(performance.now() - t0).toFixed(0)} ms (${c.identity.controlRateHz} Hz, zero command)`,
  );
  standingCtl = c;
  return c;
}

function startStanding(): void {
  const c = standingCtl;
  if (!c || !haveFrame) {
    apply({ type: 'damp', reason: 'standing: no standing controller or no measured state' });
    return;
  }
  try {
    standingMissed = 0;
    c.reset(frame);
    trace(
      `g1-runner: standing: ${c.identity.id} reset from the state measured now (each term's history filled with it, last action 0), command 0`,
    );
    standingNextMs = monoMs();
    standingLastTraceMs = standingNextMs;
    standingStep(standingNextMs);
  } catch (err) {
    apply({ type: 'damp', reason: `standing controller failed: ${(err as Error).message}` });
  }
}

function standingStep(now: number): void {
  const c = standingCtl;
  if (!c || now < standingNextMs) return;
  standingNextMs += 1000 / c.identity.controlRateHz;
  if (standingNextMs < now) standingNextMs = now + 1000 / c.identity.controlRateHz;
  try {
    c.step(frame, standingTarget);
    standingMissed = 0;
  } catch (err) {
    standingMissed++;
    trace(`g1-runner: standing: step missed (${standingMissed} in a row): ${(err as Error).message}`);
    if (standingMissed >= STANDING_MAX_MISSED_STEPS)
      apply({
        type: 'damp',
        reason: `standing controller failed ${standingMissed} steps in a row: ${(err as Error).message}`,
      });
    return;
  }
  apply({ type: 'targets', q: standingTarget, kp: c.kp, kd: c.kd, from: 'standing' });
  if (now - standingLastTraceMs >= 2000) {
    standingLastTraceMs = now;
    trace(`g1-runner: standing: pelvis tilt ${state.tiltRad.toFixed(3)} rad (IMU)`);
  }
}

async function loadPolicy(binding: WbcBinding): Promise<Controller> {
  const key = `${binding.id}@${binding.version}`;
  if (loaded?.key === key) return loaded.controller;
  if (loaded?.controller.dispose) await loaded.controller.dispose();
  loaded = null;
  const t0 = performance.now();
  const controller = await (await onboardComputer()).load(binding, profile);
  const stepsAt =
    controller.nice.stepRtPriority !== null
      ? `SCHED_FIFO ${controller.nice.stepRtPriority}`
      : `nice ${controller.nice.step}`;
  trace(
    `g1-runner: the onboard computer loaded ${binding.id} in ${(performance.now() - t0).toFixed(0)} ms (thread ${controller.tid}: at nice ${controller.nice.load}; steps at ${stepsAt})`,
  );
  loaded = { key, controller };
  return controller;
}

/** Asks CheckMode; true when prepare may go on (refusals are replied here). */
async function motionSwitcherAllows(id: number): Promise<boolean> {
  const before = interruptions;
  let verdict: MotionSwitcherVerdict;
  try {
    const answer = await switcher.checkMode(init.motionSwitcherTimeoutMs);
    verdict = motionSwitcherVerdict(answer, init.domainId);
    post({ type: 'motion_switcher', status: motionSwitcherStatus(answer, verdict) });
  } catch (err) {
    post({ type: 'reply', id, ok: false, message: `prepare refused: motion switcher: ${(err as Error).message}` });
    return false;
  }
  switcherVerdict = verdict;
  trace(verdict.line);
  if (!verdict.allow) {
    post({ type: 'reply', id, ok: false, message: `prepare refused: ${verdict.line}` });
    return false;
  }
  if (interruptions !== before) {
    post({ type: 'reply', id, ok: false, message: 'prepare ended: stopped while the motion switcher was asked' });
    return false;
  }
  return true;
}

async function prepare(id: number, runId: string, clip: MotionClip, binding: WbcBinding): Promise<void> {
  if (!(await motionSwitcherAllows(id))) return;
  let controller: Controller;
  try {
    if (binding.kind === 'builtin') {
      controller = new BuiltinTracker(binding, G1_NUM_JOINTS);
      // The root assist is a wrench on the pelvis that only a simulator can apply (a virtual
      // gantry): here only the joint targets and gains go to the robot; what holds the pelvis up is
      // the operator-declared gantry (--after-clip gantry).
      if (binding.rootAssist && binding.rootAssist.kpNPerM > 0)
        trace(
          `g1-runner: ${binding.id}: root assist ${binding.rootAssist.kpNPerM} N/m not applied (a simulator's virtual gantry; the robot hangs on its real one)`,
        );
    } else controller = await loadPolicy(binding);
    if (controller.needs.includes('base_lin_vel'))
      throw new Error(
        `binding ${binding.id} needs base_lin_vel (a root velocity estimate), which a G1's lowstate does not carry`,
      );
  } catch (err) {
    post({ type: 'reply', id, ok: false, message: (err as Error).message });
    return;
  }
  let standing: OnboardStandingController | null = null;
  if (init.afterClip === 'standing_policy') {
    try {
      standing = await loadStanding();
    } catch (err) {
      post({ type: 'reply', id, ok: false, message: `standing controller: ${(err as Error).message}` });
      return;
    }
  }
  const startPose = clip.jointPosRad.subarray(0, G1_NUM_JOINTS);
  const fx = apply({
    type: 'prepare',
    nowMs: monoMs(),
    startPose,
    standing: standing && { id: standing.identity.id, kp: standing.kp, kd: standing.kd },
  });
  const refused = fx.find((e) => e.type === 'refused');
  if (refused) {
    post({ type: 'reply', id, ok: false, message: refused.reason });
    return;
  }
  // The reply waits until the ramp reached the start pose (ready) or something ended it.
  prepared = { runId, clip, binding, controller, pendingId: id };
}

function checkPrepared(): void {
  const p = prepared;
  if (!p || p.pendingId === null) return;
  if (state.mode === 'holding' && state.ready) {
    post({ type: 'reply', id: p.pendingId, ok: true, message: 'ready at the start pose' });
    p.pendingId = null;
  } else if (state.mode !== 'ramping') {
    post({
      type: 'reply',
      id: p.pendingId,
      ok: false,
      message: `prepare ended: the ramp was interrupted (mode ${state.mode})`,
    });
    prepared = null;
  }
}
setInterval(checkPrepared, 10);

function start(id: number, runId: string, startNs: number): void {
  const p = prepared;
  if (!p || p.runId !== runId) {
    post({ type: 'reply', id, ok: false, message: `start refused: run ${runId} was not prepared` });
    return;
  }
  // prepare asked the motion switcher and went on only if it allowed; start continues that session.
  if (!switcherVerdict?.allow) {
    post({
      type: 'reply',
      id,
      ok: false,
      message: 'start refused: the motion switcher did not allow low-level control at prepare',
    });
    return;
  }
  const fx = apply({ type: 'start', nowMs: monoMs(), runId });
  const refused = fx.find((e) => e.type === 'refused');
  if (refused) {
    post({ type: 'reply', id, ok: false, message: refused.reason });
    return;
  }
  const rate = p.binding.controlRateHz;
  const M = Math.round(rate / RECORD_RATE_HZ);
  const K = resampleClip(p.clip, RECORD_RATE_HZ).frameCount;
  const refCtl = resampleClip(p.clip, rate);
  p.controller.reset();
  episode = {
    runId,
    clip: p.clip,
    controller: p.controller,
    startNs,
    rateHz: rate,
    steps: (K - 1) * M,
    lastStep: -1,
    frames: 0,
    obs: {
      step: 0,
      timeS: 0,
      state: frame,
      reference: {
        rateHz: rate,
        frameCount: refCtl.frameCount,
        rootPosM: refCtl.rootPosM,
        rootQuatWxyz: refCtl.rootQuatWxyz,
        jointPosRad: refCtl.jointPosRad,
      },
      referenceFrame: 0,
      defaultJointPosRad: defaultPose,
      rootLinVelMps: null,
    },
  };
  prepared = null;
  post({ type: 'reply', id, ok: true, message: `tracking run ${runId}` });
}

main.on('message', (m: ToRunnerWorker) => {
  switch (m.type) {
    case 'prepare':
      void prepare(m.id, m.runId, m.clip, m.binding);
      break;
    case 'start':
      start(m.id, m.runId, m.startNs);
      break;
    case 'stop':
    case 'hold':
    case 'damp':
      interruptions++;
      apply({ type: m.type, reason: m.reason });
      checkPrepared(); // a prepare still ramping is answered: interrupted
      prepared = null;
      break;
    case 'console':
      apply({ type: 'console', nowMs: monoMs() });
      break;
    case 'close':
      interruptions++;
      // Last word on the wire: damping.
      apply({ type: 'damp', reason: 'runner closing' });
      sendNow();
      stopped = true;
      if (timer) clearTimeout(timer);
      clearInterval(statsTimer);
      tripListener?.close();
      setTimeout(() => {
        link.close();
        process.exit(0);
      }, 20);
      break;
  }
});

/** Last resort: damping on the wire, then nothing more from this thread. */
function lastResort(why: string): void {
  try {
    apply({ type: 'damp', reason: `last resort: ${why}` });
    sendNow();
    sendNow();
  } finally {
    stopped = true;
    Atomics.store(emergencyCells, 1, 1);
    Atomics.notify(emergencyCells, 1);
  }
}
process.on('uncaughtException', (err) => {
  lastResort(`real-time thread failed: ${err.message}`);
  post({ type: 'fatal', message: `real-time thread failed: ${err.stack ?? err.message}` });
});

trace(
  realtime
    ? `g1-runner: real-time thread ${thisThreadIdOrNull()} under SCHED_FIFO ${RUNNER_RT_PRIORITY}`
    : raised
      ? `g1-runner: real-time scheduling refused: running at nice ${RUNNER_NICE}`
      : 'g1-runner: real-time scheduling refused: running at normal priority (raising the nice was refused too)',
);

/** The interlock box's e-stop, from its keeper: damping goes on the wire now, not at the next period. */
function interlockEstop(detail: string): void {
  const fx = apply({ type: 'estop', reason: `interlock: ${detail}` });
  if (!stopped) sendNow();
  if (fx.length > 0) trace(`g1-runner: interlock e-stop (${detail}): damping`);
}
let tripListener: InterlockTripListener | null = null;
if (init.interlockTripSocket === null) {
  post({ type: 'ready' });
  loop();
} else {
  listenForInterlockTrips(init.interlockTripSocket, interlockEstop, trace).then(
    (l) => {
      tripListener = l;
      post({ type: 'ready' });
      loop();
    },
    (err: Error) => {
      post({ type: 'fatal', message: `cannot listen on ${init.interlockTripSocket}: ${err.message}` });
      link.close();
      process.exit(0);
    },
  );
}
