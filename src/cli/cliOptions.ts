import fs from 'node:fs';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DEFAULT_SHARE } from '../domain/analysis/clipSelection';
import {
  numericReadingByJsonName,
  NUMERIC_READINGS,
  READING_INFO,
  type NumericReadingKey,
} from '../domain/metrics/readings';
import { MAX_FPS, MIN_FPS } from '../domain/motion/clipCommon';
import { UsageError, type CliIo, type Command } from './cliSupport';

// The options of the `motionbench` subcommands: each command declares its option table once
// (defineCommand), one strict parser reads argv against it, and the checks shared by several
// commands (ports, worker counts, seeds, readings, output files) are written once here with the
// messages the commands print.

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

/** The values of a declared option table: a string per value option, a boolean per flag, a list per repeatable option. */
export type OptionValues<S extends string, F extends string, L extends string> = { [K in S]?: string } & {
  [K in F]?: boolean;
} & { [K in L]?: string[] };

/** What makes a required option count as missing: absent only, absent or "", or absent or blank. */
export type Missing = 'absent' | 'empty' | 'blank';

export interface CommandContext<S extends string> {
  /** The positional arguments (at most the declared number). */
  positionals: string[];
  /** The value of a required option; a usage error "--<name> is required" with the usage when missing. */
  required(name: S, missing?: Missing): string;
}

/** A command declared as data: its option table, how many positional arguments it takes, and its work. */
export interface CommandSpec<S extends string, F extends string, L extends string> {
  name: string;
  summary: string;
  usage: string;
  /** Options that take a value (`--campaign <dir>`). */
  strings?: readonly S[];
  /** Options without a value (`--json`). */
  flags?: readonly F[];
  /** Options that take a value and may be given again (`--fault a --fault b`). */
  lists?: readonly L[];
  /** Positional arguments taken at most (default none). */
  positionals?: number;
  run(values: OptionValues<S, F, L>, io: CliIo, context: CommandContext<S>): Promise<number>;
}

/** The Command of a declared spec: argv is parsed against its table before `run` sees it. */
export function defineCommand<S extends string = never, F extends string = never, L extends string = never>(
  spec: CommandSpec<S, F, L>,
): Command {
  const table: Options = {};
  for (const k of spec.strings ?? []) table[k] = { type: 'string' };
  for (const k of spec.flags ?? []) table[k] = { type: 'boolean' };
  for (const k of spec.lists ?? []) table[k] = { type: 'string', multiple: true };
  return {
    name: spec.name,
    summary: spec.summary,
    usage: spec.usage,
    run(argv, io) {
      const { values, positionals } = parse(argv, table, spec.usage, spec.positionals ?? 0);
      const given = values as OptionValues<S, F, L>;
      const required = (name: S, missing: Missing = 'empty'): string => {
        const v = (given as Record<string, string | undefined>)[name];
        if (v === undefined || (missing === 'empty' && v === '') || (missing === 'blank' && v.trim() === ''))
          throw new UsageError(`--${name} is required\n${spec.usage}`);
        return v;
      };
      return spec.run(given, io, { positionals, required });
    },
  };
}

/** An integer option in [min, max]; `what` describes it in the refusal (default "an integer in min..max"). */
export const integerOption = (
  value: string | undefined,
  name: string,
  min: number,
  max: number,
  what = `an integer in ${min}..${max}`,
): number | undefined => numberOption(value, name, (v) => Number.isInteger(v) && v >= min && v <= max, what);

/** A seed or an index: a safe integer ≥ 0. */
export const nonNegativeIntegerOption = (
  value: string | undefined,
  name: string,
  what = 'an integer ≥ 0',
): number | undefined => numberOption(value, name, (v) => Number.isSafeInteger(v) && v >= 0, what);

/** Simulator worker threads. */
export const workersOption = (value: string | undefined): number | undefined => integerOption(value, 'workers', 1, 64);

/** The share of the full clip set's utility the minimal set must reach. */
export const shareOption = (value: string | undefined): number =>
  numberOption(value, 'share', (v) => v > 0 && v <= 1, 'a number in (0, 1]') ?? DEFAULT_SHARE;

/** A numeric reading by its JSON name (default mpjpe_l_mm). */
export function readingOption(value: string | undefined): NumericReadingKey {
  const name = value ?? 'mpjpe_l_mm';
  const reading = numericReadingByJsonName(name);
  if (!reading)
    throw new UsageError(
      `--reading must be one of ${NUMERIC_READINGS.map((k) => READING_INFO[k].json).join(', ')}, got "${name}"`,
    );
  return reading;
}

/** The interface a server listens on (default loopback); "" or blanks are refused. */
export function hostOption(value: string | undefined): string {
  const host = value ?? '127.0.0.1';
  if (host.trim() === '') throw new UsageError('--host must not be empty');
  return host;
}

/** Says on stderr that a server is reachable from the network, not only from this machine. */
export function warnBeyondLoopback(io: CliIo, who: string, host: string): void {
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1')
    io.stderr(`${who}: warning: listening on ${host}, not only on loopback\n`);
}
