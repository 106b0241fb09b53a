// Types of scripts/rendererBundle.mjs for the TypeScript that imports it (the e2e harness).
export declare function rendererBundleState(repo: string): 'missing' | 'stale' | 'fresh';
