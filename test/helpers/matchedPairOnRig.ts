import {
  runMatchedPair,
  type MatchedPairRequest,
  type MatchedPairResult,
  type TrialProgressEvent,
} from '../../src/services/trial';
import { resettingOperator } from './emulatorOperator';
import type { EmulatorProcess } from './robotEmulatorProcess';

/** What a whole-system test holds of a matched pair's rig: store, robot link, interlock, simulator, profile. */
export type PairRig = Pick<MatchedPairRequest, 'store' | 'link' | 'interlock' | 'sim' | 'profile'>;

export interface PairRun extends Pick<MatchedPairRequest, 'workload' | 'operator'> {
  trials: number;
  /** Every progress event, in order, when given. */
  events?: TrialProgressEvent[];
  /** Printed before each refusal's reasons (which pair of the test refused). */
  label?: string;
}

/**
 * Runs an admitted pair's matched trials on the test's rig, naming the pair by its 12-character
 * prefix as an operator does on the command line; each refusal is printed with its reasons, so a
 * failing run says why in the test log.
 */
export function runPairOnRig(rig: PairRig, pair: { pairId: string }, run: PairRun): Promise<MatchedPairResult> {
  return runMatchedPair({
    ...rig,
    pairId: pair.pairId.slice(0, 12),
    trials: run.trials,
    workload: run.workload,
    operator: run.operator,
    onProgress: (e) => {
      run.events?.push(e);
      if (e.type === 'refusal') console.log(`${run.label ?? ''}refusal: ${e.reasons.map((x) => x.message).join('; ')}`);
    },
  });
}

/**
 * The pair's trials on the robot emulator, with the test operator who puts the robot back on its
 * feet when asked (resettingOperator): the result, every progress event and the resets done.
 */
export async function runPairOnEmulator(
  emu: EmulatorProcess,
  rig: PairRig,
  pair: { pairId: string },
  run: Pick<PairRun, 'trials' | 'workload'>,
): Promise<{ r: MatchedPairResult; events: TrialProgressEvent[]; resets: string[] }> {
  const events: TrialProgressEvent[] = [];
  const resets: string[] = [];
  const r = await runPairOnRig(rig, pair, { ...run, operator: resettingOperator(emu, resets), events });
  return { r, events, resets };
}
