// Kept apart from contract.ts so the sandboxed preload bundles no zod, only this string.

/** Electron IPC channel of the console API (ipcRenderer.invoke / ipcMain.handle). */
export const IPC_INVOKE_CHANNEL = 'motionbench:invoke';

/** Electron channel of server→client pushes (webContents.send / ipcRenderer.on). */
export const IPC_EVENT_CHANNEL = 'motionbench:event';
