import { connectRobot } from '../bridge/bridgeClientBackend';
import { startG1RunnerProcess } from '../g1Runner/g1RunnerProcess';
import type { G1DdsBackend, G1DdsContext } from './connectionRegistry';

// "G1 over DDS": the services start the runner for the interface and domain, then connect to it
// exactly as to a runner added by URL (the robot link limits, trials, calibration). Closing the
// backend closes the link first, then stops the runner (SIGTERM: it damps, then exits). The
// runner listens on the console's interlock e-stop socket when the context names one.

export async function startG1DdsBackend(ctx: G1DdsContext): Promise<G1DdsBackend> {
  const runner = await startG1RunnerProcess(ctx);
  const backend = connectRobot({ id: ctx.id, url: runner.url });
  const closeLink = backend.close.bind(backend);
  backend.close = async () => {
    try {
      await closeLink();
    } finally {
      await runner.stop();
    }
  };
  return { backend, runnerUrl: runner.url };
}
