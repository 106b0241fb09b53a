import type { ApiError, ApiEvent, ApiMethod, ApiOutcome, ApiParams, WsResponse } from '../../../src/api/contract';
import { WS_API_PATH } from '../../../src/api/contract';
import { deliverApiEvent } from './apiEvents';
import type { ApiTransport, ConnectionStatus } from './transport';

// The loopback host's WebSocket: {id, method, params} → {id, result} | {id, error}. Reconnects
// with a capped back-off; requests made while disconnected wait for the next connection up to
// REQUEST_TIMEOUT_MS, and requests in flight when the link drops fail with a structured error.
// Messages without an id are pushes ({ event }); each is validated against the contract's schema
// before it reaches a listener (an invalid one is dropped with a console warning).

const REQUEST_TIMEOUT_MS = 60_000;
const MAX_BACKOFF_MS = 5_000;

interface Pending {
  resolve(outcome: ApiOutcome): void;
  timer: ReturnType<typeof setTimeout>;
}

export function apiSocketUrl(pageUrl: string, token: string): string {
  const u = new URL(pageUrl);
  const scheme = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${u.host}${WS_API_PATH}?token=${encodeURIComponent(token)}`;
}

export function createWsTransport(socketUrl: string): ApiTransport {
  let socket: WebSocket | null = null;
  let status: ConnectionStatus = 'connecting';
  let detail: string | undefined;
  let nextId = 1;
  let backoffMs = 250;
  let closedByUs = false;
  const pending = new Map<number, Pending>();
  const listeners = new Set<(s: ConnectionStatus, d?: string) => void>();
  const eventListeners = new Set<(e: ApiEvent) => void>();
  let waiters: Array<() => void> = [];

  const setStatus = (s: ConnectionStatus, d?: string): void => {
    status = s;
    detail = d;
    for (const l of listeners) l(s, d);
  };

  const fail = (id: number, error: ApiError): void => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    clearTimeout(p.timer);
    p.resolve({ ok: false, error });
  };

  const connect = (): void => {
    setStatus('connecting');
    const ws = new WebSocket(socketUrl);
    socket = ws;
    ws.onopen = () => {
      backoffMs = 250;
      setStatus('connected');
      const w = waiters;
      waiters = [];
      for (const wake of w) wake();
    };
    ws.onmessage = (ev: MessageEvent<string>) => {
      let msg: WsResponse | { event: unknown };
      try {
        msg = JSON.parse(ev.data) as WsResponse | { event: unknown };
      } catch {
        return;
      }
      if ('event' in msg) {
        deliverApiEvent(msg.event, eventListeners);
        return;
      }
      if (typeof msg.id !== 'number') return;
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      clearTimeout(p.timer);
      p.resolve('error' in msg ? { ok: false, error: msg.error } : ({ ok: true, result: msg.result } as ApiOutcome));
    };
    ws.onclose = (ev) => {
      socket = null;
      for (const id of [...pending.keys()]) {
        fail(id, { code: 'internal', message: `connection to the console host lost (close code ${ev.code})` });
      }
      if (closedByUs) return;
      setStatus('disconnected', ev.code === 1009 ? 'message too large' : `close code ${ev.code}`);
      setTimeout(connect, backoffMs);
      backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
    };
  };

  const whenOpen = (): Promise<void> =>
    socket?.readyState === WebSocket.OPEN ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));

  connect();

  return {
    kind: 'host',
    async invoke<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiOutcome<M>> {
      const id = nextId++;
      const outcome = new Promise<ApiOutcome>((resolve) => {
        const timer = setTimeout(
          () => fail(id, { code: 'internal', message: `${method}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s` }),
          REQUEST_TIMEOUT_MS,
        );
        pending.set(id, { resolve, timer });
      });
      await Promise.race([whenOpen(), outcome]);
      if (pending.has(id)) socket?.send(JSON.stringify({ id, method, params }));
      return (await outcome) as ApiOutcome<M>;
    },
    onStatus(listener) {
      listeners.add(listener);
      listener(status, detail);
      return () => listeners.delete(listener);
    },
    onEvent(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    close() {
      closedByUs = true;
      socket?.close();
    },
  };
}
