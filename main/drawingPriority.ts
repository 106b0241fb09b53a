import os from 'node:os';
import { app } from 'electron';

// The console's drawing processes — the renderer (React, three.js) and the GPU process (software GL
// on most lab PCs: SwiftShader takes up to a core and a half while the robot streams) — run at a
// lower priority (nice 10) than everything that keeps the safety chain's time: the services' main
// thread (nice −5), the interlock keeper and box (−10), the robot link. On a loaded 2-core machine
// the scheduler then draws a frame later rather than let an interlock status or a heartbeat wait
// (docs/INTERLOCK.md §3a). These processes share the console's session, where nice decides; the
// keeper and the box have sessions of their own (src/services/os/threadPriority.ts: autogroups).
// Lowering a priority needs no privilege. Chromium restarts a crashed GPU
// process, so the priorities are checked again every few seconds.

const DRAWING_NICE = 10;
const RECHECK_MS = 5_000;

function lowerDrawingProcesses(): void {
  for (const m of app.getAppMetrics()) {
    if (m.type !== 'GPU' && m.type !== 'Tab') continue;
    try {
      if (os.getPriority(m.pid) < DRAWING_NICE) os.setPriority(m.pid, DRAWING_NICE);
    } catch {
      // the process has just gone, or the OS refuses: it keeps its priority
    }
  }
}

/** Starts lowering the renderer and GPU processes' priority; call once the app is ready. */
export function keepDrawingProcessesLow(): void {
  lowerDrawingProcesses();
  app.on('web-contents-created', (_e, contents) => contents.on('did-finish-load', lowerDrawingProcesses));
  setInterval(lowerDrawingProcesses, RECHECK_MS).unref();
}
