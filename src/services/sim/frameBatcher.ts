// Recorded frames gathered into batches for the sink: rows of a FrameLayout, the contacts of
// those frames, and the index of the batch's first frame. A flushed batch's buffers are handed
// over; the next rows go to new ones.

import type { BatchContact, FrameBatch } from './simProtocol';

export class FrameBatcher {
  private batch: Float64Array;
  private count = 0;
  private first = 0;
  /** Contacts of the frames in the current batch (the engine appends to it). */
  contacts: BatchContact[] = [];

  constructor(
    private readonly perBatch: number,
    private readonly width: number,
  ) {
    this.batch = new Float64Array(perBatch * width);
  }

  /** The buffer and offset of frame k's row; commitRow() counts it once written. */
  nextRow(k: number): { batch: Float64Array; offset: number } {
    if (this.count === 0) this.first = k;
    return { batch: this.batch, offset: this.count * this.width };
  }

  commitRow(): void {
    this.count++;
  }

  get full(): boolean {
    return this.count === this.perBatch;
  }

  /** Hands the rows so far (if any) to the sink and starts a new batch. */
  flush(sink: { emit(batch: FrameBatch): void }): void {
    if (this.count === 0) return;
    sink.emit({ data: this.batch, count: this.count, firstFrame: this.first, contacts: this.contacts });
    this.batch = new Float64Array(this.perBatch * this.width);
    this.count = 0;
    this.contacts = [];
  }
}
