import { Worker } from 'node:worker_threads';
import type { parse } from '@foxglove/rosmsg';
import type { InputLocation } from '../../domain/problems';
import { Ros2DefinitionBoundsError, type Ros2DecodeCost } from '../../domain/robotLink/ros2DefinitionBounds';
import { UnitreeDefinitionError } from '../../domain/robotLink/unitreeLowState';

// The check of a ROS 2 message definition a robot advertises, off the services' event loop: one
// worker thread (ros2DefinitionWorker.ts, through ros2DefinitionWorkerBootstrap.mjs, which lowers
// its priority before tsx compiles anything) parses and checks one definition at a time, with a
// deadline and a heap of its own. A check that misses its deadline or runs out of heap is a refusal
// of that definition naming the limit; the worker is then terminated and the next check starts a
// fresh one. The worker is started on first use and never keeps the process alive while idle.

/** Parsed definitions, as @foxglove/rosmsg's parse returns them (what MessageReader takes). */
export type MessageDefinition = ReturnType<typeof parse>[number];

/**
 * Longest one check may take once the worker runs, ms. A definition within the text bounds
 * (ROS2_DEFINITION_LIMITS: 64 KiB, lines of 1,000 characters) parses and checks in tens of ms (a
 * line built to make the parser backtrack: ~1.5 ms; 4,000 fields: ~10 ms).
 */
export const ROS2_DEFINITION_CHECK_MS = 2_000;
/** Longest the worker may take to start (tsx compiles its modules on a loaded machine), ms. */
export const ROS2_DEFINITION_WORKER_START_MS = 30_000;
/** The worker's V8 heap, MiB (old generation; a bounded definition needs a few MiB). */
export const ROS2_DEFINITION_WORKER_HEAP_MIB = 64;

export interface Ros2DefinitionTask {
  id: number;
  /** The channel's schemaName: the root type's name. */
  rootType: string;
  schema: string;
}

/** A refusal across the thread boundary: the error's type and fields (a structured clone keeps only messages). */
export type SerializedDefinitionError =
  | { type: 'bounds'; location: InputLocation; reason: string }
  | { type: 'unitree'; field: string; reason: string }
  | { type: 'other'; message: string };

export type Ros2DefinitionReply =
  | { id: number; ok: true; checked: CheckedRos2Definition }
  | { id: number; ok: false; error: SerializedDefinitionError };

/** A definition that passed: parsed (root first), with what decoding one message of it costs at most. */
export interface CheckedRos2Definition {
  definitions: MessageDefinition[];
  cost: Ros2DecodeCost;
}

/** The checker could not give an answer (its worker failed to start or crashed): nothing about the definition. */
export class Ros2DefinitionCheckError extends Error {
  override readonly name = 'Ros2DefinitionCheckError';
}

function revive(e: SerializedDefinitionError): Error {
  if (e.type === 'bounds') return new Ros2DefinitionBoundsError(e.location, e.reason);
  if (e.type === 'unitree') return new UnitreeDefinitionError(e.field, e.reason);
  return new Ros2DefinitionCheckError(e.message);
}

const BOOTSTRAP = new URL('./ros2DefinitionWorkerBootstrap.mjs', import.meta.url);
const WORKER_ENTRY = new URL('./ros2DefinitionWorker.ts', import.meta.url);

interface Job {
  task: Ros2DefinitionTask;
  resolve(checked: CheckedRos2Definition): void;
  reject(err: Error): void;
}

let serial = 0;

export interface Ros2DefinitionCheckerOptions {
  checkMs?: number;
  startMs?: number;
  heapMib?: number;
}

/** Checks advertised definitions in its worker thread, one at a time, in the order asked. */
export class Ros2DefinitionChecker {
  private worker: Worker | null = null;
  private ready = false;
  private readonly queue: Job[] = [];
  private current: Job | null = null;
  private timer: NodeJS.Timeout | null = null;
  private nextId = 1;
  private started = 0;
  private readonly checkMs: number;
  private readonly startMs: number;
  private readonly heapMib: number;

  constructor(o: Ros2DefinitionCheckerOptions = {}) {
    this.checkMs = o.checkMs ?? ROS2_DEFINITION_CHECK_MS;
    this.startMs = o.startMs ?? ROS2_DEFINITION_WORKER_START_MS;
    this.heapMib = o.heapMib ?? ROS2_DEFINITION_WORKER_HEAP_MIB;
  }

