import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { MAX_FPS, MIN_FPS } from '../domain/motion/clipCommon';
import { toApiError } from '../services/console/apiErrorMap';

// Shared plumbing of the `motionbench` subcommands: argument parsing with clear usage errors,
// the --json contract (one JSON document on stdout, everything else on stderr) and the
// exit-code convention (0 ok, 1 bad input or failed work, 2 bad usage).

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

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses a subcommand's options (strict: unknown options are usage errors) and refuses more
 * than `maxPositionals` positional arguments. `--help` is answered by main() before this runs.
 */
export function parse<O extends Options>(argv: string[], options: O, usage: string, maxPositionals = 0) {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(argv, options),
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message.split('\n')[0]}\n${usage}`);
  }
  if (parsed.positionals.length > maxPositionals)
    throw new UsageError(`unexpected argument "${parsed.positionals[maxPositionals]}"\n${usage}`);
  return parsed;
}

/** A value that looks like an option to node's parseArgs but is a (negative or non-finite) number. */
const NEGATIVE_NUMBER_RE = /^-(?:\d|\.\d|infinity\b|inf\b|nan\b)/i;

/**
 * `--frame -1` → `--frame=-1` for string options, so that a negative number is judged by the
 * option's own check ("--frame must be a non-negative integer") instead of parseArgs' "argument is
 * ambiguous".
 */
function joinNegativeValues(argv: readonly string[], options: Options): string[] {
  const out: string[] = [];
  for (let k = 0; k < argv.length; k++) {
    const a = argv[k];
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : null;
    const next = argv[k + 1];
    if (name !== null && options[name]?.type === 'string' && next !== undefined && NEGATIVE_NUMBER_RE.test(next)) {
      out.push(`${a}=${next}`);
      k++;
    } else out.push(a);
  }
  return out;
}

export const isHelpRequest = (argv: readonly string[]): boolean => argv.includes('--help') || argv.includes('-h');

/** A frame-rate option (clip fps): in [MIN_FPS, MAX_FPS] Hz, the bounds the clip codecs accept. */
export const fpsOption = (value: string | boolean | undefined, name = 'fps'): number | undefined =>
  numberOption(value, name, (v) => v >= MIN_FPS && v <= MAX_FPS, `a frame rate in [${MIN_FPS}, ${MAX_FPS}] Hz`);

/** A TCP port option; 0 lets the system choose. */
export const portOption = (value: string | boolean | undefined): number | undefined =>
  numberOption(value, 'port', (v) => Number.isInteger(v) && v >= 0 && v < 65536, 'a TCP port (0 = any free port)');

/** Parses a numeric option; `undefined` when absent. */
export function numberOption(
  value: string | boolean | undefined,
  name: string,
  check: (v: number) => boolean,
  what: string,
): number | undefined {
  if (value === undefined) return undefined;
  const v = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(v) || !check(v)) {
    throw new UsageError(`--${name} must be ${what}, got "${String(value)}"`);
  }
  return v;
}

/** A file a command writes (`--out`, `--exec-out`, …): the option's name and the path given. */
export interface OutputFileOption {
  option: string;
  file: string | undefined;
}

/** A file a command reads (`--clip`, `--model`, a binding file, …); `what` names it in messages ("the --clip file"). */
export interface InputFileOption {
  what: string;
  file: string | null | undefined;
}

/** The file's identity (device + inode) after symlinks, or null when it does not exist. */
function fileIdentity(file: string): { dev: number; ino: number; real: string } | null {
  try {
    const st = fs.statSync(file);
    return { dev: st.dev, ino: st.ino, real: fs.realpathSync(file) };
  } catch {
    return null;
  }
}

const sameFile = (
  a: { dev: number; ino: number; real: string },
  b: { dev: number; ino: number; real: string },
): boolean => a.real === b.real || (a.dev === b.dev && a.ino === b.ino && a.ino !== 0);

/**
 * The one rule for every file a CLI command writes: an output that already exists is refused
 * unless `force` (--force); an output that is one of the command's inputs — the same file by
 * realpath or by device + inode, so symlinks and hard links count — is refused even with --force;
 * two outputs may not name the same file; a folder or "" is not a file name. Throws UsageError
 * (exit 2) before any work starts. Writers should still open with an exclusive flag when not
 * forced, so a file that appears after this check is not replaced either.
 */
export function checkOutputFiles(
  outputs: readonly OutputFileOption[],
  inputs: readonly InputFileOption[],
  force: boolean,
): void {
  const given = outputs.filter((o): o is { option: string; file: string } => o.file !== undefined);
  const inputIds = inputs
    .filter((i): i is InputFileOption & { file: string } => typeof i.file === 'string' && i.file !== '')
    .map((i) => ({ ...i, id: fileIdentity(i.file) }));
  for (const o of given) {
    if (o.file === '') throw new UsageError(`--${o.option} must name a file, got ""`);
    const id = fileIdentity(o.file);
    if (id && fs.statSync(o.file).isDirectory())
      throw new UsageError(`--${o.option} must name a file, got "${o.file}" (a folder)`);
    if (id) {
      const input = inputIds.find((i) => i.id !== null && sameFile(i.id, id));
      if (input)
        throw new UsageError(
          `--${o.option} ${o.file} is ${input.what} ${input.file}: refusing to write over an input, even with --force`,
        );
    }
    let exists = id !== null;
    try {
      fs.lstatSync(o.file); // a dangling symlink exists too: writing would follow it
      exists = true;
    } catch {
      // absent
    }
    if (exists && !force) throw new UsageError(`--${o.option} ${o.file} already exists; pass --force to overwrite it`);
  }
  for (let a = 0; a < given.length; a++) {
    for (let b = a + 1; b < given.length; b++) {
      const ia = fileIdentity(given[a].file);
      const ib = fileIdentity(given[b].file);
      if (path.resolve(given[a].file) === path.resolve(given[b].file) || (ia && ib && sameFile(ia, ib))) {
        throw new UsageError(`--${given[a].option} and --${given[b].option} name the same file (${given[a].file})`);
      }
    }
  }
}

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
