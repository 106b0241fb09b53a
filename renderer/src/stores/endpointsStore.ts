import { create } from 'zustand';
import type { ApiError, ConnectionInfo } from '../../../src/api/contract';
import { checkBackendUrl } from '../../../src/api/connectionUrl';
import { ApiCallError } from '../api/consoleClient';
import { useConnectionStore } from './connectionStore';

// The endpoints of the Connections panel (embedded simulator, remote simulators), polled from
// connections.list at POLL_HZ while the console services are reachable (low rate: React state).

export const POLL_HZ = 2;

export interface EndpointsState {
  entries: ConnectionInfo[];
  /** Wall-clock ms of the last successful poll; null before the first. */
  polledAtMs: number | null;
  /** The last failed poll, cleared by the next good one. */
  pollError: string | null;
  /** The URL field, as typed. */
  urlText: string;
  /** What the URL is: a remote simulator or the physical robot (robot link limits). */
  addKind: 'remote_simulator' | 'robot';
  /** Why the last add/connect/remove failed (shown under the form). */
  actionError: { action: string; message: string } | null;
  /** Entry ids (or 'add') with an action in flight. */
  busy: string[];
}

export const useEndpointsStore = create<EndpointsState>(() => ({
  entries: [],
  polledAtMs: null,
  pollError: null,
  urlText: '',
  addKind: 'remote_simulator',
  actionError: null,
  busy: [],
}));

const message = (err: unknown): string => (err instanceof ApiCallError ? err.error.message : err instanceof Error ? err.message : String(err));
const apiError = (err: unknown): ApiError | null => (err instanceof ApiCallError ? err.error : null);

export async function refreshEndpoints(): Promise<void> {
  const client = useConnectionStore.getState().client;
  if (!client || useConnectionStore.getState().status !== 'connected') return;
  try {
    const entries = await client.call('connections.list', {});
    useEndpointsStore.setState({ entries, polledAtMs: Date.now(), pollError: null });
  } catch (err) {
    useEndpointsStore.setState({ pollError: message(err) });
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
    useEndpointsStore.setState({ actionError: { action, message: e ? e.message.replace(/^connections\.add: params\.url: /, '') : message(err) } });
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
  const ok = await act('add', 'add', () => useConnectionStore.getState().client!.call('connections.add', { url: check.url, ...(kind === 'robot' && { kind }) }));
  if (ok) useEndpointsStore.setState({ urlText: '' });
}

export const connectEndpoint = (id: string): Promise<boolean> =>
  act(id, 'connect', () => useConnectionStore.getState().client!.call('connections.connect', { id }));
export const disconnectEndpoint = (id: string): Promise<boolean> =>
  act(id, 'disconnect', () => useConnectionStore.getState().client!.call('connections.disconnect', { id }));
export const removeEndpoint = (id: string): Promise<boolean> =>
  act(id, 'remove', () => useConnectionStore.getState().client!.call('connections.remove', { id }));
