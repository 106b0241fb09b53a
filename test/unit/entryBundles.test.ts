// The entry bundles (src/services/entries/entryBundles.mjs): every TypeScript module started in a
// process or worker thread of its own is listed, a bundle keeps each module's own import.meta.url,
// and a bundle runs only while every source it was built from is unchanged.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as entries from '../../src/services/entries/entryBundles.mjs';
import { REPO_ROOT } from '../helpers/sharedData';
import { TEST_CHILD_ENTRIES, nodeArgsFor } from '../helpers/tsChild';

const { BUNDLE_DIR, TYPESCRIPT_ENTRIES, bundlePathOf, bundleStaleness, inputsPathOf, resolveEntry } = entries;

const TS_CHILD = path.join(REPO_ROOT, 'test/helpers/tsChild.ts');
const THIS_FILE = path.join(REPO_ROOT, 'test/unit/entryBundles.test.ts');

/** Every `new URL('./x.ts', import.meta.url)` in src: a TypeScript module started by path. */
function entriesStartedByPath(): string[] {
  const found = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const f = path.join(dir, e.name);
      if (e.isDirectory()) walk(f);
      else if (/\.(ts|mjs)$/.test(e.name)) {
        for (const m of fs.readFileSync(f, 'utf8').matchAll(/new URL\('([^']+\.ts)', import\.meta\.url\)/g)) {
          found.add(
            path
              .relative(REPO_ROOT, path.resolve(path.dirname(f), m[1]))
              .split(path.sep)
              .join('/'),
          );
        }
      }
    }
  };
  walk(path.join(REPO_ROOT, 'src'));
  return [...found].sort();
}

