import type { ApiParams, SensitivityDocument } from '../../api/contract';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { runSensitivity, sensitivityJson } from '../analysis/sensitivityRunner';
import { EmbeddedSimulator } from '../sim/embeddedSimulator';
import { ApiFailure, FieldError } from './apiFailure';
import { withReadOnlyCampaign } from './campaignOpen';

// analysis.sensitivity (src/api/analysisContract.ts): one pair's start-state sensitivity in the
// embedded simulator, the document `motionbench sensitivity --json` prints (docs/ANALYSIS.md §6).
// The runs go to a simulator of its own whose MuJoCo steps in worker threads (below this loop's
// priority: simWorker.ts); this loop only hands out runs and adds up Grams. It takes the machine's cores
// for its ~10–60 s, so it is one at a time and refused while a qualification or a robot trial
// runs, and those are refused while it runs (busyWith): a robot's heartbeats never share the CPUs
// with a batch the operator started by accident.

/** Simulator workers of a sensitivity run (the runs are short and independent: the machine's 2 cores). */
const SENSITIVITY_WORKERS = 2;

export interface SensitivityJobsOptions {
  modelFile: string;
  profile: () => RobotProfile;
  /** What else holds the machine (a running qualification, a trial, a capture), or null. */
  otherWork: () => string | null;
  log?: (line: string) => void;
}

export class SensitivityJobs {
  private running: { pairId: string } | null = null;
  private closed = false;
  private sim: EmbeddedSimulator | null = null;

  constructor(private readonly o: SensitivityJobsOptions) {}

  /** A sentence for what is running here, or null: the other jobs' refusal. */
  busyWith(): string | null {
    return this.running ? `a start-state sensitivity of pair ${this.running.pairId} is running` : null;
  }

  async run(p: ApiParams<'analysis.sensitivity'>): Promise<SensitivityDocument> {
    if (this.closed) throw new ApiFailure('conflict', 'the console services are shutting down');
    const busy = this.busyWith() ?? this.o.otherWork();
    if (busy) throw new ApiFailure('conflict', `${busy}: wait for its end before a sensitivity run`);
    this.running = { pairId: p.pairId };
    const sim = new EmbeddedSimulator({
      modelFile: this.o.modelFile,
      workers: SENSITIVITY_WORKERS,
      id: 'sensitivity-sim',
      name: 'embedded simulator (sensitivity)',
    });
    this.sim = sim;
    try {
      await sim.ready();
      const profile = this.o.profile();
      return await withReadOnlyCampaign(p.campaignDir, async (store) => {
        try {
          const r = await runSensitivity(store, sim, profile, {
            pairId: p.pairId,
            scales: p.scales ?? [1, 3, 10],
            ...(p.seconds !== undefined && { seconds: p.seconds }),
            ...(p.heldOut !== undefined && { heldOut: p.heldOut }),
            ...(p.seed !== undefined && { seed: p.seed }),
            progress: (line) => this.o.log?.(`sensitivity: ${line}`),
          });
          return sensitivityJson(r);
        } catch (err) {
          // The runner's refusals are about the pair (unknown, ambiguous, no calibration, no binding).
          if (err instanceof RangeError) throw new FieldError('params.pairId', err);
          throw err;
        }
      });
    } finally {
      this.sim = null;
      this.running = null;
      await sim.close();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.sim?.close();
  }
}
