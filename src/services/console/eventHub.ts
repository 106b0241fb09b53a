import {
  MAX_PENDING_DISPLAY_S,
  MAX_UNACKED_PUSHES,
  PUSH_RATE_HZ,
  type ApiEvent,
  type QualificationProgressEvent,
  type LiveFramesEvent,
  type SimEndEvent,
  type TrialApiEvent,
} from '../../api/contract';

/** An event as a producer hands it over: the hub numbers it per client. */
export type UnsequencedEvent<E = ApiEvent> = E extends unknown ? Omit<E, 'seq'> : never;
/** Low-rate status pushes outside the frame streams (qualification, interlock, calibration, trials). */
export type StatusEvent = UnsequencedEvent<QualificationProgressEvent | TrialApiEvent>;
/** A batch of a live stream (live.frames) without its per-client sequence number and drop count. */
export type LiveBatch = Omit<LiveFramesEvent, 'seq' | 'droppedFrames'>;
/** What broadcastTransient sends: a status or a live batch, superseded by the next one. */
export type TransientEvent = StatusEvent | UnsequencedEvent<LiveFramesEvent>;

// Server→client pushes of the console API, with flow control per client. Both transports attach
// one EventSink per client (a WebSocket of the loopback host, a webContents in Electron); a
// simulation run's frames reach the clients that watch it (the one that started it) as
// `live.frames` batches (source sim_run) sent at PUSH_RATE_HZ, and its end as one `sim.end`.
//
// Backpressure: every push carries a sequence number and the client acknowledges what it has
// processed (events.ack). With MAX_UNACKED_PUSHES unacknowledged, nothing more is sent to that
// client: its frames wait (coalesced into the next batch). Nothing is queued per client but an
// index into the run's recording, and the wait is bounded: frames more than MAX_PENDING_DISPLAY_S
// older than the newest are skipped for that client's display and counted (`droppedFrames` on the
// next batch and on the end; `onDropped` reports it as a problem). The recording itself is
// complete and served by sim.result. The end is sent even to a client that is behind.

/** Delivers one event to one client. Must not throw; a closed client just drops it. */
export interface EventSink {
  send(event: ApiEvent): void;
}

/** What the hub reads from a run: its recording so far and, once ended, its end. */
export interface DisplaySource {
  readonly runId: string;
  /** Frames recorded so far. */
  recordedFrames(): number;
  /** Time of recorded frame i, s. */
  frameTimeS(i: number): number;
  /** The frames [from, to) as a live batch (without seq and droppedFrames). */
  framesBatch(from: number, to: number): LiveBatch;
  /** The end (without seq and droppedFrames); null while running. */
  endEvent(): Omit<SimEndEvent, 'seq' | 'droppedFrames'> | null;
}

interface Stream {
  source: DisplaySource;
  /** Next recorded frame to send. */
  next: number;
  dropped: number;
  /** onDropped was called for this stream. */
  reported: boolean;
}

export interface EventClient {
  readonly id: number;
  /** The client processed every push up to and including `seq`. */
  ack(seq: number): number;
  /** The client went away: its streams end and its detach listeners run. */
  detach(): void;
  onDetach(listener: () => void): () => void;
  readonly detached: boolean;
}

export interface EventHubOptions {
  /** A client fell behind on a run and frames were skipped for its display (first time per run and client, then at the end). */
  onDropped?: (runId: string, clientId: number, dropped: number, final: boolean) => void;
  /** Default PUSH_RATE_HZ. */
  pushRateHz?: number;
  maxUnacked?: number;
  maxPendingS?: number;
}

class Client implements EventClient {
  nextSeq = 0;
  acked = -1;
  detached = false;
  readonly streams = new Map<string, Stream>();
  private readonly detachListeners = new Set<() => void>();

  constructor(
    readonly id: number,
    readonly sink: EventSink,
    private readonly hub: EventHub,
  ) {}

  get unacked(): number {
    return this.nextSeq - 1 - this.acked;
  }

  ack(seq: number): number {
    const s = Math.min(seq, this.nextSeq - 1);
    if (s > this.acked) {
      this.acked = s;
      this.hub.wake();
    }
    return this.acked;
  }

  detach(): void {
    if (this.detached) return;
    this.detached = true;
    this.streams.clear();
    this.hub.forget(this);
    for (const l of [...this.detachListeners]) {
      try {
        l();
      } catch {
        // a listener's failure must not keep the others from running
      }
    }
    this.detachListeners.clear();
  }

  onDetach(listener: () => void): () => void {
    this.detachListeners.add(listener);
    return () => this.detachListeners.delete(listener);
  }

  push(event: Omit<SimEndEvent, 'seq'> | TransientEvent): void {
    const e = { ...event, seq: this.nextSeq++ } as ApiEvent;
    try {
      this.sink.send(e);
    } catch {
      // a sink must not throw; if one does, the client is gone
      this.detach();
    }
  }
}

