// Types of src/services/entries/entryBundles.mjs for the TypeScript that imports it.
export declare const REPO_ROOT: string;
export declare const BUNDLE_DIR: string;
export declare const TYPESCRIPT_ENTRIES: readonly string[];
export declare function bundlePathOf(entry: string, bundleDir?: string): string;
export declare function inputsPathOf(bundle: string): string;
export declare function bundleStaleness(entry: string, bundleDir?: string): string | null;
export interface ResolvedEntry {
  /** The TypeScript source file. */
  file: string;
  /** The fresh bundle that runs instead, or null. */
  bundle: string | null;
  /** Why the source runs (no bundle, a changed input, …), or null when the bundle runs. */
  why: string | null;
}
export declare function resolveEntry(
  entryUrl: URL | string,
  options?: { entries?: readonly string[]; bundleDir?: string },
): ResolvedEntry;
export declare function importEntry(entryUrl: URL | string): Promise<Record<string, unknown>>;
