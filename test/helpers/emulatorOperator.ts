import type { OperatorPrompts } from '../../src/services/trial/trialTypes';
import type { EmulatorProcess } from './robotEmulatorProcess';

/**
 * The test operator of a matched pair against the robot emulator: confirms every trial and, when
 * asked for a reset, puts the robot back at its standing start pose (the emulator's human_reset)
 * and answers once the emulator has applied it, noting each reset in `resets`. A refused reset is
 * noted with the emulator's reason; the console's pose check then refuses the reset too.
 */
export function resettingOperator(emu: EmulatorProcess, resets: string[]): OperatorPrompts {
  return {
    confirmTrial: async () => true,
    confirmReset: async (info) => {
      const a = await emu.control({ action: 'human_reset' });
      resets.push(`trial ${info.trialIndex} after ${info.afterOutcome}${a.ok ? '' : ` (refused: ${a.message})`}`);
      return `robot put back on its feet by the test operator before trial ${info.trialIndex + 1}`;
    },
  };
}
