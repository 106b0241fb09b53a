import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, session, type IpcMainInvokeEvent, type WebContents } from 'electron';
import { MAX_MESSAGE_BYTES, type ApiOutcome } from '../src/api/contract';
import { IPC_EVENT_CHANNEL, IPC_INVOKE_CHANNEL } from '../src/api/ipcChannel';
import { createConsoleApi, type ConsoleApi } from '../src/services/console/consoleApiHandlers';
import type { EventClient } from '../src/services/console/eventHub';
import { installLastResort } from '../src/services/safety/lastResort';
import { APP_ORIGIN, registerAppScheme, serveRenderer } from './appProtocol';
import { keepDrawingProcessesLow } from './drawingPriority';

// Electron main process: one hardened window, the console API behind one IPC channel validated
// against the zod contract (in ConsoleApi.invoke), and the native "Open clip…" dialog.

const here = path.dirname(fileURLToPath(import.meta.url)); // out/main
const RENDERER_DIR = path.resolve(here, '../renderer');
const PRELOAD = path.resolve(here, '../preload/index.cjs');

registerAppScheme();

function createApi(): ConsoleApi {
  const api: ConsoleApi = createConsoleApi({
    transport: 'electron',
    modelFile: path.join(app.getAppPath(), 'assets', 'g1', 'g1.xml'),
    appVersion: app.getVersion(),
    overrides: {
      'clips.openDialog': async ({ fps }) => {
        const owner = BrowserWindow.getFocusedWindow();
        const options: Electron.OpenDialogOptions = {
          title: 'Open clip',
          properties: ['openFile'],
          filters: [
            { name: 'Motion clips (CSV, NPZ, JSON)', extensions: ['csv', 'npz', 'json'] },
            { name: 'All files', extensions: ['*'] },
          ],
        };
        const r = owner ? await dialog.showOpenDialog(owner, options) : await dialog.showOpenDialog(options);
        const file = r.filePaths[0];
        if (r.canceled || !file) return { cancelled: true };
        return { cancelled: false, clip: await api.loadClip(file, fps) };
      },
    },
  });
  return api;
}

/** Only our own page may call the API. */
const fromOurPage = (event: IpcMainInvokeEvent): boolean => {
  const url = event.senderFrame?.url;
  return typeof url === 'string' && url.startsWith(`${APP_ORIGIN}/`);
};

/** Rough size of a structured-clone payload, to refuse oversized requests like the host does. */
function approximateBytes(value: unknown): number {
  try {
    return JSON.stringify(value ?? null).length;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** One push client per page (webContents): its pushes (live.frames, sim.end, …) go back on IPC_EVENT_CHANNEL. */
const clients = new WeakMap<WebContents, EventClient>();
function clientOf(api: ConsoleApi, wc: WebContents): EventClient {
  let c = clients.get(wc);
  if (c && !c.detached) return c;
  c = api.attachClient({
    send: (event) => {
      if (!wc.isDestroyed()) wc.send(IPC_EVENT_CHANNEL, event);
    },
  });
  clients.set(wc, c);
  const client = c;
  // A reload or a closed window: the page's runs stop (an unwatched simulation only holds the backend).
  wc.once('destroyed', () => client.detach());
  wc.once('did-navigate', () => client.detach()); // main frame only, never in-page
  wc.once('render-process-gone', () => client.detach());
  return client;
}

function registerIpc(api: ConsoleApi): void {
  ipcMain.handle(IPC_INVOKE_CHANNEL, async (event, method: unknown, params: unknown): Promise<ApiOutcome> => {
    if (!fromOurPage(event))
      return { ok: false, error: { code: 'bad_request', message: 'caller is not the console page' } };
    const size = approximateBytes(params);
    if (size > MAX_MESSAGE_BYTES) {
      return {
        ok: false,
        error: {
          code: 'too_large',
          message: `request of ~${size} bytes exceeds the ${MAX_MESSAGE_BYTES}-byte limit`,
          field: 'params',
        },
      };
    }
    return api.invoke(method, params, { client: clientOf(api, event.sender) });
  });
}

function hardenSessions(): void {
  session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);
}

app.on('web-contents-created', (_event, contents) => {
  contents.on('will-navigate', (e) => e.preventDefault());
  contents.on('will-redirect', (e) => e.preventDefault());
  contents.on('will-attach-webview', (e) => e.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
});

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1600,
    height: 1000,
    minWidth: 1100,
    minHeight: 700,
    backgroundColor: '#0b0e12',
    title: 'MotionBench Console',
    show: false,
    webPreferences: {
      preload: PRELOAD,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      webviewTag: false,
      spellcheck: false,
    },
  });
  win.once('ready-to-show', () => win.show());
  void win.loadURL(`${APP_ORIGIN}/index.html`);
  return win;
}

app.enableSandbox();

// An error nobody caught stops every robot link before the process dies (DESIGN §6).
installLastResort();

void app.whenReady().then(() => {
  hardenSessions();
  serveRenderer(RENDERER_DIR);
  registerIpc(createApi());
  createWindow();
  keepDrawingProcessesLow();
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});
