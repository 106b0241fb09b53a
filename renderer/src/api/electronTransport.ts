import type { ApiEvent, MotionbenchBridge } from '../../../src/api/contract';
import { deliverApiEvent } from './apiEvents';
import type { ApiTransport } from './transport';

/** The preload's `window.motionbench` bridge: always connected while the window lives. */
export function createElectronTransport(bridge: MotionbenchBridge): ApiTransport {
  const eventListeners = new Set<(e: ApiEvent) => void>();
  const off = bridge.onEvent((raw) => deliverApiEvent(raw, eventListeners));
  return {
    kind: 'electron',
    invoke: (method, params) => bridge.invoke(method, params),
    onStatus(listener) {
      listener('connected');
      return () => {};
    },
    onEvent(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    close() {
      off();
    },
  };
}
