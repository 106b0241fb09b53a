import { performance } from 'node:perf_hooks';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import type { PhysicsProfile } from '../../domain/robot/physicsProfile';
import type { ControlCommand, ControlObservation, ControlReference, Controller } from '../../domain/wbc/controller';
import type { BackendNeed } from '../../domain/wbc/trackingPolicy';
import type { WbcBinding } from '../../domain/wbc/wbcBinding';
import type { VelocityRobotState } from '../../domain/wbc/velocityPolicy';
import type { StandingPolicyIdentity } from '../wbc/standingPolicy';
import { thisThreadNice } from '../os/threadPriority';
import type { FromOnboard, StepCall, StepReply, ToOnboard } from './onboardComputerProtocol';

// The robot emulator's onboard computer (the G1's PC) as a worker thread, and the policies it runs
// as Controllers the emulator core steps as before.
//
// Why a thread: on a real G1 the motor board publishes lowstate at 500 Hz whatever the PC does;
// loading a policy there never silences the robot. In one emulator process, a policy load on the
// main thread (onnxruntime's session creation is a synchronous native call) held the 500 Hz loop:
// ~10 ms on an idle machine, and once on a loaded CI machine long enough (≥ 100 ms) that the
// console's gate, which had just granted `prepare`, saw the link go silent and tripped. Loading
// here is asynchronous for the main thread.
//
// Stepping stays synchronous, as the core's control loop needs: step() posts the observation on a
// MessagePort and blocks in Atomics.wait until the worker's reply is on the port (an inference is
// ~0.1 ms; the round trip adds tens of µs). Same native code and same inputs as in-process, so the
// same targets bit for bit. A reply that does not come within STEP_TIMEOUT_MS fails that step
// (the core ends the episode infrastructure_error, naming it), so a wedged worker cannot hold the
// motor board longer than that.

const BOOTSTRAP = new URL('../sim/simWorkerBootstrap.mjs', import.meta.url);
const WORKER_ENTRY = new URL('./onboardComputerWorker.ts', import.meta.url);

/** The onboard computer's nice while it starts and loads a policy (ordinary work). */
export const LOAD_NICE = 0;

/** How long a step or reset may take on the onboard computer before it counts as failed, ms. */
export const STEP_TIMEOUT_MS = 50;
/** How long a policy load may take, ms (file read, session, trial inference, on a loaded machine). */
const LOAD_TIMEOUT_MS = 60_000;

let serial = 0;

/** A loaded policy, run on the onboard computer. */
class OnboardController implements Controller {
  private sentReference: ControlReference | null = null;
  private released = false;

  constructor(
    private readonly host: OnboardComputer,
    readonly binding: WbcBinding,
    readonly physics: PhysicsProfile | null,
    readonly needs: readonly BackendNeed[],
    /** How long the load took on the onboard computer, ms. */
    readonly loadMs: number,
    /**
     * The onboard thread's nice while it loaded and for the steps (null: not readable), and the
     * SCHED_FIFO priority it steps at (null: SCHED_OTHER).
     */
    readonly nice: { load: number | null; step: number | null; stepRtPriority: number | null },
    /** The onboard thread's Linux thread id (null elsewhere), for `ps -L` and /proc. */
    readonly tid: number | null,
  ) {}

  reset(): void {
    this.call({ type: 'reset', seq: this.host.nextSeq() });
    this.sentReference = null; // the next step sends it again
  }

  step(obs: ControlObservation, out: ControlCommand): void {
    const { reference, ...rest } = obs;
    const fresh = reference !== this.sentReference ? reference : null;
    const r = this.call({ type: 'step', seq: this.host.nextSeq(), obs: rest, reference: fresh });
    if (fresh) this.sentReference = fresh;
    out.jointTargetRad.set(r.jointTargetRad);
    out.kp = copyInto(out.kp, r.kp);
    out.kd = copyInto(out.kd, r.kd);
  }

  dispose(): void {
    if (this.released) return;
    this.released = true;
    this.host.unloadIfCurrent(this);
  }

  private call(c: StepCall): Extract<StepReply, { ok: true }> {
    if (this.released) throw new Error(`the policy of ${this.binding.id} was unloaded`);
    const r = this.host.call(c);
    if (!r.ok) throw new Error(r.message);
    return r;
  }
}

