// Types of scripts/rendererBundle.mjs for the TypeScript that imports it (the e2e harness, the Vite config).
export type RendererFlavour = 'production' | 'e2e';
export declare const RENDERER_FLAVOUR_FILE: string;
export declare function rendererBundleFlavour(repo: string): string | null;
export declare function rendererBundleState(
  repo: string,
  flavour: RendererFlavour,
): 'missing' | 'other-flavour' | 'stale' | 'fresh';
