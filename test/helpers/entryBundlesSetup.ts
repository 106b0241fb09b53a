// vitest globalSetup: the entry bundles (src/services/entries/entryBundles.mjs) and those of the
// tests' own child programs (test/helpers/tsChild.ts) rebuilt where a source changed since the last
// build, so the processes and worker threads the tests start run the code under test from its
// bundle rather than compiling it through tsx at every start.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './sharedData';
import { TEST_CHILD_ENTRIES } from './tsChild';

export default function setup(): void {
  execFileSync(
    process.execPath,
    [path.join(REPO_ROOT, 'scripts/build-entries.mjs'), '--if-stale', ...TEST_CHILD_ENTRIES],
    { cwd: REPO_ROOT, stdio: 'inherit' },
  );
}
