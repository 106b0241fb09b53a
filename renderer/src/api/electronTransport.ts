import type { MotionbenchBridge } from '../../../src/api/contract';
import type { ApiTransport } from './transport';

/** The preload's `window.motionbench` bridge: always connected while the window lives. */
export function createElectronTransport(bridge: MotionbenchBridge): ApiTransport {
  return {
    kind: 'electron',
    invoke: (method, params) => bridge.invoke(method, params),
    onStatus(listener) {
      listener('connected');
      return () => {};
    },
    close() {},
  };
}
