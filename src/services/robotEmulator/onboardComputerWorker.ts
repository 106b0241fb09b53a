// The robot emulator's onboard computer: a worker thread that loads and runs the WBC binding's
// policy, as the G1's PC does beside its motor board. Loading a policy (an ONNX session: a
// synchronous native call, plus a trial inference) takes milliseconds on an idle machine and far
// more on a loaded one; here it never holds the main thread, whose 500 Hz loop publishes the
// lowstate a real robot's board keeps publishing whatever its PC is doing (onboardComputer.ts).
// Started through simWorkerBootstrap.mjs.

import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import {
  createControlCommand,
  type ControlObservation,
  type ControlReference,
  type Controller,
} from '../../domain/wbc/controller';
import {
  setThisThreadNice,
  setThisThreadNormalScheduling,
  setThisThreadRealtimeFifo,
  thisThreadIdOrNull,
  thisThreadNice,
} from '../os/threadPriority';
import { createController, preloadPolicyControllers } from '../sim/controllerFactory';
import { createStandingPolicyController, type StandingPolicyController } from '../wbc/standingPolicy';
import type { FromOnboard, StepCall, StepReply, ToOnboard } from './onboardComputerProtocol';

if (!parentPort) throw new Error('onboardComputerWorker.ts must run in a worker thread');
const main = parentPort;
const post = (m: FromOnboard): void => main.postMessage(m);

// Priorities. A Linux thread starts at its creator's nice: the g1-runner's real-time thread
// (nice −10) creates this one, and starting it and loading a policy (the modules, onnxruntime's
// start-up, the session, the trial inference: hundreds of ms of CPU on a loaded 2-core machine)
// then ran at the timekeepers' priority, beside the interlock's processes and the console's
// services (measured: docs/G1_RUNNER.md "A matched pair through the console"). Loading is ordinary
// work: this thread starts at LOAD_NICE (simWorkerBootstrap.mjs, before the loader's hooks thread
// exists) and loads there. Stepping is the creator's real-time work (its 500 Hz loop waits for each
// step): once a policy is loaded the thread takes the creator's nice, and leaves it again for the
// next load. Raising it back needs the privilege the creator had; without it, steps run at LOAD_NICE.
// A creator that runs SCHED_FIFO (the g1-runner's thread) passes `stepRtPriority`: a nice does not
// bound how long this thread waits for a CPU once a step wakes it, and the creator's 500 Hz loop is
// blocked for exactly that long (up to STEP_TIMEOUT_MS, then the step fails). So once a policy is
// loaded this thread steps under SCHED_FIFO at that priority, with reset-on-fork (nothing it starts
// while stepping inherits it), and goes back to SCHED_OTHER at LOAD_NICE for the next load, so a
// session's creation and whatever threads onnxruntime starts then are ordinary work. A step is one
// inference (onnxPolicySession: one intra-op thread, sequential), well inside the kernel's
// real-time throttling. Where refused, the thread steps at the creator's nice as above.
const { creatorNice, startNice, stepRtPriority } = workerData as {
  creatorNice: number | null;
  startNice: number;
  stepRtPriority?: number | null;
};
const lowered = creatorNice !== null && creatorNice < startNice;
let realtime = false;
const loadingPriority = (): void => {
  if (realtime) realtime = !setThisThreadNormalScheduling();
  if (lowered) setThisThreadNice(startNice);
};
const steppingPriority = (): void => {
  if (lowered) setThisThreadNice(creatorNice);
  if (typeof stepRtPriority === 'number') realtime = setThisThreadRealtimeFifo(stepRtPriority, true);
};

let controller: Controller | null = null;
let reference: ControlReference | null = null;
const out = createControlCommand();
let signal: Int32Array | null = null;
/** The standing controller, loaded beside the binding's policy (a G1 runner's after-clip). */
let standing: StandingPolicyController | null = null;
const standingTarget = new Float64Array(29);

async function release(): Promise<void> {
  const c = controller;
  controller = null;
  reference = null;
  if (c?.dispose) await c.dispose();
}

function answer(steps: MessagePort, reply: StepReply): void {
  steps.postMessage(reply);
  // After the reply is queued on the port: the main thread wakes and finds it there.
  Atomics.add(signal!, 0, 1);
  Atomics.notify(signal!, 0);
}

function onStep(steps: MessagePort, call: StepCall): void {
  try {
    if (call.type === 'standing_reset' || call.type === 'standing_step') {
      if (!standing) throw new Error('no standing controller is loaded on the onboard computer');
      if (call.type === 'standing_reset') standing.reset(call.state);
      else standing.step(call.state, standingTarget);
      answer(steps, { seq: call.seq, ok: true, jointTargetRad: standingTarget, kp: null, kd: null });
      return;
    }
    if (!controller) throw new Error('no policy is loaded on the onboard computer');
    if (call.type === 'reset') {
      controller.reset();
      answer(steps, { seq: call.seq, ok: true, jointTargetRad: out.jointTargetRad, kp: null, kd: null });
      return;
    }
    if (call.reference) reference = call.reference;
    if (!reference) throw new Error('the first step carried no reference');
    const obs: ControlObservation = { ...call.obs, reference };
    controller.step(obs, out);
    answer(steps, { seq: call.seq, ok: true, jointTargetRad: out.jointTargetRad, kp: out.kp, kd: out.kd });
  } catch (err) {
    answer(steps, { seq: call.seq, ok: false, message: (err as Error)?.message ?? String(err) });
  }
}

main.on('message', (m: ToOnboard) => {
  switch (m.type) {
    case 'init': {
      signal = new Int32Array(m.signal);
      const steps = m.steps as unknown as MessagePort;
      steps.on('message', (call: StepCall) => onStep(steps, call));
      void preloadPolicyControllers().then(
        () => post({ type: 'ready', tid: thisThreadIdOrNull() }),
        () => post({ type: 'ready', tid: thisThreadIdOrNull() }), // a missing runtime is reported by the load that needs it
      );
      return;
    }
    case 'load':
      void (async () => {
        const t0 = performance.now();
        loadingPriority();
        const loadNice = thisThreadNice();
        try {
          await release();
          controller = await createController(m.binding, m.profile);
          out.kp = null;
          out.kd = null;
          steppingPriority();
          post({
            type: 'loaded',
            id: m.id,
            physics: controller.physics,
            needs: [...controller.needs],
            loadMs: performance.now() - t0,
            loadNice,
            stepNice: thisThreadNice(),
            stepRtPriority: realtime ? stepRtPriority! : null,
            tid: thisThreadIdOrNull(),
          });
        } catch (err) {
          controller = null;
          post({ type: 'load_failed', id: m.id, message: (err as Error)?.message ?? String(err) });
        }
      })();
      return;
    case 'load_standing': {
      // Ordinary work like a policy's load; the standing controller's steps are real-time work.
      const t0 = performance.now();
      loadingPriority();
      try {
        standing?.dispose();
        standing = null;
        standing = createStandingPolicyController(m.policyPath);
        steppingPriority();
        post({
          type: 'standing_loaded',
          id: m.id,
          identity: standing.identity,
          kp: standing.kp,
          kd: standing.kd,
          loadMs: performance.now() - t0,
        });
      } catch (err) {
        if (controller) steppingPriority(); // the binding's policy loaded before still steps
        post({ type: 'load_failed', id: m.id, message: (err as Error)?.message ?? String(err) });
      }
      return;
    }
    case 'unload':
      void release();
      return;
  }
});
