import { G1_BRIDGE_CONTRACT, G1_BRIDGE_TOPICS } from '../../domain/bridge/g1BridgeContract';
import type { Backend } from '../../domain/backend/backend';
import { startBridgeServer } from '../../services/bridge/bridgeServer';
import { DEFAULT_MODEL_FILE } from '../../services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../services/sim/embeddedSimulator';
import { defineCommand, hostOption, numberOption, portOption, warnBeyondLoopback, workersOption } from '../cliOptions';
import { printJson, type CliIo, type Command, untilSignal } from '../cliSupport';

const usage = `usage: motionbench serve-sim [--port N] [--host 127.0.0.1] [--model <mjcf>] [--workers N] [--speed X] [--json]
  Serves the embedded MuJoCo simulator on the Foxglove WebSocket protocol (foxglove.websocket.v1,
  JSON) under the ${G1_BRIDGE_CONTRACT} contract (docs/G1_BRIDGE.md): ${G1_BRIDGE_TOPICS.lowstate}, ${G1_BRIDGE_TOPICS.rootState} and
  ${G1_BRIDGE_TOPICS.wbcStatus} out; ${G1_BRIDGE_TOPICS.command} (prepare, start, stop, damp, hold, reset) in. One client
  controls at a time; any number may watch (Foxglove, Lichtblick, another console).
  --port N      TCP port (default 8765; 0 = any free port)
  --host H      interface (default 127.0.0.1; anything else exposes the simulator to the network)
  --model F     MJCF scene (default our G1 in assets/)
  --workers N   simulator worker threads (default 1: one episode runs at a time)
  --speed X     stream pacing: 1 = real time (default), 0 = as fast as the simulator runs
  --json        print {url, host, port, contract, topics, model} as JSON once listening
Prints the ws:// URL once listening; Ctrl+C (SIGINT) or SIGTERM stops it cleanly.`;

export interface ServeSimDeps {
  /** The simulator behind the server (default: the embedded MuJoCo simulator). */
  createBackend(options: { modelFile: string; workers: number }): Promise<Backend>;
  /** Resolves when the server should stop (default: SIGINT or SIGTERM). */
  untilStopped(io: CliIo): Promise<string>;
}

async function createEmbedded(options: { modelFile: string; workers: number }): Promise<Backend> {
  const sim = new EmbeddedSimulator({
    modelFile: options.modelFile,
    workers: options.workers,
    id: 'serve-sim',
    name: 'MotionBench embedded MuJoCo simulator',
  });
  try {
    await sim.ready();
  } catch (err) {
    await sim.close().catch(() => {});
    throw err;
  }
  return sim;
}

export function makeServeSimCommand(
  deps: ServeSimDeps = { createBackend: createEmbedded, untilStopped: untilSignal },
): Command {
  return defineCommand({
    name: 'serve-sim',
    summary: `serve the embedded simulator over ${G1_BRIDGE_CONTRACT} (Foxglove WebSocket)`,
    usage,
    strings: ['port', 'host', 'model', 'workers', 'speed'],
    flags: ['json'],
    async run(values, io) {
      const port = portOption(values.port) ?? 8765;
      const workers = workersOption(values.workers) ?? 1;
      const speed =
        numberOption(
          values.speed,
          'speed',
          (v) => v >= 0 && v <= 1000,
          'a pacing factor in [0, 1000] (1 = real time, 0 = as fast as possible)',
        ) ?? 1;
      const host = hostOption(values.host);
      const modelFile = values.model ?? DEFAULT_MODEL_FILE;

      io.stderr(`serve-sim: loading ${modelFile} in ${workers} worker${workers === 1 ? '' : 's'}…\n`);
      const backend = await deps.createBackend({ modelFile, workers });
      let server;
      try {
        server = await startBridgeServer({ backend, host, port, speed, log: (line) => io.stderr(`${line}\n`) });
      } catch (err) {
        await backend.close().catch(() => {});
        throw err;
      }
      const topics = [
        G1_BRIDGE_TOPICS.lowstate,
        ...(backend.capabilities.globalRootPosition ? [G1_BRIDGE_TOPICS.rootState] : []),
        G1_BRIDGE_TOPICS.wbcStatus,
      ];
      if (values.json) {
        printJson(io, {
          url: server.url,
          host: server.host,
          port: server.port,
          contract: G1_BRIDGE_CONTRACT,
          topics,
          command_topic: G1_BRIDGE_TOPICS.command,
          model: modelFile,
          workers,
          speed,
        });
      } else {
        io.stdout(`${G1_BRIDGE_CONTRACT} simulator: ${server.url}\n`);
      }
      warnBeyondLoopback(io, 'serve-sim', host);
      io.stderr('Press Ctrl+C to stop.\n');
      const why = await deps.untilStopped(io);
      io.stderr(`serve-sim: ${why}: stopping (any running episode ends aborted_by_operator)…\n`);
      const stats = server.stats();
      await server.close();
      io.stderr(
        `serve-sim: stopped; published ${stats.published.lowstate} lowstate, ${stats.published.rootState} root_state; commands ${stats.commands.accepted} accepted, ${stats.commands.refused} refused, ${stats.commands.malformed} malformed\n`,
      );
      return 0;
    },
  });
}

export const serveSimCommand: Command = makeServeSimCommand();
