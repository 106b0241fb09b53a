import WebSocket from 'ws';

// One long-lived client of the loopback host's console API (`/api?token=…`), as the console's
// renderer holds one: requests `{id, method, params}` answered by id; pushes `{event}` (live.frames,
// safety.status, trial.*): their event goes to `onPush` and is acknowledged (events.ack) as the renderer does.
// Runs a client starts belong to its connection (the host stops them when it goes), so a run is
// started and watched on one client.

/**
 * A WebSocket to the host's console API, open: the page's token and same-origin header, and room
 * for the largest message the host sends; rejects when it cannot open.
 */
export async function openHostApiSocket(server: { port: number; token: string }): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api?token=${server.token}`, {
    headers: { Origin: `http://127.0.0.1:${server.port}` },
    maxPayload: 1 << 30,
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return ws;
}

export interface HostApiError extends Error {
  code?: string;
}

export class HostApiClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private pushListener: ((m: Record<string, unknown>) => void) | null = null;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as {
        id?: number;
        result?: unknown;
        error?: { code: string; message: string };
        event?: Record<string, unknown> | null;
      };
      if (typeof m.id === 'number' && this.pending.has(m.id)) {
        const p = this.pending.get(m.id)!;
        this.pending.delete(m.id);
        if (m.error) p.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
        else p.resolve(m.result);
      } else if (typeof m.event === 'object' && m.event !== null) {
        // A push is `{event}` (src/services/host/hostServer.ts); the listener gets the event itself.
        const event = m.event;
        try {
          this.pushListener?.(event);
        } finally {
          // Every push is acknowledged once handled, as the renderer does (renderer/src/api/pushRouter.ts):
          // the services hold back a client's transient pushes (safety.status) while too many are
          // unacknowledged, so a client that never acknowledges stops hearing the robot's state.
          if (typeof event.seq === 'number') this.call('events.ack', { seq: event.seq }).catch(() => undefined);
        }
      }
    });
    ws.on('close', () => {
      for (const p of this.pending.values()) p.reject(new Error('the host closed the API connection'));
      this.pending.clear();
    });
  }

  static async connect(server: { port: number; token: string }): Promise<HostApiClient> {
    const ws = await openHostApiSocket(server);
    return new HostApiClient(ws);
  }

  onPush(listener: (m: Record<string, unknown>) => void): void {
    this.pushListener = listener;
  }

  call<T>(method: string, params: unknown = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.ws.terminate();
  }
}
