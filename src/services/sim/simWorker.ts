// A simulator worker thread: one MuJoCo model (SimEngine), one episode at a time. Started through
// simWorkerBootstrap.mjs by EmbeddedSimulator. The episode loop runs synchronously; it talks to
// the main thread through postMessage (batches of frames, transferred) and a shared Int32Array
// (stop flag, batch acknowledgements) read with Atomics, so backpressure and stop requests need
// no event-loop turn: the loop blocks in Atomics.wait while too many batches are unacknowledged.

import { parentPort } from 'node:worker_threads';
import { bindingKey, type WbcBinding } from '../../domain/wbc/wbcBinding';
import type { Controller } from '../../domain/wbc/controller';
import { createController } from './controllerFactory';
import { lowerThisThreadPriority } from '../os/threadPriority';
import { SimEngine } from './simEngine';
import { CTL_ACKED, CTL_STOP, STOP_NONE, type FrameBatch, type FromWorker, type ToWorker } from './simProtocol';

if (!parentPort) throw new Error('simWorker.ts must run in a worker thread');
const port = parentPort;
/** Below normal, above the file worker (10): the console's own sim runs still keep pace when idle. */
const SIM_WORKER_NICE = 5;
// Simulation is batch work beside the threads that keep time (threadPriority.ts): a qualification
// or a simulation branch must not take the CPU from a real trial's safety gate on a 2-core machine.
lowerThisThreadPriority(SIM_WORKER_NICE);

let engine: SimEngine | null = null;
let control: Int32Array | null = null;
const controllers = new Map<string, Controller>();
const MAX_CONTROLLERS = 4;

const post = (msg: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(msg, transfer);

async function controllerFor(binding: WbcBinding): Promise<Controller> {
  const key = `${binding.kind}:${bindingKey(binding)}:${JSON.stringify(binding)}`;
  const cached = controllers.get(key);
  if (cached) return cached;
  const c = await createController(binding, engine!.profile);
  controllers.set(key, c);
  if (controllers.size > MAX_CONTROLLERS) {
    const [oldKey, old] = controllers.entries().next().value as [string, Controller];
    controllers.delete(oldKey);
    await old.dispose?.();
  }
  return c;
}

async function handle(msg: ToWorker): Promise<void> {
  switch (msg.type) {
    case 'init': {
      control = new Int32Array(msg.control);
      const t0 = performance.now();
      try {
        engine = await SimEngine.load(msg.modelFile);
      } catch (err) {
        post({ type: 'init_failed', message: (err as Error).message ?? String(err) });
        return;
      }
      post({
        type: 'ready',
        info: {
          modelFile: msg.modelFile,
          modelName: engine.modelName,
          timestepS: engine.timestepS,
          jointCount: engine.jointCount,
          bodyCount: engine.profile.bodies.length,
          hasImuSensors: engine.hasImuSensors,
          loadMs: performance.now() - t0,
        },
      });
      return;
    }
    case 'reset': {
      try {
        const state = engine!.applyInitialState(msg.initial, msg.seed, msg.noiseRad);
        post({ type: 'reset_done', id: msg.id, state });
      } catch (err) {
        post({ type: 'reset_failed', id: msg.id, message: (err as Error).message ?? String(err) });
      }
      return;
    }
    case 'run': {
      const ctl = control!;
      let controller: Controller;
      try {
        controller = await controllerFor(msg.binding);
      } catch (err) {
        post({ type: 'run_failed', id: msg.id, message: (err as Error).message ?? String(err) });
        return;
      }
      const opts = msg.options;
      const maxInFlight = Math.max(1, Math.floor(opts.maxBatchesInFlight ?? 2));
      const pace = opts.paceRealTime && opts.paceRealTime > 0 ? opts.paceRealTime : null;
      let seq = 0;
      const t0 = performance.now();
      const sink = {
        emit(batch: FrameBatch): void {
          // Backpressure: at most maxInFlight batches unacknowledged by the main thread.
          for (;;) {
            const acked = Atomics.load(ctl, CTL_ACKED);
            if (seq - acked < maxInFlight || Atomics.load(ctl, CTL_STOP) !== STOP_NONE) break;
            Atomics.wait(ctl, CTL_ACKED, acked, 100);
          }
          post({ type: 'batch', id: msg.id, episode: msg.episode, seq, batch }, [batch.data.buffer as ArrayBuffer]);
          seq++;
          if (pace) {
            const simEnd = (batch.firstFrame + batch.count - 1) / 50;
            const waitMs = (simEnd / pace) * 1000 - (performance.now() - t0);
            if (waitMs > 0) Atomics.wait(ctl, CTL_STOP, STOP_NONE, waitMs);
          }
        },
        stopRequested: () => Atomics.load(ctl, CTL_STOP),
        onFrame:
          opts.crashAtFrame !== undefined
            ? (k: number) => {
                if (k >= opts.crashAtFrame!) process.exit(70);
              }
            : undefined,
      };
      try {
        const end = engine!.run(
          {
            clip: msg.clip,
            binding: msg.binding,
            controller,
            seed: msg.seed,
            initial: msg.initial,
            framesPerBatch: opts.framesPerBatch,
            initialJointNoiseRad: opts.initialJointNoiseRad,
          },
          sink,
        );
        post({ type: 'end', id: msg.id, episode: msg.episode, end, batches: seq, tainted: false });
      } catch (err) {
        const e = err as Error;
        if (e instanceof RangeError && seq === 0) {
          // Bad input (initial state, control rate) found before anything ran: the run is refused.
          post({ type: 'run_failed', id: msg.id, message: e.message });
          return;
        }
        post({
          type: 'end',
          id: msg.id,
          episode: msg.episode,
          end: {
            outcome: 'infrastructure_error',
            reason: `simulator fault: ${e?.message ?? String(err)}`,
            frames: 0,
            plannedFrames: 0,
            simSeconds: 0,
            failure: null,
            referenceLiftM: null,
          },
          batches: seq,
          tainted: true,
        });
      }
      return;
    }
    case 'shutdown': {
      for (const c of controllers.values()) await c.dispose?.();
      controllers.clear();
      engine?.dispose();
      engine = null;
      port.close();
      return;
    }
  }
}

// Messages are handled strictly one after another.
let chain: Promise<void> = Promise.resolve();
port.on('message', (msg: ToWorker) => {
  chain = chain
    .then(() => handle(msg))
    .catch((err: unknown) => {
      // An unexpected fault: let the main thread see a crashed worker and replace it.
      console.error(`simulator worker: ${(err as Error)?.stack ?? String(err)}`);
      process.exit(71);
    });
});
