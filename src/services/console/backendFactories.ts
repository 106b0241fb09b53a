import type { BackendFactories } from './connectionRegistry';

// ============================================================================================
// HOOK: the backend implementations behind the Connections panel.
//
// The console's ConnectionRegistry (connectionRegistry.ts) lists the embedded simulator and any
// ws:// simulator the operator adds, and creates each entry's Backend on first use through the
// factories returned here. Both transports (the loopback host and Electron main) start from these
// defaults; tests inject their own through createConsoleApi({ backends }) or
// startHostServer({ backends }).
//
//   embeddedSimulator — the MuJoCo worker-pool Backend of src/services/sim/embeddedSimulator.ts
//   remoteSimulator   — the g1-bridge/1 client of src/services/bridge/bridgeClientBackend.ts
//   robot             — the same client with the robot link limits (connectRobot: stale 50 ms, lost 100 ms)
//   g1Dds             — "G1 over DDS": a `motionbench g1-runner` child process on a free loopback
//                       port (g1DdsRunnerBackend.ts), then the robot client on its URL
//
// The g1-bridge/1 client declares a robot link (RobotBackend, src/domain/backend/backend.ts: stop,
// damp and link figures whoever holds the lease); the registry reads its latency through that
// declaration, and a real-robot trial refuses a backend that does not declare one.
//
// Both are imported on first use (dynamic import), so starting the console loads neither MuJoCo
// nor the bridge client until the operator connects an entry. A factory left out here makes its
// entries show presence "disconnected" with the problem `backend_unavailable`, and connecting
// them is refused with code `unsupported`.
// ============================================================================================

export function defaultBackendFactories(): BackendFactories {
  return {
    embeddedSimulator: async ({ modelFile }) => {
      const { EmbeddedSimulator } = await import('../sim/embeddedSimulator');
      return new EmbeddedSimulator({ modelFile, name: 'Embedded simulator (MuJoCo)' });
    },
    remoteSimulator: async ({ id, url }) => {
      const { connectRemoteSimulator } = await import('../bridge/bridgeClientBackend');
      return connectRemoteSimulator({ id, url });
    },
    robot: async ({ id, url }) => {
      const { connectRobot } = await import('../bridge/bridgeClientBackend');
      return connectRobot({ id, url });
    },
    g1Dds: async (ctx) => {
      const { startG1DdsBackend } = await import('./g1DdsRunnerBackend');
      return startG1DdsBackend(ctx);
    },
  };
}
