// The default number of simulator workers: $MOTIONBENCH_SIM_WORKERS when set, else what this
// machine's cores and available memory allow now (src/domain/sim/simWorkerBudget.ts).
import os from 'node:os';
import { simWorkerBudget, type SimWorkerBudget } from '../../domain/sim/simWorkerBudget';

/** Memory available now: the system's, or the cgroup's room when the process is constrained below it. */
function availableBytes(): number {
  const free = os.freemem();
  const limit = process.constrainedMemory?.() ?? 0;
  if (limit > 0 && limit < os.totalmem()) return Math.min(free, Math.max(0, limit - process.memoryUsage.rss()));
  return free;
}

/** The machine's budget (ignores the environment variable). */
export function machineSimWorkerBudget(): SimWorkerBudget {
  return simWorkerBudget({ cores: os.availableParallelism(), availableBytes: availableBytes() });
}

export function defaultSimWorkers(): number {
  const env = Number(process.env.MOTIONBENCH_SIM_WORKERS);
  return env > 0 ? env : machineSimWorkerBudget().workers;
}
