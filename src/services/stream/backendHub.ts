import type { Backend, BackendEvent, BackendListener } from '../../domain/backend/backend';
import type { StateFrame } from '../../domain/robot/stateFrame';

// The one owner of a backend's listener in this process (Backend.setListener takes exactly one),
// and the one fan-out of its events to every consumer: the connection registry's measurements,
// an episode recorder, the gate driver, live metrics, the display.
//
// Contract:
// - `backendHub(backend)` returns the backend's hub, made (and the listener set) on first use;
//   every caller gets the same one until `releaseBackendHub(backend)` lets the listener go.
// - A subscriber declares its delivery:
//   'every'  — sees every event, in order, never dropped. The backend's next batch waits until
//              every 'every' subscriber has settled this one (the backend's backpressure holds).
//              All of them are called synchronously, in subscription order, when a batch arrives
//              (a safety consumer sees a lowstate in the same turn as the others).
//   'latest' — a display: never holds the backend back. While it is busy, waiting frames are
//              coalesced to the newest frame of each run; every other event (presence, problems,
//              an episode end) still arrives, in order.
// - A subscriber that throws or rejects loses only its own delivery: the others get theirs, and
//   the failure is reported (the subscription's `onError`, else the hub's `onSubscriberError`).
// - Unsubscribing takes effect at once: no later batch reaches it (a coalesced batch waiting for a
//   'latest' subscriber is dropped).

export type StreamDelivery = 'every' | 'latest';

export interface StreamSubscription {
  /** Names the consumer in reports of its failures. */
  name: string;
  delivery: StreamDelivery;
  onEvents: (events: BackendEvent[]) => Promise<void> | void;
  /** The consumer threw or rejected on a batch (default: the hub's onSubscriberError). */
  onError?: (err: unknown) => void;
}

export interface BackendHubOptions {
  /** A subscriber without its own onError failed. */
  onSubscriberError?: (subscriberName: string, err: unknown) => void;
}

interface Subscriber extends StreamSubscription {
  active: boolean;
  /** 'latest' only: a delivery is in flight. */
  busy: boolean;
  /** 'latest' only: events that arrived while busy, frames coalesced. */
  pending: BackendEvent[] | null;
}

export class BackendHub {
  private readonly subscribers: Subscriber[] = [];
  private released = false;
  private readonly listener: BackendListener = (events) => this.deliver(events);

  constructor(
    readonly backend: Backend,
    private readonly options: BackendHubOptions = {},
  ) {
    backend.setListener(this.listener);
  }

  /** Subscribers now. */
  get size(): number {
    return this.subscribers.length;
  }

  /** Adds a consumer; returns its unsubscribe. */
  subscribe(subscription: StreamSubscription): () => void {
    const s: Subscriber = { ...subscription, active: true, busy: false, pending: null };
    this.subscribers.push(s);
    return () => {
      if (!s.active) return;
      s.active = false;
      s.pending = null;
      const i = this.subscribers.indexOf(s);
      if (i >= 0) this.subscribers.splice(i, 1);
    };
  }

  /** Lets the backend's listener go; no subscriber gets anything after. */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const s of this.subscribers) s.active = false;
    this.subscribers.length = 0;
    this.backend.setListener(null);
  }

  private deliver(events: BackendEvent[]): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const s of [...this.subscribers]) {
      if (!s.active) continue;
      if (s.delivery === 'every') waits.push(this.call(s, events));
      else this.offerLatest(s, events);
    }
    return waits.length === 0 ? Promise.resolve() : Promise.all(waits).then(() => undefined);
  }

  /** Calls one subscriber; its failure is reported, never passed on. */
  private call(s: Subscriber, events: BackendEvent[]): Promise<void> {
    try {
      const r = s.onEvents(events);
      return r instanceof Promise ? r.catch((err: unknown) => this.report(s, err)) : Promise.resolve();
    } catch (err) {
      this.report(s, err);
      return Promise.resolve();
    }
  }

  private report(s: Subscriber, err: unknown): void {
    try {
      if (s.onError) s.onError(err);
      else this.options.onSubscriberError?.(s.name, err);
    } catch {
      // A failing reporter must not stop the stream.
    }
  }

  private offerLatest(s: Subscriber, events: BackendEvent[]): void {
    if (s.busy) {
      s.pending = coalesce(s.pending ?? [], events);
      return;
    }
    s.busy = true;
    void this.call(s, events).then(() => this.settleLatest(s));
  }

  private settleLatest(s: Subscriber): void {
    s.busy = false;
    const next = s.pending;
    s.pending = null;
    if (s.active && next && next.length > 0) this.offerLatest(s, next);
  }
}

/**
 * Appends `events` to `waiting`, keeping of each run only its newest frame: a waiting `frames`
 * event of the same run is replaced by the new one's last frame (the order of the other events
 * is kept). It builds new `frames` events and never edits a batch it is given, which the other
 * subscribers hold too.
 */
function coalesce(waiting: BackendEvent[], events: readonly BackendEvent[]): BackendEvent[] {
  for (const e of events) {
    if (e.type !== 'frames') {
      waiting.push(e);
      continue;
    }
    const last: StateFrame | undefined = e.frames[e.frames.length - 1];
    if (!last) continue;
    const i = waiting.findIndex((w) => w.type === 'frames' && w.runId === e.runId);
    if (i >= 0) waiting.splice(i, 1);
    waiting.push({ type: 'frames', runId: e.runId, frames: [last] });
  }
  return waiting;
}

const hubs = new WeakMap<Backend, BackendHub>();

/** The backend's one hub (its listener's owner), made on first use. */
export function backendHub(backend: Backend, options?: BackendHubOptions): BackendHub {
  let hub = hubs.get(backend);
  if (!hub) hubs.set(backend, (hub = new BackendHub(backend, options)));
  return hub;
}

/** Releases the backend's listener (its hub and every subscription end); a later backendHub() makes a new one. */
export function releaseBackendHub(backend: Backend): void {
  const hub = hubs.get(backend);
  if (!hub) return;
  hubs.delete(backend);
  hub.release();
}