  /**
   * The parsed definitions, checked (bounds, then unitree_hg's LowState), and their decoding cost; rejects with
   * Ros2DefinitionBoundsError or UnitreeDefinitionError naming the field or the limit, or
   * Ros2DefinitionCheckError when the checker itself failed.
   */
  check(rootType: string, schema: string): Promise<CheckedRos2Definition> {
    return new Promise((resolve, reject) => {
      this.queue.push({ task: { id: this.nextId++, rootType, schema }, resolve, reject });
      this.pump();
    });
  }

  /** Workers started so far (one, unless a check missed its deadline or a worker died). */
  get workersStarted(): number {
    return this.started;
  }

  /** Stops the worker; checks waiting or under way are refused. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    const err = new Ros2DefinitionCheckError('the definition checker was closed');
    for (const j of this.queue.splice(0)) j.reject(err);
    this.settle(null, err);
    if (w) await w.terminate().catch(() => undefined);
  }

  private pump(): void {
    if (this.current || this.queue.length === 0) return;
    const worker = this.ensureWorker();
    const job = this.queue.shift()!;
    this.current = job;
    worker.ref(); // a check under way keeps the process alive
    worker.postMessage(job.task);
    this.arm(worker);
  }

  /** The deadline of the current check: the start's until the worker runs, then the check's own. */
  private arm(worker: Worker): void {
    if (this.timer) clearTimeout(this.timer);
    const job = this.current;
    if (!job) return;
    const ms = this.ready ? this.checkMs : this.startMs;
    this.timer = setTimeout(() => {
      const rootType = job.task.rootType;
      const err = this.ready
        ? new Ros2DefinitionBoundsError(
            { file: rootType, key: '(definition)' },
            `checking it took longer than ${ms.toLocaleString('en-US')} ms; refused`,
          )
        : new Ros2DefinitionCheckError(`the definition checker did not start within ${Math.round(ms / 1000)} s`);
      this.discard(worker, err);
    }, ms);
    this.timer.unref();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(BOOTSTRAP, {
      workerData: { entry: WORKER_ENTRY.href },
      name: `motionbench-ros2-definition-${serial++}`,
      resourceLimits: { maxOldGenerationSizeMb: this.heapMib, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    });
    worker.unref();
    this.started++;
    this.ready = false;
    worker.on('message', (m: Ros2DefinitionReply | { ready: true }) => {
      if (worker !== this.worker) return;
      if ('ready' in m) {
        this.ready = true;
        this.arm(worker);
        return;
      }
      if (!this.current || m.id !== this.current.task.id) return;
      if (m.ok) this.settle(m.checked, null);
      else this.settle(null, revive(m.error));
      this.pump();
    });
    worker.on('error', (err: Error & { code?: string }) => {
      const job = this.current;
      this.discard(
        worker,
        err?.code === 'ERR_WORKER_OUT_OF_MEMORY' && job
          ? new Ros2DefinitionBoundsError(
              { file: job.task.rootType, key: '(definition)' },
              `checking it needed more than the ${this.heapMib} MiB heap it is given; refused`,
            )
          : new Ros2DefinitionCheckError(`the definition checker failed: ${err?.message ?? String(err)}`),
      );
    });
    worker.on('exit', (code) =>
      this.discard(worker, new Ros2DefinitionCheckError(`the definition checker exited (code ${code})`)),
    );
    this.worker = worker;
    return worker;
  }

  /** Ends the current check (a value or an error), stops its deadline, lets the worker idle. */
  private settle(checked: CheckedRos2Definition | null, err: Error | null): void {
    const job = this.current;
    this.current = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.worker?.unref();
    if (!job) return;
    if (err) job.reject(err);
    else job.resolve(checked!);
  }

  /** Drops a worker (stuck, out of heap, crashed): its check is refused, the next check starts a new one. */
  private discard(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.ready = false;
    this.settle(null, err);
    void worker.terminate().catch(() => undefined);
    this.pump();
  }
}

let shared: Ros2DefinitionChecker | null = null;

/** The process's one checker (its worker started on first use). */
export function ros2DefinitionChecker(): Ros2DefinitionChecker {
  shared ??= new Ros2DefinitionChecker();
  return shared;
}
