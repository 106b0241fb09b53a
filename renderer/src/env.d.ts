import type { MotionbenchBridge } from '../../src/api/contract';
import type { MotionbenchDevHooks, MotionbenchTestHooks } from './testing/testHooks';

declare global {
  interface Window {
    /** Present in the Electron app only (main/preload.ts). */
    motionbench?: MotionbenchBridge;
    /** Read-only state for end-to-end tests (renderer/src/testing/testHooks.ts). */
    __motionbench?: MotionbenchTestHooks;
    /** Feeds executed runs into the overlay; only with `dev=1` in the page URL. */
    __motionbenchDev?: MotionbenchDevHooks;
  }
}

export {};
