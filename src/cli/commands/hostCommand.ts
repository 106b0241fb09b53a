import { startHostServer } from '../../services/host/hostServer';
import { defineCommand, portOption } from '../cliOptions';
import { untilSignal } from '../cliSupport';

const usage = `usage: motionbench host [--port N] [--host 127.0.0.1] [--model <mjcf>]
  Serves the console (the same renderer and API as the Electron app) on a loopback address for
  a browser. The printed URL carries a random per-run token; connections without it, or from
  another origin, are refused. Binding beyond loopback needs an explicit --host.`;

export const hostCommand = defineCommand({
  name: 'host',
  summary: 'serve the console on 127.0.0.1 for a browser (token-guarded)',
  usage,
  strings: ['port', 'host', 'model'],
  async run(values, io) {
    const port = portOption(values.port) ?? 5180;
    const server = await startHostServer({ port, host: values.host ?? '127.0.0.1', modelFile: values.model });
    io.stdout(`MotionBench Console: ${server.url}\n`);
    io.stderr('Press Ctrl+C to stop.\n');
    await untilSignal(io);
    await server.close();
    return 0;
  },
});
