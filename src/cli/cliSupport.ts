import { parseArgs, type ParseArgsConfig } from 'node:util';
import { InputError } from '../domain/problems';

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

export interface CliIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

export const processIo: CliIo = {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
};

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses a subcommand's options (strict: unknown options are usage errors) and refuses more
 * than `maxPositionals` positional arguments. `--help` is answered by main() before this runs.
 */
export function parse<O extends Options>(argv: string[], options: O, usage: string, maxPositionals = 0) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message.split('\n')[0]}\n${usage}`);
  }
  if (parsed.positionals.length > maxPositionals) throw new UsageError(`unexpected argument "${parsed.positionals[maxPositionals]}"\n${usage}`);
  return parsed;
}

export const isHelpRequest = (argv: readonly string[]): boolean => argv.includes('--help') || argv.includes('-h');

/** A frame-rate option (clip fps): in (0, 1000]. */
export const fpsOption = (value: string | boolean | undefined, name = 'fps'): number | undefined =>
  numberOption(value, name, (v) => v > 0 && v <= 1000, 'a frame rate in (0, 1000]');

/** A TCP port option; 0 lets the system choose. */
export const portOption = (value: string | boolean | undefined): number | undefined =>
  numberOption(value, 'port', (v) => Number.isInteger(v) && v >= 0 && v < 65536, 'a TCP port (0 = any free port)');

/** Parses a numeric option; `undefined` when absent. */
export function numberOption(value: string | boolean | undefined, name: string, check: (v: number) => boolean, what: string): number | undefined {
  if (value === undefined) return undefined;
  const v = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(v) || !check(v)) {
    throw new UsageError(`--${name} must be ${what}, got "${String(value)}"`);
  }
  return v;
}

export function printJson(io: CliIo, doc: unknown): void {
  io.stdout(`${JSON.stringify(doc, null, 2)}\n`);
}

/** Turns an error into the one-line reason printed on stderr and the exit code. */
export function reportError(io: CliIo, err: unknown): number {
  if (err instanceof UsageError) {
    io.stderr(`motionbench: ${err.message}\n`);
    return 2;
  }
  if (err instanceof InputError) {
    io.stderr(`motionbench: ${err.message.replace(/\n/g, '\n  ')}\n`);
    return 1;
  }
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT' && e.path) {
    io.stderr(`motionbench: ${e.path}: no such file\n`);
    return 1;
  }
  io.stderr(`motionbench: ${e instanceof Error ? e.message : String(e)}\n`);
  return 1;
}

/** Resolves with the signal's name at the first SIGINT or SIGTERM (long-running servers stop cleanly on either). */
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
