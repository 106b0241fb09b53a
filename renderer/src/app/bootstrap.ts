import { useConnectionStore } from '../api/connectionStore';
import { connectConsole, type ConsoleClient } from '../api/consoleClient';
import { ApiCallError } from '../api/consoleClient';
import { handleApiEvent } from '../api/pushRouter';
import { signUpFeaturePushes } from './featurePushes';
import { useClipStore } from '../clips/clipStore';
import { resetPlayhead } from '../playback/playback';
import { setRobotProfile, useRobotStore } from '../robot/robotStore';
import { reconcileSimRuns } from '../sim/simPushes';
import { preloadProfileMeshes } from '../viewport/meshCache';
import { useMeshStore } from '../viewport/meshStore';

// Start-up: pick the transport, then on every (re)connection fetch app info and, once, the
// robot model the viewport draws.

async function loadBasics(client: ConsoleClient): Promise<void> {
  try {
    const appInfo = await client.call('app.info', {});
    useConnectionStore.setState({ appInfo });
    if (!useRobotStore.getState().profile) {
      const profile = await client.call('robot.getProfile', {});
      setRobotProfile(profile);
      resetPlayhead();
      preloadProfileMeshes(profile, client);
    } else if (useMeshStore.getState().failed.length > 0) {
      preloadProfileMeshes(useRobotStore.getState().profile!, client); // retry after a lost link
    }
  } catch (err) {
    const error = err instanceof ApiCallError ? err.error : { code: 'internal' as const, message: String(err) };
    useClipStore.setState({ error: { ...error, message: `robot model: ${error.message}` } });
  }
}

export function bootstrapConsole(): () => void {
  const client = connectConsole();
  if (!client) {
    useConnectionStore.setState({
      status: 'unavailable',
      detail: 'open the URL printed by `npm run host` (it carries the access token), or start the desktop app',
    });
    return () => {};
  }
  useConnectionStore.setState({ client, transport: client.transport.kind });
  const offPushes = signUpFeaturePushes();
  const offEvents = client.transport.onEvent(handleApiEvent);
  let wasConnected = false;
  const off = client.transport.onStatus((status, detail) => {
    useConnectionStore.setState({ status, detail: detail ?? null });
    if (status === 'connected') {
      void loadBasics(client);
      if (wasConnected) void reconcileSimRuns(); // runs that went on while the link was down
      wasConnected = true;
    }
  });
  return () => {
    off();
    offEvents();
    offPushes();
    client.transport.close();
  };
}
