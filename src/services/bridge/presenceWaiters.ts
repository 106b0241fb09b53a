import type { LinkClock } from '../robotLink/linkClock';

// Who waits for a link to become present (acquire() before its first command), each with a
// deadline on the link's clock.

export class PresenceWaiters {
  private readonly waiters = new Set<() => void>();

  constructor(private readonly clock: LinkClock) {}

  /** Resolves at the next present(); rejects with `timeoutError()` after `timeoutMs`. */
  wait(timeoutMs: number, timeoutError: () => Error): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        this.clock.clearTimeout(t);
        this.waiters.delete(done);
        resolve();
      };
      const t = this.clock.setTimeout(() => {
        this.waiters.delete(done);
        reject(timeoutError());
      }, timeoutMs);
      this.waiters.add(done);
    });
  }

  /** The link is present: every waiter resolves. */
  present(): void {
    for (const w of [...this.waiters]) w();
  }
}
