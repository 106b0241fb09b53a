import { fileURLToPath } from 'node:url';
import path from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';
import type { UserConfig } from 'vite';

// Builds the three parts of the desktop app into out/:
//   out/main/index.js       Electron main process (ESM: package.json has "type": "module")
//   out/preload/index.cjs   preload, CommonJS: sandboxed preloads cannot be ES modules
//   out/renderer/           the React console (also served by `motionbench host`)
// The renderer config is exported on its own so tests can build just the renderer with Vite.

const root = path.dirname(fileURLToPath(import.meta.url));
const r = (...p: string[]): string => path.resolve(root, ...p);

export const rendererViteConfig: UserConfig = {
  root: r('renderer'),
  base: './',
  plugins: [react()],
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
