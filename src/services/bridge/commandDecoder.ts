import { G1_BRIDGE_LIMITS } from '../../domain/bridge/g1BridgeContract';
import { decodeCommand, type CommandValidation } from '../../domain/bridge/g1BridgeValidate';
import { TaskWorker, type TaskWorkerError } from '../os/taskWorker';

// Where a g1-bridge/1 server decodes the commands its console sends. The server's thread also
// relays the robot's state (500 Hz) and hears STOP, so it decodes only what is small enough to cost
// it nothing: stop, damp, hold, start and reset are well under INLINE_COMMAND_MAX_BYTES. A larger
// command (a prepare carries a whole clip: 78 KB for 10 s, decoded in 87 ms by a freshly started
// runner, longer than the console's 100 ms state timeout) is decoded in a worker thread at a low
// priority, under a deadline and in a heap of its own, and its result comes back as plain data.

/** Commands of at most this many bytes are decoded on the caller's thread. */
export const INLINE_COMMAND_MAX_BYTES = 4 * 1024;
/** Longest the decoding of one command may take in the worker, ms. */
export const COMMAND_DECODE_MS = 30_000;
/** Longest the decoder's worker may take to start, ms. */
export const COMMAND_DECODER_START_MS = 30_000;
/** The decoder worker's heap, MiB: a command at the 32 MiB limit parses into a few times its size. */
export const COMMAND_DECODER_HEAP_MIB = 768;
/** The decoder's thread runs at this nice (Linux; it never raises itself). */
const DECODER_NICE = 10;

const BOOTSTRAP = new URL('../sim/simWorkerBootstrap.mjs', import.meta.url);
const WORKER_ENTRY = new URL('./commandDecodeWorker.ts', import.meta.url);

export interface CommandDecodeTask {
  bytes: Uint8Array;
}

export interface CommandDecoderOptions {
  inlineMaxBytes?: number;
  decodeMs?: number;
  heapMib?: number;
}

export class CommandDecoder {
  private readonly inlineMaxBytes: number;
  private readonly worker: TaskWorker<CommandDecodeTask, CommandValidation>;
  private sentOff = 0;

  constructor(o: CommandDecoderOptions = {}) {
    this.inlineMaxBytes = o.inlineMaxBytes ?? INLINE_COMMAND_MAX_BYTES;
    this.worker = new TaskWorker({
      bootstrap: BOOTSTRAP,
      workerData: { entry: WORKER_ENTRY.href, startNice: DECODER_NICE },
      name: 'motionbench-command-decoder',
      taskMs: o.decodeMs ?? COMMAND_DECODE_MS,
      startMs: COMMAND_DECODER_START_MS,
      heapMib: o.heapMib ?? COMMAND_DECODER_HEAP_MIB,
    });
  }

  /**
   * The command, or its refusal: at once when small (or over the size limit, refused unread),
   * otherwise from the worker. The promise never rejects: a decoder failure is a refusal.
   */
  decode(data: ArrayBufferView): CommandValidation | Promise<CommandValidation> {
    if (data.byteLength <= this.inlineMaxBytes || data.byteLength > G1_BRIDGE_LIMITS.commandBytes)
      return decodeCommand(data);
    this.sentOff++;
    const bytes = new Uint8Array(data.byteLength);
    bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    return this.worker.run({ bytes }, [bytes.buffer]).catch((err: TaskWorkerError) => decoderFailure(err));
  }

  /** Commands handed to the worker so far. */
  get decodedOffThread(): number {
    return this.sentOff;
  }

  /** Workers started so far. */
  get workersStarted(): number {
    return this.worker.workersStarted;
  }

  /** Stops the worker; commands still being decoded are refused. */
  close(): Promise<void> {
    return this.worker.close();
  }
}

function decoderFailure(err: TaskWorkerError): CommandValidation {
  const f = err.failure;
  switch (f.kind) {
    case 'deadline':
      return refusal('oversized', `decoding it took longer than ${f.ms.toLocaleString('en-US')} ms`);
    case 'out_of_memory':
      return refusal('oversized', `decoding it needed more than the ${f.heapMib} MiB the decoder is given`);
    default:
      return refusal('backend_error', `the command decoder failed: ${err.message}`);
  }
}

function refusal(code: 'oversized' | 'backend_error', reason: string): CommandValidation {
  return { ok: false, code, reason, seq: null, command: null };
}
