// The tests' own child programs (TypeScript run in a `node` process of its own), declared once:
// bundled before the tests with the product's entries (test/helpers/entryBundlesSetup.ts), so a
// child starts from its bundle while its sources are unchanged, else through tsx.
import path from 'node:path';
import { resolveEntry } from '../../src/services/entries/entryBundles.mjs';
import { REPO_ROOT } from './sharedData';

export const TEST_CHILD_ENTRIES = [
  'test/helpers/hostChild.ts',
  'test/helpers/traceChild.ts',
  'test/helpers/hostileLoadChild.ts',
  'test/helpers/hostileRobotChild.ts',
  'test/helpers/keeperConsoleChild.ts',
  'test/integration/lastResortChild.ts',
  'test/integration/g1RunnerCrashChild.ts',
  'test/integration/g1RunnerChild.ts',
  'test/integration/g1RunnerConsoleChild.ts',
  'bench/robotLinkPublisher.ts',
] as const;

/** `node` arguments that run the child program `file` (absolute, or relative to the repository). */
export function nodeArgsFor(file: string): string[] {
  const { file: source, bundle } = resolveEntry(path.resolve(REPO_ROOT, file), { entries: TEST_CHILD_ENTRIES });
  return bundle !== null ? [bundle] : ['--import', 'tsx', source];
}
