// Builds the bundle of every TypeScript entry that starts a process or worker thread
// (src/services/entries/entryBundles.mjs says what they are and how they are loaded). Run by
// `npm install` (postinstall) and before the tests; `--if-stale` builds only the bundles whose
// sources changed; further arguments name more entries (repository-relative: the tests' own
// child programs), bundled and checked the same way. Each bundle is written under a temporary
// name and renamed into place, so a process starting meanwhile reads a whole bundle, old or new.
// The inputs are stat'ed after the build: a file saved during the build may be recorded with its
// new mtime beside the old code (rebuild after editing during a build).
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import {
  REPO_ROOT,
  TYPESCRIPT_ENTRIES,
  bundlePathOf,
  bundleStaleness,
  inputsPathOf,
} from '../src/services/entries/entryBundles.mjs';

/**
 * Keeps each module's `import.meta.url` its own: inside one bundle every module would otherwise
 * see the bundle's URL, and paths resolved from it would point into out/entries.
 */
const ownImportMetaUrl = {
  name: 'own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = await fs.promises.readFile(args.path, 'utf8');
      const others = source.match(/import\.meta\.(?!url\b)[A-Za-z_]+/);
      if (others) throw new Error(`${args.path}: ${others[0]} is not kept in a bundle; use import.meta.url`);
      if (!source.includes('import.meta.url')) return undefined;
      return {
        contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
        loader: /\.[cm]?ts$/.test(args.path) ? 'ts' : 'js',
        resolveDir: path.dirname(args.path),
      };
    });
  },
};

async function buildEntry(entry) {
  const outfile = bundlePathOf(entry);
  const result = await esbuild.build({
    absWorkingDir: REPO_ROOT,
    entryPoints: [path.join(REPO_ROOT, entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    // Class and function names as in the source (error names, logs).
    keepNames: true,
    sourcemap: 'linked',
    metafile: true,
    write: false,
    outfile,
    plugins: [ownImportMetaUrl],
    logLevel: 'warning',
  });
  const inputs = Object.keys(result.metafile.inputs)
    .filter((rel) => !rel.includes('node_modules/'))
    .sort()
    .map((rel) => {
      const st = fs.statSync(path.join(REPO_ROOT, rel));
      return [rel, st.size, st.mtimeMs];
    });
  fs.mkdirSync(path.dirname(outfile), { recursive: true });
  const tmp = `.${process.pid}.tmp`;
  for (const f of result.outputFiles) {
    fs.writeFileSync(f.path + tmp, f.contents);
    fs.renameSync(f.path + tmp, f.path);
  }
  const manifest = inputsPathOf(outfile);
  fs.writeFileSync(manifest + tmp, `${JSON.stringify({ entry, inputs })}\n`);
  fs.renameSync(manifest + tmp, manifest);
  return inputs.length;
}

const args = process.argv.slice(2);
const ifStale = args.includes('--if-stale');
const entries = [...TYPESCRIPT_ENTRIES, ...args.filter((a) => !a.startsWith('--'))];
const todo = entries.filter((e) => !ifStale || bundleStaleness(e) !== null);
const t0 = performance.now();
const counts = await Promise.all(todo.map(buildEntry));
if (todo.length > 0) {
  const modules = counts.reduce((a, b) => a + b, 0);
  process.stderr.write(
    `entry bundles: ${todo.length} of ${entries.length} built (${modules} source modules) in ${Math.round(performance.now() - t0)} ms\n`,
  );
}
