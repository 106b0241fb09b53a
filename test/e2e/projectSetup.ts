import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureRendererBuilt, launchChromiumServer } from '../helpers/browserHarness';

// Global setup of the e2e project (vitest.config.ts): what every end-to-end file would otherwise
// make again. The renderer is built once (when stale), one Chromium serves every file (each file
// opens its pages in contexts of their own: test/e2e/consoleSession.ts), and one folder holds the
// fixtures files share, built by the first file that needs one (test/e2e/projectFixtures.ts).

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the project's shared fixtures are built; absent when a file runs without this setup. */
    e2eFixtureDir?: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await ensureRendererBuilt();
  const browser = await launchChromiumServer();
  const fixtureDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-e2e-fixtures-'));
  project.provide('e2eBrowserWsEndpoint', browser.wsEndpoint());
  project.provide('e2eFixtureDir', fixtureDir);
  return async () => {
    await browser.close();
    fs.rmSync(fixtureDir, { recursive: true, force: true });
  };
}
