import { contextBridge, ipcRenderer } from 'electron';
import type { MotionbenchBridge } from '../src/api/contract';
import { IPC_INVOKE_CHANNEL } from '../src/api/ipcChannel';

// Sandboxed preload (CommonJS, see electron.vite.config.ts). Exposes exactly one function;
// the main process validates every call against the contract before it reaches a handler.

const bridge: MotionbenchBridge = {
  invoke: (method, params) => ipcRenderer.invoke(IPC_INVOKE_CHANNEL, method, params),
};

contextBridge.exposeInMainWorld('motionbench', bridge);
