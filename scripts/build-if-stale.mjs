// The first half of `npm run host`: build the desktop bundles (electron-vite: main, preload and the
// renderer the host serves) when out/renderer is missing or older than its sources, so the
// browser console never shows an old UI against new services. Says in one line why it builds.
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { rendererBundleState } from './rendererBundle.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const state = rendererBundleState(repo);
if (state !== 'fresh') {
  process.stderr.write(
    state === 'missing'
      ? 'out/renderer is missing: building the console (npm run build, about 10 s)\n'
      : 'out/renderer is older than its sources: rebuilding the console (npm run build, about 10 s)\n',
  );
  const { build } = await import('electron-vite');
  await build({ root: repo, logLevel: 'error' });
}
