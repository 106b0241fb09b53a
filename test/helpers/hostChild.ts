// `node --import tsx test/helpers/hostChild.ts`: the loopback host (startHostServer, a stub
// renderer) in its own process, for tests that measure how fast it answers while it works, from a
// client process that is not the host. Prints {"port", "token"} once listening. A line "stats" on
// stdin prints its event-loop delay since the previous "stats" ({"loopDelayMaxMs", "p99Ms"}).
// SIGTERM closes it. The environment variable MB_HOST_MODEL names the robot model (default: our G1);
// MB_HOST_NO_RUNNER_ESTOP=1 gives the services no runner e-stop socket (a negative control).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startHostServer } from '../../src/services/host/hostServer';

const rendererDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-host-child-'));
fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html><title>stub</title>');
// MB_HOST_MODEL: the robot model the services start with (default: our G1).
const modelFile = process.env.MB_HOST_MODEL;
const server = await startHostServer({
  port: 0,
  rendererDir,
  ...(modelFile && { modelFile }),
  ...(process.env.MB_HOST_NO_RUNNER_ESTOP === '1' && { runnerEstopSocket: null }),
});
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
process.stdout.write(`${JSON.stringify({ port: server.port, token: server.token })}\n`);

let buf = '';
process.stdin.on('data', (d: Buffer) => {
  buf += d.toString();
  for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
    const line = buf.slice(0, i).trim();
    buf = buf.slice(i + 1);
    if (line === 'stats') {
      process.stdout.write(
        `${JSON.stringify({ loopDelayMaxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 })}\n`,
      );
      delay.reset();
    }
  }
});

process.once('SIGTERM', () => {
  void server.close().finally(() => {
    fs.rmSync(rendererDir, { recursive: true, force: true });
    process.exit(0);
  });
});
