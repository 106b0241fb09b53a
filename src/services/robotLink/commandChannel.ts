import type { Presence, StopDelivery } from '../../domain/backend/backend';
import type { CommandName, WireCommand } from '../../domain/bridge/g1BridgeContract';
import type { LinkClock, TimerHandle } from './linkClock';

// Commands to a g1-bridge/1 server and their answers (docs/G1_BRIDGE.md §4–5). Every command goes
// out with a fresh `seq`; the server answers it in a wbc_status `ack` (or refuses it in a status
// `g1-bridge/refused/<seq>`), which settles it.
//
// - An ordinary command (prepare, start, reset, …) resolves with the ack's message, rejects with a
//   CommandRefusedError when refused, with an Error when no answer came within its timeout, or
//   when the socket closed first (failAll).
// - A safety command (stop, damp: `sendSafety`) never rejects. It is written at once on any open
//   socket, whatever the link's freshness, and written again (a new seq each time) every
//   SAFETY_RETRY_MS until the server answers any of its writes — ack or refusal, both are answers
//   retrying cannot change — the socket closes, or SAFETY_MAX_ATTEMPTS writes went unanswered.
//   The StopDelivery says which, how often it was written and when.
// The socket itself is not here: `openPath()` gives the write function while commands can be
// written (a socket is open and the server accepts client messages), null otherwise.

/** The server answered a command with a refusal (its ack said no, or a refused status). */
export class CommandRefusedError extends Error {
  override readonly name = 'CommandRefusedError';
}

/** A stop/damp is written again this often until answered (ms). */
export const SAFETY_RETRY_MS = 100;
/** … at most this many times (2 s of retries). */
export const SAFETY_MAX_ATTEMPTS = 20;

/** Writes one command with its seq now; throws what the socket throws. */
export type CommandWrite = (cmd: WireCommand, seq: number) => void;

export interface CommandChannelOptions {
  clock: LinkClock;
  /** The link's name and URL, for messages. */
  name: string;
  url: string;
  /** The write function while commands can be written on an open socket (freshness aside), else null. */
  openPath: () => CommandWrite | null;
  /** The link's presence now (a safety command that finds no socket says it). */
  presence: () => Presence;
  /** After every safety delivery settled (the caller may now drop a silent socket). */
  onSafetySettled?: () => void;
  safetyRetryMs?: number;
  safetyMaxAttempts?: number;
}

interface PendingAck {
  command: CommandName;
  resolve: (message: string) => void;
  reject: (err: Error) => void;
  /** The ack deadline; null for a safety command, whose delivery keeps its own retry timer. */
  timer: TimerHandle | null;
}

export class CommandChannel {
  private seq = 0;
  private readonly pending = new Map<number, PendingAck>();
  private safetyOpen = 0;
  private readonly retryMs: number;
  private readonly maxAttempts: number;

  constructor(private readonly o: CommandChannelOptions) {
    this.retryMs = o.safetyRetryMs ?? SAFETY_RETRY_MS;
    this.maxAttempts = o.safetyMaxAttempts ?? SAFETY_MAX_ATTEMPTS;
  }

  /** The next seq (also for writes that expect no answer, e.g. the last resort's). */
  nextSeq(): number {
    return ++this.seq;
  }

  /** Safety deliveries still waiting for an answer. */
  get safetyInFlight(): number {
    return this.safetyOpen;
  }

  /** Commands written and not answered yet. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Writes `cmd` with `write` and waits for its answer for at most timeoutMs. */
  send(cmd: WireCommand, write: CommandWrite, timeoutMs: number): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const seq = this.nextSeq();
      const timer = this.o.clock.setTimeout(() => {
        this.pending.delete(seq);
        reject(new Error(`${cmd.command}: no answer from ${this.o.name} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(seq, { command: cmd.command, resolve, reject, timer });
      try {
        write(cmd, seq);
      } catch (err) {
        this.o.clock.clearTimeout(timer);
        this.pending.delete(seq);
        reject(new Error(`${cmd.command}: send failed: ${(err as Error).message}`));
      }
    });
  }

  /** Delivers a stop or damp (see the header): written now, retried until answered; never rejects. */
  sendSafety(command: 'stop' | 'damp', reason: string, cmd: WireCommand): Promise<StopDelivery> {
    const { clock } = this.o;
    this.safetyOpen++;
    return new Promise<StopDelivery>((resolve) => {
      const seqs: number[] = [];
      let attempts = 0;
      let firstSentAtMs: number | null = null;
      let retry: TimerHandle | null = null;
      let settled = false;
      const finish = (answer: StopDelivery['answer'], message: string): void => {
        if (settled) return;
        settled = true;
        clock.clearTimeout(retry);
        for (const q of seqs) this.pending.delete(q);
        this.safetyOpen--;
        resolve({ command, reason, attempts, answer, message, firstSentAtMs, settledAtMs: clock.nowMs() });
        this.o.onSafetySettled?.();
      };
      const attempt = (): void => {
        retry = null;
        if (settled) return;
        if (attempts >= this.maxAttempts)
          return finish(null, `no answer from ${this.o.name} to ${attempts} writes over ${attempts * this.retryMs} ms`);
        const write = this.o.openPath();
        if (!write) {
          return finish(
            null,
            attempts === 0
              ? `not sent: no open socket to ${this.o.url} (${this.o.presence()})`
              : `the socket to ${this.o.url} closed after ${attempts} write(s), unanswered`,
          );
        }
        const seq = this.nextSeq();
        seqs.push(seq);
        this.pending.set(seq, {
          command: cmd.command,
          resolve: (m) => finish('ok', m),
          // A refusal is an answer (retrying cannot change it); a failAll (the socket closed) is not.
          reject: (err) =>
            err instanceof CommandRefusedError
              ? finish('refused', err.message)
              : finish(null, `${err.message} after ${attempts} write(s)`),
          timer: null,
        });
        try {
          write(cmd, seq);
          attempts++;
          firstSentAtMs ??= clock.nowMs();
        } catch (err) {
          return finish(null, `${command} not written: ${(err as Error).message}`);
        }
        retry = clock.setTimeout(attempt, this.retryMs);
      };
      attempt();
    });
  }

  /** The server's ack of `seq` (wbc_status `ack`): settles the command if it is pending. */
  answer(seq: number, ack: { ok: boolean; command: string | null; code: string; message: string }): void {
    const p = this.take(seq);
    if (!p) return;
    if (ack.ok) p.resolve(ack.message);
    else
      p.reject(
        new CommandRefusedError(`${ack.command ?? p.command} refused by ${this.o.name} (${ack.code}): ${ack.message}`),
      );
  }

  /** The server refused `seq` in a status message (`g1-bridge/refused/<seq>`). */
  refuse(seq: number, message: string): void {
    this.take(seq)?.reject(new CommandRefusedError(message));
  }

  /** The socket closed (or the link closed): every pending command fails with `err`. */
  failAll(err: Error): void {
    for (const [seq, p] of [...this.pending]) {
      this.o.clock.clearTimeout(p.timer);
      this.pending.delete(seq);
      p.reject(new Error(`${p.command}: ${err.message}`));
    }
  }

  private take(seq: number): PendingAck | null {
    const p = this.pending.get(seq);
    if (!p) return null;
    this.o.clock.clearTimeout(p.timer);
    this.pending.delete(seq);
    return p;
  }
}
