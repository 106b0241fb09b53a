// How many simulator worker threads a machine affords: one per core the process may use, and no
// more than the available memory holds once the main process's own share is set aside.

/** Resident memory one simulator worker adds (MuJoCo WASM heap with the G1 model, its V8 isolate, a controller), bytes. Measured: about 254 MiB per worker after an episode (bench/qualificationBench.ts prints the figure of the machine it runs on). */
export const SIM_WORKER_RESIDENT_BYTES = 256 * 2 ** 20;
/** Memory left to the main process (store, episode encoding, the console) before any worker is counted, bytes. */
export const MAIN_PROCESS_RESERVE_BYTES = 512 * 2 ** 20;

export interface SimWorkerBudgetInput {
  /** Cores the process may use (os.availableParallelism()). */
  cores: number;
  /** Memory available to new allocations now (os.freemem(), or the cgroup's limit less its use when lower), bytes. */
  availableBytes: number;
  workerBytes?: number;
  reserveBytes?: number;
}

export interface SimWorkerBudget {
  workers: number;
  /** Which bound set the count: the cores, or the memory (never below one worker). */
  limitedBy: 'cores' | 'memory';
  /** Workers the memory alone would allow. */
  memoryWorkers: number;
}

/** min(cores, ⌊(available − reserve) / per-worker⌋), at least 1. */
export function simWorkerBudget(o: SimWorkerBudgetInput): SimWorkerBudget {
  const cores = Math.max(1, Math.floor(o.cores));
  const per = o.workerBytes ?? SIM_WORKER_RESIDENT_BYTES;
  const reserve = o.reserveBytes ?? MAIN_PROCESS_RESERVE_BYTES;
  const memoryWorkers = Math.max(0, Math.floor((o.availableBytes - reserve) / per));
  const workers = Math.max(1, Math.min(cores, memoryWorkers));
  return { workers, limitedBy: memoryWorkers < cores ? 'memory' : 'cores', memoryWorkers };
}
