import type { MotionbenchBridge } from '../../src/api/contract';
import type { MotionbenchDevHooks, MotionbenchTestHooks } from './testing/testHooks';

declare global {
  /** True in the end-to-end build only (electron.vite.config.ts): install the test hooks. */
  const __MOTIONBENCH_TEST_HOOKS__: boolean;

  interface Window {
    /** Present in the Electron app only (main/preload.ts). */
    motionbench?: MotionbenchBridge;
    /** Read-only state for end-to-end tests (renderer/src/testing/testHooks.ts; end-to-end build only). */
    __motionbench?: MotionbenchTestHooks;
    /** Feeds executed runs into the overlay; only with `dev=1` in the page URL. */
    __motionbenchDev?: MotionbenchDevHooks;
  }
}

export {};
