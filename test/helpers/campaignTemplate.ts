import { cp, mkdtemp } from 'node:fs/promises';
import path from 'node:path';

// A qualified campaign made once and copied for each test that needs one of its own (a finished
// trial counts towards its pair's trials, so tests that run trials must not share a campaign). The
// qualification is deterministic for a given workload, binding, clip and model, so every copy
// holds the same admitted pair a fresh qualification would give, without running the simulator
// again. The qualifying store is closed before anything is copied (no writer lock, no WAL in flight).

export class CampaignTemplate {
  private template: Promise<string> | null = null;

  /**
   * @param root a directory of the test's own; the template and the copies are made under it
   * @param qualify writes a qualified campaign into the directory it is given, and closes it
   */
  constructor(
    private readonly root: string,
    private readonly qualify: (dir: string) => Promise<void>,
  ) {}

  /** The template's directory, qualified on first use. */
  made(): Promise<string> {
    this.template ??= (async () => {
      const dir = path.join(this.root, 'template');
      await this.qualify(dir);
      return dir;
    })();
    return this.template;
  }

  /** A fresh copy of the template in a directory of its own under root. */
  async copy(): Promise<string> {
    const template = await this.made();
    const dir = await mkdtemp(path.join(this.root, 'campaign-'));
    await cp(template, dir, { recursive: true });
    return dir;
  }
}
