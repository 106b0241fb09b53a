import { Worker, type TransferListItem } from 'node:worker_threads';

// One worker thread that runs tasks one at a time, in the order asked, each under a deadline and
// within a heap of its own: the way untrusted input (a robot's advertised definition, a console's
// command) is parsed off an event loop that carries STOP or a state stream. A task that misses its
// deadline or runs the worker out of heap fails naming that limit; the worker is then terminated
// and the next task starts a fresh one. The worker starts on first use and never keeps the
// process alive while idle.
//
// The thread's side is serveTasks (taskWorkerPort.ts): `{ ready: true }` once loaded, then one
// `{ id, reply }` per `{ id, task }`.

/** Why a task got no reply. */
export type TaskWorkerFailure =
  | { kind: 'start_timeout'; ms: number }
  | { kind: 'deadline'; ms: number }
  | { kind: 'out_of_memory'; heapMib: number }
  | { kind: 'crashed'; message: string }
  | { kind: 'closed' };

export class TaskWorkerError extends Error {
  override readonly name = 'TaskWorkerError';
  constructor(
    readonly failure: TaskWorkerFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface TaskWorkerOptions {
  /** The thread's entry (a bootstrap .mjs that loads the TypeScript module named in workerData). */
  bootstrap: URL;
  workerData: Record<string, unknown>;
  /** Thread name prefix (a serial is appended). */
  name: string;
  /** Longest one task may take once the worker runs, ms. */
  taskMs: number;
  /** Longest the worker may take to start, ms. */
  startMs: number;
  /** The worker's V8 old-generation heap, MiB. */
  heapMib: number;
}

interface Job<Task, Reply> {
  id: number;
  task: Task;
  transfer: readonly TransferListItem[];
  resolve(reply: Reply): void;
  reject(err: TaskWorkerError): void;
}

function failureMessage(f: TaskWorkerFailure): string {
  switch (f.kind) {
    case 'start_timeout':
      return `the worker did not start within ${Math.round(f.ms / 1000)} s`;
    case 'deadline':
      return `the task took longer than ${f.ms.toLocaleString('en-US')} ms`;
    case 'out_of_memory':
      return `the task needed more than the ${f.heapMib} MiB heap it is given`;
    case 'crashed':
      return `the worker failed: ${f.message}`;
    case 'closed':
      return 'the worker was closed';
  }
}

let serial = 0;

export class TaskWorker<Task, Reply> {
  private worker: Worker | null = null;
  private ready = false;
  private readonly queue: Job<Task, Reply>[] = [];
  private current: Job<Task, Reply> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private nextId = 1;
  private started = 0;

  constructor(private readonly o: TaskWorkerOptions) {}

  /** The task's reply; rejects with TaskWorkerError when the worker gave none. */
  run(task: Task, transfer: readonly TransferListItem[] = []): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, task, transfer, resolve, reject });
      this.pump();
    });
  }

  /** Workers started so far (one, unless a task missed its deadline or a worker died). */
  get workersStarted(): number {
    return this.started;
  }

  /** Stops the worker; tasks waiting or under way fail `closed`. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    const err = this.error({ kind: 'closed' });
    for (const j of this.queue.splice(0)) j.reject(err);
    this.settle(null, err);
    if (w) await w.terminate().catch(() => undefined);
  }

  private error(f: TaskWorkerFailure): TaskWorkerError {
    return new TaskWorkerError(f, failureMessage(f));
  }

  private pump(): void {
    if (this.current || this.queue.length === 0) return;
    const worker = this.ensureWorker();
    const job = this.queue.shift()!;
    this.current = job;
    worker.ref(); // a task under way keeps the process alive
    worker.postMessage({ id: job.id, task: job.task }, job.transfer);
    this.arm(worker);
  }

  /** The deadline of the current task: the start's until the worker runs, then the task's own. */
  private arm(worker: Worker): void {
    if (this.timer) clearTimeout(this.timer);
    if (!this.current) return;
    const failure: TaskWorkerFailure = this.ready
      ? { kind: 'deadline', ms: this.o.taskMs }
      : { kind: 'start_timeout', ms: this.o.startMs };
    this.timer = setTimeout(() => this.discard(worker, this.error(failure)), failure.ms);
    this.timer.unref();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.o.bootstrap, {
      workerData: this.o.workerData,
      name: `${this.o.name}-${serial++}`,
      resourceLimits: { maxOldGenerationSizeMb: this.o.heapMib, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    });
    worker.unref();
    this.started++;
    this.ready = false;
    worker.on('message', (m: { id: number; reply: Reply } | { ready: true }) => {
      if (worker !== this.worker) return;
      if ('ready' in m) {
        this.ready = true;
        this.arm(worker);
        return;
      }
      if (!this.current || m.id !== this.current.id) return;
      this.settle(m.reply, null);
      this.pump();
    });
    worker.on('error', (err: Error & { code?: string }) =>
      this.discard(
        worker,
        this.error(
          err?.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? { kind: 'out_of_memory', heapMib: this.o.heapMib }
            : { kind: 'crashed', message: err?.message ?? String(err) },
        ),
      ),
    );
    worker.on('exit', (code) =>
      this.discard(worker, this.error({ kind: 'crashed', message: `exited (code ${code})` })),
    );
    this.worker = worker;
    return worker;
  }

  /** Ends the current task (a reply or an error), stops its deadline, lets the worker idle. */
  private settle(reply: Reply | null, err: TaskWorkerError | null): void {
    const job = this.current;
    this.current = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.worker?.unref();
    if (!job) return;
    if (err) job.reject(err);
    else job.resolve(reply as Reply);
  }

  /** Drops a worker (stuck, out of heap, crashed): its task fails, the next task starts a new one. */
  private discard(worker: Worker, err: TaskWorkerError): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.ready = false;
    this.settle(null, err);
    void worker.terminate().catch(() => undefined);
    this.pump();
  }
}