describe('entry bundles', () => {
  it('lists every TypeScript module the services start by path, and the CLI', () => {
    const started = entriesStartedByPath();
    expect(started.length).toBeGreaterThanOrEqual(7);
    expect([...TYPESCRIPT_ENTRIES].sort()).toEqual(['src/cli/main.ts', ...started].sort());
  });

  it('is fresh after the build, and each bundle keeps the import.meta.url of every module it holds', () => {
    for (const entry of TYPESCRIPT_ENTRIES) {
      expect(bundleStaleness(entry), entry).toBeNull();
      expect(resolveEntry(path.join(REPO_ROOT, entry)).bundle).toBe(bundlePathOf(entry));
    }
    const sim = fs.readFileSync(bundlePathOf('src/services/sim/simWorker.ts'), 'utf8');
    expect(sim).not.toContain('import.meta.url');
    const cli = fs.readFileSync(bundlePathOf('src/cli/main.ts'), 'utf8');
    expect(cli).not.toContain('import.meta.url');
    // The simulator's worker bootstrap is resolved from embeddedSimulator.ts's own URL.
    expect(cli).toContain(
      JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'src/services/sim/embeddedSimulator.ts')).href),
    );
  });

  describe('a bundle whose sources changed is not run', () => {
    const entry = 'src/services/interlock/interlockEmulatorChild.ts';
    let dir: string;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-entry-bundles-'));
      const bundle = bundlePathOf(entry, dir);
      fs.mkdirSync(path.dirname(bundle), { recursive: true });
      fs.copyFileSync(bundlePathOf(entry), bundle);
      fs.copyFileSync(inputsPathOf(bundlePathOf(entry)), inputsPathOf(bundle));
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('control: the copied bundle and manifest are fresh', () => {
      expect(bundleStaleness(entry, dir)).toBeNull();
      expect(resolveEntry(path.join(REPO_ROOT, entry), { bundleDir: dir })).toMatchObject({ why: null });
    });

    it('one input whose mtime or size differs: the source runs, with the file named', () => {
      const manifestFile = inputsPathOf(bundlePathOf(entry, dir));
      const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { inputs: [string, number, number][] };
      const original = structuredClone(manifest);
      const i = manifest.inputs.findIndex(([rel]) => rel === entry);
      expect(i).toBeGreaterThanOrEqual(0);
      manifest.inputs[i][2] -= 1;
      fs.writeFileSync(manifestFile, JSON.stringify(manifest));
      expect(bundleStaleness(entry, dir)).toBe(`${entry} changed`);
      expect(resolveEntry(path.join(REPO_ROOT, entry), { bundleDir: dir })).toMatchObject({
        bundle: null,
        why: `${entry} changed`,
      });
      manifest.inputs[i] = [...original.inputs[i]];
      manifest.inputs[i][1] += 1;
      fs.writeFileSync(manifestFile, JSON.stringify(manifest));
      expect(bundleStaleness(entry, dir)).toBe(`${entry} changed`);
      fs.writeFileSync(manifestFile, JSON.stringify({ inputs: [...original.inputs, ['src/gone.ts', 1, 1]] }));
      expect(bundleStaleness(entry, dir)).toBe('src/gone.ts is gone');
      fs.writeFileSync(manifestFile, JSON.stringify(original));
      expect(bundleStaleness(entry, dir)).toBeNull();
    });

    it('no bundle, or a module that is not an entry: the source runs', () => {
      expect(bundleStaleness('src/cli/main.ts', dir)).toBe('no bundle');
      expect(resolveEntry(path.join(REPO_ROOT, 'src/services/sim/embeddedSimulator.ts'))).toMatchObject({
        bundle: null,
        why: 'src/services/sim/embeddedSimulator.ts is not a bundled entry',
      });
    });
  });

  it("starts the tests' own child programs through nodeArgsFor (bundle or tsx), and lists each", () => {
    const spawnsThroughTsx: string[] = [];
    const listed = new Set<string>(TEST_CHILD_ENTRIES);
    const walk = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const f = path.join(dir, e.name);
        if (e.isDirectory()) walk(f);
        else if (e.name.endsWith('.ts') && f !== TS_CHILD && f !== THIS_FILE) {
          if (/'--import',\s*'tsx'/.test(fs.readFileSync(f, 'utf8')))
            spawnsThroughTsx.push(path.relative(REPO_ROOT, f));
        }
      }
    };
    walk(path.join(REPO_ROOT, 'test'));
    walk(path.join(REPO_ROOT, 'bench'));
    expect(spawnsThroughTsx.filter((f) => !f.startsWith('bench'))).toEqual([]);
    for (const entry of TEST_CHILD_ENTRIES) {
      expect(fs.existsSync(path.join(REPO_ROOT, entry)), entry).toBe(true);
      expect(nodeArgsFor(entry)).toEqual([bundlePathOf(entry)]);
    }
    // Not listed: through tsx.
    expect(listed.has('test/helpers/okHelper.ts')).toBe(false);
    expect(nodeArgsFor('test/helpers/okHelper.ts')).toEqual([
      '--import',
      'tsx',
      path.join(REPO_ROOT, 'test/helpers/okHelper.ts'),
    ]);
  });

  it('no bundled program asks whether it is the main module (in a bundle argv[1] is the bundle, not its source)', () => {
    const asksMain = /process\.argv\[1\][^\n]*import\.meta\.url|import\.meta\.url[^\n]*process\.argv\[1\]/;
    // Negative control: the form the check is for.
    expect(
      asksMain.test('if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {'),
    ).toBe(true);
    for (const entry of [...TYPESCRIPT_ENTRIES, ...TEST_CHILD_ENTRIES]) {
      const inputs = (
        JSON.parse(fs.readFileSync(inputsPathOf(bundlePathOf(entry)), 'utf8')) as { inputs: [string][] }
      ).inputs.map(([rel]) => rel);
      for (const rel of inputs) {
        expect(asksMain.test(fs.readFileSync(path.join(REPO_ROOT, rel), 'utf8')), `${entry} bundles ${rel}`).toBe(
          false,
        );
      }
    }
  });

  it('writes the bundles under out/ (not committed)', () => {
    expect(path.relative(REPO_ROOT, BUNDLE_DIR)).toBe(path.join('out', 'entries'));
  });
});
