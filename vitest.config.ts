import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Three projects, run one group after the other (sequence.groupOrder):
//   0 `unit`     — unit + integration tests, two files at a time or more (real MuJoCo/loopback where
//                  the test says so): vitest's default on 2 cores is one, which left a core idle while a
//                  file waited on a child process or the disk;
//   1 `e2e`      — drives the real console in Debian Chromium through `npm run host`, one file at a time;
//   2 `realtime` — tests that measure wall-clock behaviour of real processes: 500 Hz streams, trip
//                  times within 100 ms, e-stops, the robot emulator and matched trials. They run one
//                  file at a time on an otherwise idle machine, because a starved event loop (other
//                  test files on a 2-core machine) is exactly what they detect: under load they
//                  report real stalls as failures.
const REALTIME = [
  'test/integration/trialReliability.test.ts',
  'test/integration/trialResume.test.ts',
  'test/integration/calibrateCli.test.ts',
  'test/integration/matchedPairEndToEnd.test.ts',
  'test/integration/robotSensitivity.test.ts',
  'test/integration/policyMatchedTrial.test.ts',
  'test/integration/robotLinkClient.test.ts',
  'test/integration/ros2LowStateLink.test.ts',
  'test/integration/ros2HostileDefinitions.test.ts',
  'test/integration/hostileBridge.test.ts',
  'test/integration/bridgeCommandDecoding.test.ts',
  'test/integration/robotLinkSoak.test.ts',
  'test/integration/robotEmulator.test.ts',
  'test/integration/robotEmulatorPolicyLoad.test.ts',
  'test/integration/robotEmulatorCli.test.ts',
  'test/integration/g1DdsEmulator.test.ts',
  'test/integration/interlockPty.test.ts',
  'test/integration/interlockCli.test.ts',
  'test/integration/hostStopLatency.test.ts',
  'test/integration/hostStopHostile.test.ts',
  'test/integration/policyOpenOffLoop.test.ts',
  'test/integration/policyCheckApi.test.ts',
  'test/integration/interlockKeeper.test.ts',
  'test/integration/g1Runner.test.ts',
  'test/integration/g1RunnerInterlockEstop.test.ts',
  'test/integration/g1RunnerMatchedPair.test.ts',
  'test/integration/g1RunnerStandingPolicy.test.ts',
  'test/integration/g1RunnerMotionSwitcher.test.ts',
  'test/integration/g1RunnerEmulatedG1.test.ts',
  'test/integration/hostRunnerInterlockEstop.test.ts',
];

/** Each project first rebuilds the entry bundles whose sources changed (the processes and worker threads it starts run them). */
const ENTRY_BUNDLES = 'test/helpers/entryBundlesSetup.ts';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
          exclude: REALTIME,
          globalSetup: [ENTRY_BUNDLES],
          maxWorkers: Math.max(2, availableParallelism() - 1),
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          // The renderer built once, one browser for every file, the fixtures files share.
          globalSetup: [ENTRY_BUNDLES, 'test/e2e/projectSetup.ts'],
          environment: 'node',
          testTimeout: 180_000,
          hookTimeout: 180_000,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'realtime',
          include: REALTIME,
          globalSetup: [ENTRY_BUNDLES],
          environment: 'node',
          testTimeout: 240_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
