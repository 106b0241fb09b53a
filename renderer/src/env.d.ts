import type { MotionbenchBridge } from '../../src/api/contract';
import type { MotionbenchTestHooks } from './testing/testHooks';

declare global {
  interface Window {
    /** Present in the Electron app only (main/preload.ts). */
    motionbench?: MotionbenchBridge;
    /** Read-only state for end-to-end tests (renderer/src/testing/testHooks.ts). */
    __motionbench?: MotionbenchTestHooks;
  }
}

export {};
