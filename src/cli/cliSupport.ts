import { Writable } from 'node:stream';
import { toApiError } from '../services/console/apiErrorMap';

// Shared plumbing of the `motionbench` subcommands: what a command touches outside its arguments
// (CliIo), the --json contract (one JSON document on stdout, everything else on stderr) and the
// exit-code convention (0 ok, 1 bad input or failed work, 2 bad usage). Options: cliOptions.ts.

export class UsageError extends Error {}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(argv: string[], io: CliIo): Promise<number>;
}

/** The signals an operator sends a running command: Ctrl+C, kill, and the interlock emulator's e-stop pair. */
export type OperatorSignal = 'SIGINT' | 'SIGTERM' | 'SIGUSR1' | 'SIGUSR2';

/** Where a command hears operator signals: the process itself, or (in-process callers) an emitter of their own. */
export interface SignalSource {
  on(signal: OperatorSignal, listener: () => void): unknown;
  off(signal: OperatorSignal, listener: () => void): unknown;
}

/**
 * Everything a command touches outside its arguments and files: its output streams, the operator's
 * signals, its stdin and the way to quit at once. Only stdout and stderr are required; the rest
 * default to the process's own, so the bin passes `processIo` and an in-process caller (a test)
 * passes its own and no command writes to, listens on or exits the process behind its back.
 */
export interface CliIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  signals?: SignalSource;
  stdin?: NodeJS.ReadableStream;
  /** Ends the program at once with this code (a second Ctrl+C). */
  exit?: (code: number) => void;
}

/** Listens for `signal` through the command's io; returns the function that stops listening. */
export function onSignal(io: CliIo, signal: OperatorSignal, listener: () => void): () => void {
  const source = io.signals ?? process;
  source.on(signal, listener);
  return () => void source.off(signal, listener);
}

export const stdinOf = (io: CliIo): NodeJS.ReadableStream => io.stdin ?? process.stdin;

/**
 * The streams of an operator prompt: the process's terminal (stdin, and stderr so that --json's
 * stdout stays one document) when the command runs on the process's own stdin; else the caller's
 * stdin, the questions written through its stderr.
 */
export function promptStreams(io: CliIo): { input: NodeJS.ReadableStream; output: NodeJS.WritableStream } {
  if (!io.stdin) return { input: process.stdin, output: process.stderr };
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      io.stderr(chunk.toString('utf8'));
      done();
    },
  });
  return { input: io.stdin, output };
}

export function exitNow(io: CliIo, code: number): void {
  if (io.exit) io.exit(code);
  else process.exit(code);
}

/**
 * A reader that stops reading (`motionbench trial --list | head`) closes our stdout: further writes
 * fail with EPIPE, asynchronously, as an 'error' event. That is not a failure of the command: the
 * rest of its output is dropped and it goes on (a running trial must not be ended by a closed pipe;
 * the operator stops it). Any other stream error is still thrown.
 */
const guarded = new WeakSet<NodeJS.WriteStream>();
const closed = new WeakSet<NodeJS.WriteStream>();
function writeTo(stream: NodeJS.WriteStream, s: string): void {
  if (closed.has(stream)) return;
  if (!guarded.has(stream)) {
    guarded.add(stream);
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      closed.add(stream);
    });
  }
  stream.write(s);
}

export const processIo: CliIo = {
  stdout: (s) => writeTo(process.stdout, s),
  stderr: (s) => writeTo(process.stderr, s),
};

export function printJson(io: CliIo, doc: unknown): void {
  io.stdout(`${JSON.stringify(doc, null, 2)}\n`);
}

/**
 * Turns an error into the reason printed on stderr and the exit code: the console API's message for
 * the same error (src/services/console/apiErrorMap.ts), with the reasons it does not already name below it.
 */
export function reportError(io: CliIo, err: unknown): number {
  if (err instanceof UsageError) {
    io.stderr(`motionbench: ${err.message}\n`);
    return 2;
  }
  const { message, reasons = [] } = toApiError(err);
  const lines = [message, ...reasons.filter((r) => !message.includes(r)).map((r) => `- ${r}`)];
  io.stderr(`motionbench: ${lines.join('\n').replace(/\n/g, '\n  ')}\n`);
  return 1;
}

/** Resolves with the signal's name at the first SIGINT or SIGTERM (long-running servers stop cleanly on either). */
export function untilSignal(io: CliIo): Promise<string> {
  return new Promise((resolve) => {
    const offs = (['SIGINT', 'SIGTERM'] as const).map((signal) =>
      onSignal(io, signal, () => {
        for (const off of offs) off();
        resolve(signal);
      }),
    );
  });
}
