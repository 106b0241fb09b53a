import { getPriority, setPriority } from 'node:os';

// Setup of the `realtime` project (vitest.config.ts): when scripts/run-tests.mjs runs it beside
// the other projects, it asks for a higher priority in MOTIONBENCH_REALTIME_NICE. The test worker
// takes it, and every process and thread it starts afterwards (robot emulator, console host,
// runner, interlock box) inherits it. Asked for and not granted is an error: running beside the
// other tests without it would measure the load, not the code.
const asked = process.env.MOTIONBENCH_REALTIME_NICE;
if (asked !== undefined && asked !== '') {
  const nice = Number(asked);
  if (!Number.isInteger(nice) || nice < -20 || nice > 19)
    throw new Error(`MOTIONBENCH_REALTIME_NICE must be an integer in -20..19, got "${asked}"`);
  if (getPriority(0) !== nice) setPriority(0, nice);
}