function copyInto(into: Float64Array | null, from: Float64Array | null): Float64Array | null {
  if (from === null) return null;
  if (into === null || into.length !== from.length) return Float64Array.from(from);
  into.set(from);
  return into;
}

/**
 * The standing controller loaded on the onboard computer (beside the binding's policy, as
 * unitree_rl_lab's deploy constructs every FSM state's policy at start-up): reset and step are
 * synchronous calls like a policy's.
 */
export class OnboardStandingController {
  constructor(
    private readonly host: OnboardComputer,
    readonly identity: StandingPolicyIdentity,
    /** Its PD gains, canonical order. */
    readonly kp: Float64Array,
    readonly kd: Float64Array,
    readonly loadMs: number,
  ) {}

  /** Fills its observation histories from `state` (zero last action). */
  reset(state: VelocityRobotState): void {
    const r = this.host.call({ type: 'standing_reset', seq: this.host.nextSeq(), state: plainState(state) });
    if (!r.ok) throw new Error(r.message);
  }

  /** One policy step on `state`: joint targets, canonical order, into `targetRad`. */
  step(state: VelocityRobotState, targetRad: Float64Array): void {
    const r = this.host.call({ type: 'standing_step', seq: this.host.nextSeq(), state: plainState(state) });
    if (!r.ok) throw new Error(r.message);
    targetRad.set(r.jointTargetRad);
  }
}

/** Only the fields the velocity observation reads (a StateFrame carries more). */
function plainState(s: VelocityRobotState): VelocityRobotState {
  return {
    jointPosRad: s.jointPosRad,
    jointVelRadS: s.jointVelRadS,
    imu: { quatWxyz: s.imu.quatWxyz, gyroRadS: s.imu.gyroRadS },
  };
}

