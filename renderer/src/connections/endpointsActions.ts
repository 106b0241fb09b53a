import { checkBackendUrl } from '../../../src/api/connectionUrl';
import {
  afterClipProblem,
  ddsDomainIdProblem,
  ddsInterfaceNameProblem,
} from '../../../src/domain/g1Runner/g1DdsConnection';
import type { ApiError } from '../../../src/api/contract';
import { errorMessage } from '../api/apiErrors';
import { useConnectionStore } from '../api/connectionStore';
import { ApiCallError } from '../api/consoleClient';
import { useEndpointsStore } from './endpointsStore';

// The Connections panel's actions: connections.list polled at POLL_HZ while the console services
// are reachable, and adding, connecting, disconnecting and removing endpoints (each followed by a
// fresh list).

export const POLL_HZ = 2;

const apiError = (err: unknown): ApiError | null => (err instanceof ApiCallError ? err.error : null);

export async function refreshEndpoints(): Promise<void> {
  const client = useConnectionStore.getState().client;
  if (!client || useConnectionStore.getState().status !== 'connected') return;
  try {
    const entries = await client.call('connections.list', {});
    useEndpointsStore.setState({ entries, polledAtMs: Date.now(), pollError: null });
  } catch (err) {
    useEndpointsStore.setState({ pollError: errorMessage(err) });
  }
}

/** Polls connections.list at POLL_HZ (one request in flight at most). Returns a stop function. */
export function startEndpointsPolling(): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const tick = async (): Promise<void> => {
    const started = performance.now();
    await refreshEndpoints();
    if (stopped) return;
    timer = setTimeout(() => void tick(), Math.max(50, 1000 / POLL_HZ - (performance.now() - started)));
  };
  void tick();
  return () => {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
  };
}

async function act(key: string, action: string, run: () => Promise<unknown>): Promise<boolean> {
  const client = useConnectionStore.getState().client;
  if (!client) {
    useEndpointsStore.setState({ actionError: { action, message: 'not connected to the console services' } });
    return false;
  }
  useEndpointsStore.setState((s) => ({ busy: [...s.busy, key], actionError: null }));
  try {
    await run();
    return true;
  } catch (err) {
    const e = apiError(err);
    useEndpointsStore.setState({
      actionError: {
        action,
        message: e ? e.message.replace(/^connections\.add(G1Dds)?: params\.\w+: /, '') : errorMessage(err),
      },
    });
    return false;
  } finally {
    useEndpointsStore.setState((s) => ({ busy: s.busy.filter((b) => b !== key) }));
    await refreshEndpoints();
  }
}

/** Why the URL field cannot be added, or null when it can (the services check it again). */
export function urlProblem(text: string): string | null {
  if (text.trim() === '') return null; // nothing typed yet: no complaint
  const r = checkBackendUrl(text);
  return r.ok ? null : r.reason;
}

export async function addEndpoint(): Promise<void> {
  const text = useEndpointsStore.getState().urlText;
  const check = checkBackendUrl(text);
  if (!check.ok) {
    useEndpointsStore.setState({ actionError: { action: 'add', message: check.reason } });
    return;
  }
  const kind = useEndpointsStore.getState().addKind;
  const ok = await act('add', 'add', () =>
    useConnectionStore
      .getState()
      .client!.call('connections.add', { url: check.url, ...(kind === 'robot' && { kind }) }),
  );
  if (ok) useEndpointsStore.setState({ urlText: '' });
}

/** Why the G1-over-DDS fields cannot be added, or null when they can (the services check them again). */
export function g1DdsProblem(
  interfaceText: string,
  domainText: string,
  onGantry: boolean,
  standing: { on: boolean; folder: string } = { on: false, folder: '' },
): {
  problem: string | null;
  /** The field the problem is about (marked invalid in the form). */
  field: 'interface' | 'domain' | 'gantry' | 'standing' | null;
  spec:
    | { interface: string; domain: number; afterClip: 'gantry' }
    | { interface: string; domain: number; afterClip: 'standing_policy'; standingPolicy: string }
    | null;
} {
  const name = interfaceText.trim();
  if (name === '') return { problem: null, field: null, spec: null }; // nothing typed yet: no complaint
  const iface = ddsInterfaceNameProblem(name);
  if (iface) return { problem: iface, field: 'interface', spec: null };
  const domain = domainText.trim() === '' ? NaN : Number(domainText.trim());
  const dom = ddsDomainIdProblem(domain);
  if (dom) return { problem: dom, field: 'domain', spec: null };
  if (standing.on && !onGantry) {
    const folder = standing.folder.trim();
    const after = afterClipProblem('standing_policy', folder);
    if (after) return { problem: after, field: 'standing', spec: null };
    return {
      problem: null,
      field: null,
      spec: { interface: name, domain, afterClip: 'standing_policy', standingPolicy: folder },
    };
  }
  if (!onGantry) {
    return {
      problem:
        'declare what keeps the robot up after a clip: its gantry (the runner only holds the joints) or a standing controller',
      field: 'gantry',
      spec: null,
    };
  }
  return { problem: null, field: null, spec: { interface: name, domain, afterClip: 'gantry' } };
}

/** Adds "G1 over DDS": the services start the runner and connect to it (may take seconds). */
export async function addG1Dds(): Promise<void> {
  const s = useEndpointsStore.getState();
  const { problem, spec } = g1DdsProblem(s.ddsInterfaceText, s.ddsDomainText, s.ddsOnGantry, {
    on: s.ddsStanding,
    folder: s.ddsStandingPolicyText,
  });
  if (!spec) {
    useEndpointsStore.setState({ actionError: { action: 'add', message: problem ?? 'type the network interface' } });
    return;
  }
  const ok = await act('add', 'add', () => useConnectionStore.getState().client!.call('connections.addG1Dds', spec));
  // What keeps the robot up is declared again for every runner started.
  if (ok) useEndpointsStore.setState({ ddsInterfaceText: '', ddsOnGantry: false, ddsStanding: false });
}

export const connectEndpoint = (id: string): Promise<boolean> =>
  act(id, 'connect', () => useConnectionStore.getState().client!.call('connections.connect', { id }));
export const disconnectEndpoint = (id: string): Promise<boolean> =>
  act(id, 'disconnect', () => useConnectionStore.getState().client!.call('connections.disconnect', { id }));
export const removeEndpoint = (id: string): Promise<boolean> =>
  act(id, 'remove', () => useConnectionStore.getState().client!.call('connections.remove', { id }));
