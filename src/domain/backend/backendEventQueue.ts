import { claimListener, type BackendEvent, type BackendListener } from './backend';
import type { StateFrame } from '../robot/stateFrame';

// The delivery of a backend's events to its one listener (Backend.setListener), shared by every
// backend that produces events faster than a listener may take them: the g1-bridge/1 client
// (src/services/bridge/bridgeClientBackend.ts) and the robot emulator's backend
// (src/services/robotEmulator/robotEmulator.ts).
//
// Contract:
// - While the listener is idle, a pushed event is handed to it at once, synchronously inside
//   push() (a safety consumer such as the gate driver sees a lowstate in the same turn).
// - While it is busy (its promise has not settled), events wait in order; the next batch is
//   everything that waited, delivered when the promise settles (backpressure: one batch in flight).
// - Consecutive `frames` events of the same run are merged into one event while they wait.
// - At most `maxQueuedFrames` frames wait; beyond that the oldest waiting frames are dropped and
//   counted (other events are never dropped: a presence change or an episode end always arrives).
//   `dropNotice` may put an event (a problem) at the head of the next batch naming the drops.
// - A listener that throws or rejects loses only its batch; delivery goes on.
// - No listener: nothing is held (pushes are ignored, a removed listener's waiting events go).
// - One listener: setting one while one is set throws ListenerTakenError naming `owner`.
// No timers and no I/O: the only asynchrony is the listener's own promise.

export interface BackendEventQueueOptions {
  /** The backend whose events these are, named in the error a second listener gets. */
  owner?: { readonly id: string; readonly name: string };
  /** Frames held while the listener is busy; beyond it the oldest are dropped. */
  maxQueuedFrames: number;
  /**
   * Called before a batch goes out when frames were dropped since the last batch: returns the
   * event to put first in that batch (e.g. a `frames_dropped` problem), or null for none.
   */
  dropNotice?: (droppedSinceLastBatch: number, droppedTotal: number) => BackendEvent | null;
  /** The listener threw or rejected (its batch is not redelivered). */
  onListenerError?: (err: unknown) => void;
  /** After every batch the listener settled (success or failure). */
  onBatchSettled?: () => void;
}

const UNNAMED_OWNER = { id: 'backend', name: 'unnamed backend' } as const;

export class BackendEventQueue {
  private listener: BackendListener | null = null;
  private waiting: BackendEvent[] = [];
  private waitingFrames = 0;
  private delivering = false;
  private droppedSinceBatch = 0;
  private _dropped = 0;
  private _deliveredFrames = 0;
  private readonly maxQueuedFrames: number;

  constructor(private readonly o: BackendEventQueueOptions) {
    if (!(Number.isInteger(o.maxQueuedFrames) && o.maxQueuedFrames >= 1))
      throw new RangeError(`maxQueuedFrames must be an integer ≥ 1, got ${o.maxQueuedFrames}`);
    this.maxQueuedFrames = o.maxQueuedFrames;
  }

  /** Frames dropped because the listener fell behind, since the queue was made. */
  get dropped(): number {
    return this._dropped;
  }

  /** Frames handed to the listener, since the queue was made. */
  get deliveredFrames(): number {
    return this._deliveredFrames;
  }

  /** Frames waiting for the listener now. */
  get queuedFrames(): number {
    return this.waitingFrames;
  }

  get hasListener(): boolean {
    return this.listener !== null;
  }

  /**
   * Sets (or removes, with null) the listener; removing it discards what waits. Throws
   * ListenerTakenError while another listener is set.
   */
  setListener(listener: BackendListener | null): void {
    this.listener = claimListener(this.o.owner ?? UNNAMED_OWNER, this.listener, listener);
    if (listener) this.kick();
    else {
      this.waiting = [];
      this.waitingFrames = 0;
    }
  }

  push(ev: BackendEvent): void {
    if (!this.listener) return;
    if (ev.type === 'frames') this.pushFrames(ev.runId, ev.frames);
    else this.waiting.push(ev);
    this.kick();
  }

  private pushFrames(runId: string, frames: readonly StateFrame[]): void {
    const tail = this.waiting[this.waiting.length - 1];
    if (tail && tail.type === 'frames' && tail.runId === runId) tail.frames.push(...frames);
    else this.waiting.push({ type: 'frames', runId, frames: [...frames] });
    this.waitingFrames += frames.length;
    while (this.waitingFrames > this.maxQueuedFrames) {
      const i = this.waiting.findIndex((e) => e.type === 'frames' && e.frames.length > 0);
      if (i < 0) break;
      const e = this.waiting[i] as Extract<BackendEvent, { type: 'frames' }>;
      const n = Math.min(e.frames.length, this.waitingFrames - this.maxQueuedFrames);
      e.frames.splice(0, n);
      if (e.frames.length === 0) this.waiting.splice(i, 1);
      this.waitingFrames -= n;
      this._dropped += n;
      this.droppedSinceBatch += n;
    }
  }

  private kick(): void {
    if (this.delivering || !this.listener || this.waiting.length === 0) return;
    this.delivering = true;
    // Runs synchronously up to the listener's first await: an idle listener gets the event now.
    void this.deliverLoop();
  }

  private async deliverLoop(): Promise<void> {
    try {
      while (this.listener && this.waiting.length > 0) {
        const listener = this.listener;
        const batch = this.waiting;
        this.waiting = [];
        this.waitingFrames = 0;
        if (this.droppedSinceBatch > 0) {
          const n = this.droppedSinceBatch;
          this.droppedSinceBatch = 0;
          const notice = this.o.dropNotice?.(n, this._dropped) ?? null;
          if (notice) batch.unshift(notice);
        }
        for (const e of batch) if (e.type === 'frames') this._deliveredFrames += e.frames.length;
        try {
          await listener(batch);
        } catch (err) {
          this.o.onListenerError?.(err);
        }
        this.o.onBatchSettled?.();
      }
    } finally {
      this.delivering = false;
    }
  }
}
