import type { parse } from '@foxglove/rosmsg';
import type { InputLocation } from '../../domain/problems';
import { Ros2DefinitionBoundsError, type Ros2DecodeCost } from '../../domain/robotLink/ros2DefinitionBounds';
import { UnitreeDefinitionError } from '../../domain/robotLink/unitreeLowState';
import { TaskWorker, type TaskWorkerError } from '../os/taskWorker';

// The check of a ROS 2 message definition a robot advertises, off the services' event loop: one
// worker thread (ros2DefinitionWorker.ts, through ros2DefinitionWorkerBootstrap.mjs, which lowers
// its priority before tsx compiles anything; a TaskWorker, ../os/taskWorker.ts) parses and checks
// one definition at a time, with a deadline and a heap of its own. A check that misses its deadline
// or runs out of heap is a refusal of that definition naming the limit.

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
  { ok: true; checked: CheckedRos2Definition } | { ok: false; error: SerializedDefinitionError };

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

export interface Ros2DefinitionCheckerOptions {
  checkMs?: number;
  startMs?: number;
  heapMib?: number;
}

/** Checks advertised definitions in its worker thread, one at a time, in the order asked. */
export class Ros2DefinitionChecker {
  private readonly worker: TaskWorker<Ros2DefinitionTask, Ros2DefinitionReply>;

  constructor(o: Ros2DefinitionCheckerOptions = {}) {
    this.worker = new TaskWorker({
      bootstrap: BOOTSTRAP,
      workerData: { entry: WORKER_ENTRY.href },
      name: 'motionbench-ros2-definition',
      taskMs: o.checkMs ?? ROS2_DEFINITION_CHECK_MS,
      startMs: o.startMs ?? ROS2_DEFINITION_WORKER_START_MS,
      heapMib: o.heapMib ?? ROS2_DEFINITION_WORKER_HEAP_MIB,
    });
  }

  /**
   * The parsed definitions, checked (bounds, then unitree_hg's LowState), and their decoding cost; rejects with
   * Ros2DefinitionBoundsError or UnitreeDefinitionError naming the field or the limit, or
   * Ros2DefinitionCheckError when the checker itself failed.
   */
  async check(rootType: string, schema: string): Promise<CheckedRos2Definition> {
    let reply: Ros2DefinitionReply;
    try {
      reply = await this.worker.run({ rootType, schema });
    } catch (err) {
      throw checkerFailure(rootType, err as TaskWorkerError);
    }
    if (!reply.ok) throw revive(reply.error);
    return reply.checked;
  }

  /** Workers started so far (one, unless a check missed its deadline or a worker died). */
  get workersStarted(): number {
    return this.worker.workersStarted;
  }

  /** Stops the worker; checks waiting or under way are refused. */
  close(): Promise<void> {
    return this.worker.close();
  }
}

/** A check without an answer: over the definition's own limits (time, heap), or the checker's failure. */
function checkerFailure(rootType: string, err: TaskWorkerError): Error {
  const f = err.failure;
  const where = { file: rootType, key: '(definition)' };
  switch (f.kind) {
    case 'deadline':
      return new Ros2DefinitionBoundsError(
        where,
        `checking it took longer than ${f.ms.toLocaleString('en-US')} ms; refused`,
      );
    case 'out_of_memory':
      return new Ros2DefinitionBoundsError(
        where,
        `checking it needed more than the ${f.heapMib} MiB heap it is given; refused`,
      );
    case 'start_timeout':
      return new Ros2DefinitionCheckError(`the definition checker did not start within ${Math.round(f.ms / 1000)} s`);
    case 'closed':
      return new Ros2DefinitionCheckError('the definition checker was closed');
    case 'crashed':
      return new Ros2DefinitionCheckError(`the definition checker failed: ${f.message}`);
  }
}

let shared: Ros2DefinitionChecker | null = null;

/** The process's one checker (its worker started on first use). */
export function ros2DefinitionChecker(): Ros2DefinitionChecker {
  shared ??= new Ros2DefinitionChecker();
  return shared;
}
