// Whether out/renderer (the console that `motionbench host` serves and the e2e tests load) is
// missing, of the other flavour, or older than the sources it is built from. Shared by
// `npm run host` (scripts/build-if-stale.mjs) and the e2e harness (test/helpers/browserHarness.ts),
// so both rebuild on the same rule. The flavours (electron.vite.config.ts): `production` without
// the test hooks, `e2e` with them.
import fs from 'node:fs';
import path from 'node:path';

/** What the renderer bundle is built from, relative to the repository root. */
const RENDERER_SOURCES = ['renderer', 'src/api', 'src/domain', 'electron.vite.config.ts', 'scripts/rendererBundle.mjs'];

/** The file in the bundle that names its flavour. */
export const RENDERER_FLAVOUR_FILE = 'renderer-flavour.txt';

function newestMtimeMs(p) {
  const st = fs.statSync(p, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of fs.readdirSync(p)) newest = Math.max(newest, newestMtimeMs(path.join(p, entry)));
  return newest;
}

/** The flavour out/renderer was built as, or null when it does not say. */
export function rendererBundleFlavour(repo) {
  try {
    return fs.readFileSync(path.join(repo, 'out', 'renderer', RENDERER_FLAVOUR_FILE), 'utf8').trim();
  } catch {
    return null;
  }
}

/**
 * 'missing' (no out/renderer/index.html), 'other-flavour' (built as another flavour than
 * `flavour`), 'stale' (a source is newer) or 'fresh'.
 */
export function rendererBundleState(repo, flavour) {
  const built = fs.statSync(path.join(repo, 'out', 'renderer', 'index.html'), { throwIfNoEntry: false });
  if (!built) return 'missing';
  if (rendererBundleFlavour(repo) !== flavour) return 'other-flavour';
  const sources = Math.max(...RENDERER_SOURCES.map((s) => newestMtimeMs(path.join(repo, s))));
  return built.mtimeMs > sources ? 'fresh' : 'stale';
}
