import { fileURLToPath } from 'node:url';
import path from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';
import type { Plugin, UserConfig } from 'vite';
import { RENDERER_FLAVOUR_FILE, type RendererFlavour } from './scripts/rendererBundle.mjs';

// Builds the three parts of the desktop app into out/:
//   out/main/index.js       Electron main process (ESM: package.json has "type": "module")
//   out/preload/index.cjs   preload, CommonJS: sandboxed preloads cannot be ES modules
//   out/renderer/           the React console (also served by `motionbench host`)
// The renderer config is exported on its own so tests can build just the renderer with Vite.
//
// The renderer is built in one of two flavours. `production` (npm run build, npm start, npm run
// host) leaves out the test hooks (renderer/src/testing/testHooks.ts). `e2e` (the end-to-end
// harness, the renderer bench) installs them: read-only views of the stores on
// window.__motionbench that the tests drive the console through. `__MOTIONBENCH_TEST_HOOKS__` is
// a constant at build time, so Rollup drops the hooks' code from the production bundle. The
// bundle names its flavour in RENDERER_FLAVOUR_FILE, so a build of the other flavour in
// out/renderer counts as stale (scripts/rendererBundle.mjs).

const root = path.dirname(fileURLToPath(import.meta.url));
const r = (...p: string[]): string => path.resolve(root, ...p);

/** Writes the flavour's name into the bundle. */
function flavourFile(flavour: RendererFlavour): Plugin {
  return {
    name: 'motionbench-renderer-flavour',
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: RENDERER_FLAVOUR_FILE, source: `${flavour}\n` });
    },
  };
}

function rendererConfig(flavour: RendererFlavour): UserConfig {
  return {
    root: r('renderer'),
    base: './',
    plugins: [react(), flavourFile(flavour)],
    define: { __MOTIONBENCH_TEST_HOOKS__: JSON.stringify(flavour === 'e2e') },
    build: {
      outDir: r('out/renderer'),
      emptyOutDir: true,
      target: 'es2022',
      chunkSizeWarningLimit: 2000,
      rollupOptions: {
        input: r('renderer/index.html'),
        onwarn(warning, warn) {
          // zod ships comments Rollup cannot place; harmless, and not ours to fix.
          if (warning.code === 'INVALID_ANNOTATION' && warning.id?.includes('node_modules')) return;
          warn(warning);
        },
      },
    },
  };
}

/** The console as shipped: no test hooks. */
export const rendererViteConfig: UserConfig = rendererConfig('production');
/** The console the end-to-end tests and the renderer bench drive: with the test hooks. */
export const rendererE2eViteConfig: UserConfig = rendererConfig('e2e');

export default defineConfig({
  main: {
    build: {
      outDir: r('out/main'),
      rollupOptions: { input: { index: r('main/index.ts') } },
    },
  },
  preload: {
    build: {
      outDir: r('out/preload'),
      rollupOptions: {
        input: { index: r('main/preload.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: rendererViteConfig,
});