/** The onboard computer: one worker, at most one policy loaded at a time (a robot PC runs one), plus a standing controller. */
export class OnboardComputer {
  private readonly worker: Worker;
  private readonly steps: MessagePort;
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));
  private readonly ready: Promise<void>;
  private loads = new Map<number, { resolve: (m: FromOnboard) => void; reject: (e: Error) => void }>();
  private nextLoad = 1;
  private current: OnboardController | null = null;
  private failure: string | null = null;
  private tid: number | null = null;
  /** The onboard thread's Linux thread id, once ready (null before, or elsewhere than Linux). */
  get threadId(): number | null {
    return this.tid;
  }
  /** Seq of the last step-port call, over every policy loaded: a late reply never matches a later call. */
  private seq = 0;

  /**
   * `stepRtPriority`: for a creator whose control loop runs SCHED_FIFO, the real-time priority the
   * onboard thread steps at once a policy is loaded (onboardComputerWorker.ts); it loads as
   * ordinary work whatever this is. Create the onboard computer before its creator switches to
   * SCHED_FIFO: a thread starts with its creator's policy.
   */
  constructor(options: { stepRtPriority?: number | null } = {}) {
    this.worker = new Worker(BOOTSTRAP, {
      // Loading is ordinary work (onboardComputerWorker.ts): the thread, and the loader's hooks
      // thread it starts, begin at LOAD_NICE; it steps at this (its creator's) thread's nice.
      workerData: {
        entry: WORKER_ENTRY.href,
        startNice: LOAD_NICE,
        creatorNice: thisThreadNice(),
        stepRtPriority: options.stepRtPriority ?? null,
      },
      name: `motionbench-onboard-computer-${serial++}`,
    });
    this.worker.unref();
    const channel = new MessageChannel();
    this.steps = channel.port1;
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (m: FromOnboard) => {
        if (m.type === 'ready') {
          this.tid = m.tid;
          return resolve();
        }
        const p = this.loads.get(m.id);
        this.loads.delete(m.id);
        p?.resolve(m);
      });
      const fail = (why: string) => {
        this.failure ??= why;
        reject(new Error(why));
        for (const p of this.loads.values()) p.reject(new Error(why));
        this.loads.clear();
      };
      this.worker.on('error', (err) => fail(`the onboard computer failed: ${err?.message ?? String(err)}`));
      this.worker.on('exit', (code) => fail(`the onboard computer exited (code ${code})`));
    });
    this.ready.catch(() => {});
    const init: ToOnboard = { type: 'init', steps: channel.port2, signal: this.signal.buffer as SharedArrayBuffer };
    this.worker.postMessage(init, [channel.port2]);
  }

  /** Resolves once the worker runs and its ONNX runtime is initialised. */
  whenReady(): Promise<void> {
    return this.ready;
  }

  /**
   * Loads `binding` for `profile` on the onboard computer (the previous policy is released first)
   * and returns it as a Controller. Rejects with the loader's own message.
   */
  async load(binding: WbcBinding, profile: RobotProfile): Promise<OnboardController> {
    await this.ready;
    if (this.failure) throw new Error(this.failure);
    if (this.current) this.current.dispose();
    const id = this.nextLoad++;
    const reply = await new Promise<FromOnboard>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.loads.delete(id);
        reject(new Error(`loading ${binding.id} on the onboard computer took longer than ${LOAD_TIMEOUT_MS / 1000} s`));
      }, LOAD_TIMEOUT_MS);
      this.loads.set(id, {
        resolve: (m) => (clearTimeout(timer), resolve(m)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      const msg: ToOnboard = { type: 'load', id, binding, profile };
      this.worker.postMessage(msg);
    });
    if (reply.type === 'load_failed') throw new Error(reply.message);
    if (reply.type !== 'loaded') throw new Error(`unexpected answer ${reply.type} to a load`);
    this.current = new OnboardController(
      this,
      binding,
      reply.physics,
      reply.needs,
      reply.loadMs,
      {
        load: reply.loadNice,
        step: reply.stepNice,
        stepRtPriority: reply.stepRtPriority,
      },
      reply.tid,
    );
    return this.current;
  }

  /** Loads the standing controller from a velocity policy folder (replacing an earlier one). */
  async loadStanding(policyPath: string): Promise<OnboardStandingController> {
    await this.ready;
    if (this.failure) throw new Error(this.failure);
    const id = this.nextLoad++;
    const reply = await new Promise<FromOnboard>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.loads.delete(id);
        reject(new Error(`loading the standing controller ${policyPath} took longer than ${LOAD_TIMEOUT_MS / 1000} s`));
      }, LOAD_TIMEOUT_MS);
      this.loads.set(id, {
        resolve: (m) => (clearTimeout(timer), resolve(m)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      const msg: ToOnboard = { type: 'load_standing', id, policyPath };
      this.worker.postMessage(msg);
    });
    if (reply.type === 'load_failed') throw new Error(reply.message);
    if (reply.type !== 'standing_loaded') throw new Error(`unexpected answer ${reply.type} to a standing load`);
    return new OnboardStandingController(this, reply.identity, reply.kp, reply.kd, reply.loadMs);
  }

  /** Releases the loaded policy's session on the worker if `c` is still the loaded one. */
  unloadIfCurrent(c: OnboardController): void {
    if (this.current !== c) return;
    this.current = null;
    const msg: ToOnboard = { type: 'unload' };
    this.worker.postMessage(msg);
  }

  nextSeq(): number {
    return ++this.seq;
  }

  /** A synchronous reset/step: posts the call, waits for its reply (by seq) at most STEP_TIMEOUT_MS. */
  call(c: StepCall): StepReply {
    if (this.failure) return { seq: c.seq, ok: false, message: this.failure };
    this.steps.postMessage(c);
    const deadline = performance.now() + STEP_TIMEOUT_MS;
    for (;;) {
      const seen = Atomics.load(this.signal, 0);
      for (let m = receiveMessageOnPort(this.steps); m; m = receiveMessageOnPort(this.steps)) {
        const reply = m.message as StepReply;
        if (reply.seq === c.seq) return reply; // earlier seqs: replies to calls that timed out
      }
      const left = deadline - performance.now();
      if (left <= 0)
        return {
          seq: c.seq,
          ok: false,
          message: `the onboard computer did not answer a ${c.type} within ${STEP_TIMEOUT_MS} ms`,
        };
      Atomics.wait(this.signal, 0, seen, left);
    }
  }

  async close(): Promise<void> {
    this.current = null;
    this.steps.close();
    await this.worker.terminate();
  }
}
