// A handler result already serialized to JSON off the event loop (a decoded clip: its ClipDto is
// stringified in the file worker). The WebSocket host sends the bytes as they are; a caller that
// wants the value (Electron IPC, tests) gets it from `value()`, built on demand.

export class SerializedResult<T> {
  constructor(
    /** UTF-8 JSON of the result. */
    readonly json: Uint8Array,
    private readonly build: () => T,
  ) {}

  value(): T {
    return this.build();
  }
}

/** The plain result, whichever way the handler returned it. */
export const plainResult = <T>(r: T | SerializedResult<T>): T => (r instanceof SerializedResult ? r.value() : r);