export class EventHub {
  private readonly clients = new Set<Client>();
  private nextId = 1;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly periodMs: number;
  private readonly maxUnacked: number;
  private readonly maxPendingS: number;
  private closed = false;

  constructor(private readonly options: EventHubOptions = {}) {
    this.periodMs = 1000 / (options.pushRateHz ?? PUSH_RATE_HZ);
    this.maxUnacked = options.maxUnacked ?? MAX_UNACKED_PUSHES;
    this.maxPendingS = options.maxPendingS ?? MAX_PENDING_DISPLAY_S;
  }

  attach(sink: EventSink): EventClient {
    const c = new Client(this.nextId++, sink, this);
    if (this.closed) c.detached = true;
    else this.clients.add(c);
    return c;
  }

  /** @internal */
  forget(c: Client): void {
    this.clients.delete(c);
    this.schedule();
  }

  /** Sends `source`'s frames and end to `client` from now on. */
  watch(client: EventClient, source: DisplaySource): void {
    const c = client as Client;
    if (c.detached || !this.clients.has(c)) return;
    c.streams.set(source.runId, { source, next: 0, dropped: 0, reported: false });
    this.schedule();
  }

  /** Sends one low-rate status event (qualification.progress) to a client, outside the frame streams. */
  notify(client: EventClient, event: StatusEvent): void {
    const c = client as Client;
    if (c.detached) return;
    c.push(event);
  }

  /** Sends one low-rate status event to every attached client. */
  broadcast(event: StatusEvent): void {
    for (const c of [...this.clients]) if (!c.detached) c.push(event);
  }

  /**
   * Sends a transient push (safety.status, a trial's or an idle robot's live.frames: superseded by
   * the next one) to every client that keeps up; a client with maxUnacked pushes unacknowledged is
   * skipped, never queued for, and `skipped` is told. `make` builds the event per client (it may
   * carry that client's own skip count) or returns null to send nothing to it. `reserve` leaves
   * that many of a client's unacknowledged slots to other pushes: the idle robots' live.frames
   * keep 2, so a client slow to acknowledge still gets the lights' safety.status.
   */
  broadcastTransient(
    make: (clientId: number) => TransientEvent | null,
    skipped?: (clientId: number) => void,
    reserve = 0,
  ): void {
    for (const c of [...this.clients]) {
      if (c.detached) continue;
      if (c.unacked >= this.maxUnacked - reserve) {
        skipped?.(c.id);
        continue;
      }
      const e = make(c.id);
      if (e) c.push(e);
    }
  }

  /** Clients attached now (ids). */
  clientIds(): number[] {
    return [...this.clients].filter((c) => !c.detached).map((c) => c.id);
  }

  /** New frames were recorded (starts the push timer if it is idle). */
  wake(): void {
    this.schedule();
  }

  /** The run ended: send what is left and the end to every watcher now. */
  ended(source: DisplaySource): void {
    for (const c of this.clients) {
      const s = c.streams.get(source.runId);
      if (s) this.flush(c, s, true);
    }
    this.schedule();
  }

  /** Unacknowledged pushes of a client (for tests and diagnostics). */
  unackedOf(client: EventClient): number {
    return (client as Client).unacked;
  }

  private schedule(): void {
    const busy = !this.closed && [...this.clients].some((c) => c.streams.size > 0);
    if (busy && this.timer === null) {
      this.timer = setInterval(() => this.tick(), this.periodMs);
      this.timer.unref?.();
    } else if (!busy && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private tick(): void {
    for (const c of this.clients) {
      for (const s of [...c.streams.values()]) this.flush(c, s, s.source.endEvent() !== null);
    }
    this.schedule();
  }

  private flush(c: Client, s: Stream, final: boolean): void {
    const src = s.source;
    const count = src.recordedFrames();
    if (s.next < count) {
      // Bound the wait: skip what is older than maxPendingS before the newest frame.
      const newest = src.frameTimeS(count - 1);
      const from = s.next;
      while (s.next < count - 1 && newest - src.frameTimeS(s.next) > this.maxPendingS) s.next++;
      s.dropped += s.next - from;
      if (c.unacked < this.maxUnacked) {
        const batch = src.framesBatch(s.next, count);
        s.next = count;
        c.push({ ...batch, droppedFrames: s.dropped });
      } else if (final) {
        s.dropped += count - s.next;
        s.next = count;
      }
      if (s.dropped > 0 && !s.reported) {
        s.reported = true;
        this.options.onDropped?.(src.runId, c.id, s.dropped, false);
      }
    }
    const end = final ? src.endEvent() : null;
    if (end) {
      c.streams.delete(src.runId);
      if (s.dropped > 0) this.options.onDropped?.(src.runId, c.id, s.dropped, true);
      c.push({ ...end, droppedFrames: s.dropped });
    }
  }

  close(): void {
    this.closed = true;
    for (const c of [...this.clients]) c.detach();
    this.schedule();
  }
}
