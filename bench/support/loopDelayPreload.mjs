// `node --import bench/support/loopDelayPreload.mjs …`: measures the main thread's event-loop
// delay of the process it is loaded into (perf_hooks.monitorEventLoopDelay, 1 ms resolution), for
// benches that run a real child process (the console host) and must not depend on that process's
// own code, so the same measurement runs against an older commit. Worker threads are ignored.
//
// SIGUSR2 writes the histogram since the previous SIGUSR2 (or start) to
// $MB_LOOP_DELAY_DIR/<pid>-<n>.json and resets it: {count, p50Ms, p90Ms, p99Ms, p999Ms, maxMs,
// over20Ms, over50Ms, over100Ms} where overXMs counts 100 ms windows whose largest delay exceeded X.
// With $MB_CPU_PROF_DIR set, the first SIGUSR2 also starts the V8 CPU profiler and the second
// writes <pid>.cpuprofile there (the measured window only, for chrome://inspect or a script).
import fs from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import process from 'node:process';
import { setInterval } from 'node:timers';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.MB_LOOP_DELAY_DIR;
if (isMainThread && dir) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  const window = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  window.enable();
  let windows = { over20Ms: 0, over50Ms: 0, over100Ms: 0, count: 0 };
  const t = setInterval(() => {
    const m = window.max / 1e6;
    windows.count++;
    if (m > 20) windows.over20Ms++;
    if (m > 50) windows.over50Ms++;
    if (m > 100) windows.over100Ms++;
    window.reset();
  }, 100);
  t.unref();
  let n = 0;
  const profDir = process.env.MB_CPU_PROF_DIR;
  const session = profDir ? new Session() : null;
  if (session) {
    session.connect();
    session.post('Profiler.enable');
  }
  process.on('SIGUSR2', () => {
    if (session && n === 0) session.post('Profiler.start');
    else if (session && n === 1)
      session.post('Profiler.stop', (err, r) => {
        if (!err) fs.writeFileSync(path.join(profDir, `${process.pid}.cpuprofile`), JSON.stringify(r.profile));
      });
    const ms = (v) => Math.round((v / 1e6) * 100) / 100;
    const doc = {
      pid: process.pid,
      argv: process.argv.slice(1),
      count: h.count,
      p50Ms: ms(h.percentile(50)),
      p90Ms: ms(h.percentile(90)),
      p99Ms: ms(h.percentile(99)),
      p999Ms: ms(h.percentile(99.9)),
      maxMs: ms(h.max),
      windows100Ms: windows,
    };
    fs.writeFileSync(path.join(dir, `${process.pid}-${n++}.json`), JSON.stringify(doc));
    h.reset();
    windows = { over20Ms: 0, over50Ms: 0, over100Ms: 0, count: 0 };
  });
}
