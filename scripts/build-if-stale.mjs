// The first half of `npm run host`: build the desktop bundles (electron-vite: main, preload and the
// renderer the host serves) when out/renderer is missing, older than its sources or the end-to-end
// build (with test hooks), so the browser console never shows an old UI against new services nor
// carries the test hooks. Says in one line why it builds.
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { rendererBundleState } from './rendererBundle.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const state = rendererBundleState(repo, 'production');
if (state !== 'fresh') {
  const why = {
    missing: 'out/renderer is missing: building the console',
    'other-flavour':
      'out/renderer is not a production build (the end-to-end one carries test hooks): rebuilding the console',
    stale: 'out/renderer is older than its sources: rebuilding the console',
  }[state];
  process.stderr.write(`${why} (npm run build, about 10 s)\n`);
  const { build } = await import('electron-vite');
  await build({ root: repo, logLevel: 'error' });
}
