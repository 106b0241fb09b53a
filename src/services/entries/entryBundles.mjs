// The TypeScript modules that start a process or a worker thread of their own, and how they are
// loaded. Plain JavaScript: it runs before any TypeScript can.
//
// Each entry has a prebuilt bundle (scripts/build-entries.mjs, run by `npm install` and before
// the tests): one ES module with the entry's whole source graph, packages left external, and
// every module's `import.meta.url` kept as the URL of its own source file, so that paths resolved
// from it (worker bootstraps, the robot model, the DDS addon, package.json) are the same whether
// the entry runs from its bundle or from source. Beside each bundle, `<bundle>.inputs.json` lists
// the source files it was built from with their size and mtime.
//
// importEntry() runs the bundle only while every one of those files is unchanged; otherwise (an
// edited source, no bundle yet, MOTIONBENCH_FROM_SOURCE=1) it runs the TypeScript through tsx, as
// before any bundle existed, so a bundle can make a start faster but never run stale code. The
// bundle starts in about a third of the time: tsx compiles and resolves each of an entry's
// hundreds of modules through its loader hooks at every start, in every process and worker.
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { URL, fileURLToPath, pathToFileURL } from 'node:url';

/** The repository root (this file is src/services/entries/entryBundles.mjs). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Where the bundles are written, mirroring the source tree. */
export const BUNDLE_DIR = path.join(REPO_ROOT, 'out', 'entries');

/** Every TypeScript entry started in a process or worker thread of its own (repository-relative). */
export const TYPESCRIPT_ENTRIES = [
  'src/cli/main.ts',
  'src/services/sim/simWorker.ts',
  'src/services/g1Runner/g1RunnerWorker.ts',
  'src/services/robotEmulator/onboardComputerWorker.ts',
  'src/services/console/fileWorker.ts',
  'src/services/robotLink/ros2DefinitionWorker.ts',
  'src/services/bridge/commandDecodeWorker.ts',
  'src/services/interlock/interlockKeeper.ts',
  'src/services/interlock/interlockEmulatorChild.ts',
];

/** The bundle of a repository-relative entry (`src/x/y.ts` → `out/entries/src/x/y.mjs`). */
export function bundlePathOf(entry, bundleDir = BUNDLE_DIR) {
  return path.join(bundleDir, entry.replace(/\.ts$/, '.mjs'));
}

/** The inputs manifest beside a bundle. */
export function inputsPathOf(bundle) {
  return `${bundle}.inputs.json`;
}

/**
 * Why the bundle of `entry` cannot run (missing, unreadable manifest, a changed input), or null
 * when every source file it was built from is as it was.
 */
export function bundleStaleness(entry, bundleDir = BUNDLE_DIR) {
  const bundle = bundlePathOf(entry, bundleDir);
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(inputsPathOf(bundle), 'utf8'));
    fs.statSync(bundle);
  } catch {
    return 'no bundle';
  }
  if (!Array.isArray(manifest.inputs)) return 'manifest without inputs';
  for (const [rel, size, mtimeMs] of manifest.inputs) {
    let st;
    try {
      st = fs.statSync(path.join(REPO_ROOT, rel));
    } catch {
      return `${rel} is gone`;
    }
    if (st.size !== size || st.mtimeMs !== mtimeMs) return `${rel} changed`;
  }
  return null;
}

/**
 * What importEntry() would load for `entryUrl` (a file: URL or path inside the repository): its
 * fresh bundle, or the TypeScript source (with the reason the bundle is not used). `entries`: the
 * bundled entries it may be one of (the tests pass their own child programs).
 */
export function resolveEntry(entryUrl, { entries = TYPESCRIPT_ENTRIES, bundleDir = BUNDLE_DIR } = {}) {
  const file =
    entryUrl instanceof URL || String(entryUrl).startsWith('file:') ? fileURLToPath(entryUrl) : String(entryUrl);
  const entry = path.relative(REPO_ROOT, file).split(path.sep).join('/');
  if (process.env.MOTIONBENCH_FROM_SOURCE === '1') return { file, bundle: null, why: 'MOTIONBENCH_FROM_SOURCE=1' };
  if (!entries.includes(entry)) return { file, bundle: null, why: `${entry} is not a bundled entry` };
  const why = bundleStaleness(entry, bundleDir);
  return why === null ? { file, bundle: bundlePathOf(entry, bundleDir), why: null } : { file, bundle: null, why };
}

/**
 * Imports the TypeScript entry at `entryUrl`: its bundle when fresh, else the source through
 * tsx. Resolves to the module's namespace.
 */
export async function importEntry(entryUrl) {
  const { file, bundle } = resolveEntry(entryUrl);
  if (bundle !== null) {
    // The bundle carries a linked source map: `node --enable-source-maps` names the TypeScript
    // lines in stack traces. Not turned on here: the first stack formatted would parse megabytes of
    // map, a stall a real-time thread must not take.
    return import(pathToFileURL(bundle).href);
  }
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(file).href);
}
