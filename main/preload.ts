import { contextBridge, ipcRenderer } from 'electron';
import type { MotionbenchBridge } from '../src/api/contract';
import { IPC_EVENT_CHANNEL, IPC_INVOKE_CHANNEL } from '../src/api/ipcChannel';

// Sandboxed preload (CommonJS, see electron.vite.config.ts). Exposes two functions: invoke (the
// main process validates every call against the contract before it reaches a handler) and
// onEvent (server→client pushes; the renderer validates each against the contract's schema).

const bridge: MotionbenchBridge = {
  invoke: (method, params) => ipcRenderer.invoke(IPC_INVOKE_CHANNEL, method, params),
  onEvent: (listener) => {
    const handler = (_e: Electron.IpcRendererEvent, event: unknown): void => listener(event);
    ipcRenderer.on(IPC_EVENT_CHANNEL, handler);
    return () => {
      ipcRenderer.removeListener(IPC_EVENT_CHANNEL, handler);
    };
  },
};

contextBridge.exposeInMainWorld('motionbench', bridge);
