import process from 'node:process';

// The last resort (DESIGN §6): when the services process is about to die of an
// error nobody caught — an uncaught exception, an unhandled rejection — every robot link still
// open is told stop and damp before the process exits, so a bug in the console can never leave
// a robot running a clip with nobody watching. Links register an emergency stop while they are
// open (BridgeClientBackend does so for itself); the handler calls each synchronously (each
// writes its commands on its socket at once), gives the sockets `flushMs` to carry them, then
// exits with EXIT_FATAL. An episode that was recording stays `running` in its campaign and is
// marked `infrastructure_error`, with its recorded frames, when the campaign is next opened
// (the crash-recovery path of docs/TRACE_STORE.md, the same as after a kill -9).

/** Exit code of a process ended by the last-resort handler (EX_SOFTWARE). */
export const EXIT_FATAL = 70;

export interface EmergencyStop {
  /** Who is stopped (for the log line). */
  readonly name: string;
  /** Writes stop (and damp for a robot) now, synchronously; must not throw, must not await. */
  stopNow(reason: string): void;
}

const stops = new Set<EmergencyStop>();

/** Registers a link's emergency stop; returns the unregister. */
export function registerEmergencyStop(stop: EmergencyStop): () => void {
  stops.add(stop);
  return () => stops.delete(stop);
}

/** Calls every registered emergency stop; returns the names of those that were called. */
export function stopEveryRobot(reason: string, log: (line: string) => void = () => {}): string[] {
  const names: string[] = [];
  for (const s of [...stops]) {
    try {
      s.stopNow(reason);
      names.push(s.name);
    } catch (err) {
      log(`motionbench: last resort: stop of ${s.name} failed: ${(err as Error)?.message ?? String(err)}`);
    }
  }
  return names;
}

export interface LastResortOptions {
  log?: (line: string) => void;
  /** Time the sockets get to carry the stops before the process exits, ms (default 250). */
  flushMs?: number;
  /** How the process ends (tests replace it); default process.exit. */
  exit?: (code: number) => void;
}

let installed: (() => void) | null = null;

/**
 * Installs the handler once per process (a second call returns the first's uninstall). The
 * process still dies — an uncaught error leaves its state unknown — but only after the robots
 * were told to stop.
 */
export function installLastResort(options: LastResortOptions = {}): () => void {
  if (installed) return installed;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const flushMs = options.flushMs ?? 250;
  let dying = false;
  const fatal = (kind: string, err: unknown): void => {
    const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
    if (dying) {
      log(`motionbench: ${kind} while stopping: ${text}`);
      return;
    }
    dying = true;
    log(`motionbench: fatal ${kind}: ${text}`);
    const stopped = stopEveryRobot(
      `console process failed (${kind}): ${err instanceof Error ? err.message : String(err)}`.slice(0, 200),
      log,
    );
    log(
      `motionbench: last resort: stop and damp sent to ${stopped.length} link(s)${stopped.length > 0 ? `: ${stopped.join(', ')}` : ''}; exiting`,
    );
    // A ref'd timer: it also holds an otherwise idle loop open until the stops are written.
    setTimeout(() => exit(EXIT_FATAL), flushMs);
  };
  const onException = (err: unknown): void => fatal('uncaught exception', err);
  const onRejection = (err: unknown): void => fatal('unhandled rejection', err);
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  installed = () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
    installed = null;
  };
  return installed;
}
