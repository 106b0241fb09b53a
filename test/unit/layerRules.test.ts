// The layer allowlist (.dependency-cruiser.cjs) against one fixture per forbidden import shape.
// The fixtures (test/fixtures/layers) mirror the repository's folders and are cruised with that folder
// as the baseDir and the repository's real config file, so their paths fall under the config's own
// folder patterns: loosening a rule in the config makes a case here fail.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { cruise, type ICruiseOptions, type ICruiseResult, type IModule } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG = join(REPO, '.dependency-cruiser.cjs');
const TSCONFIG = join(REPO, 'tsconfig.json');
const FIXTURES = join(REPO, 'test/fixtures/layers');
const ROOTS = ['src', 'main', 'renderer', 'test', 'bench', 'scripts', 'bin'];

async function cruiseFixtures(adjust: (options: ICruiseOptions) => void = () => {}): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(CONFIG);
  adjust(options);
  const result = await cruise(
    ROOTS,
    { ...options, baseDir: FIXTURES, tsConfig: { fileName: TSCONFIG } },
    {},
    { tsConfig: extractTSConfig(TSCONFIG) },
  );
  return result.output as ICruiseResult;
}

function moduleOf(result: ICruiseResult, source: string): IModule {
  const found = result.modules.find((m) => m.source === source);
  if (!found) throw new Error(`${source} was not cruised`);
  return found;
}

function violationsFrom(result: ICruiseResult, source: string) {
  return result.summary.violations.filter((v) => v.from === source);
}

/** One forbidden import shape per fixture: the file, the target it must be reported for, how it imports. */
const FORBIDDEN: { name: string; file: string; to: RegExp; dependencyType: string }[] = [
  {
    name: 'bin -> src/services beyond the entry loader',
    file: 'bin/toServices.mjs',
    to: /^src\/services\/okStore\.ts$/,
    dependencyType: 'local',
  },
  {
    name: 'renderer -> better-sqlite3',
    file: 'renderer/toBetterSqlite.ts',
    to: /^(\.\.\/)*node_modules\/better-sqlite3\//,
    dependencyType: 'import',
  },
  {
    name: 'renderer -> src/services',
    file: 'renderer/toServices.ts',
    to: /^src\/services\/okStore\.ts$/,
    dependencyType: 'local',
  },
  {
    name: 'renderer -> node:path',
    file: 'renderer/toNodePath.ts',
    to: /^(node:)?path$/,
    dependencyType: 'core',
  },
  {
    name: 'domain -> serialport',
    file: 'src/domain/toSerialport.ts',
    to: /^(\.\.\/)*node_modules\/serialport\//,
    dependencyType: 'import',
  },
  {
    name: 'domain -> an npm package not on its list (yaml)',
    file: 'src/domain/toUnlistedPackage.ts',
    to: /^(\.\.\/)*node_modules\/yaml\//,
    dependencyType: 'npm',
  },
  { name: 'domain -> src/api', file: 'src/domain/toApi.ts', to: /^src\/api\/okContract\.ts$/, dependencyType: 'local' },
  {
    name: "domain: dynamic import('node:fs')",
    file: 'src/domain/dynamicNodeFs.ts',
    to: /^(node:)?fs$/,
    dependencyType: 'dynamic-import',
  },
  {
    name: "domain: require('node:fs')",
    file: 'src/domain/requireNodeFs.ts',
    to: /^(node:)?fs$/,
    dependencyType: 'require',
  },
  {
    name: "domain: process.getBuiltinModule('fs')",
    file: 'src/domain/builtinModuleFs.ts',
    to: /^(node:)?fs$/,
    dependencyType: 'process-get-builtin-module',
  },
  {
    name: 'domain: import type from src/services',
    file: 'src/domain/typeFromServices.ts',
    to: /^src\/services\/okStore\.ts$/,
    dependencyType: 'type-only',
  },
  {
    name: 'src/api -> src/services',
    file: 'src/api/toServices.ts',
    to: /^src\/services\/okStore\.ts$/,
    dependencyType: 'local',
  },
  {
    name: 'services -> cli',
    file: 'src/services/toCli.ts',
    to: /^src\/cli\/okCommand\.ts$/,
    dependencyType: 'local',
  },
  {
    name: 'services -> test helpers (production code never imports test code)',
    file: 'src/services/toTestHelper.ts',
    to: /^test\/helpers\/okHelper\.ts$/,
    dependencyType: 'local',
  },
  { name: 'main -> renderer', file: 'main/toRenderer.ts', to: /^renderer\/okView\.ts$/, dependencyType: 'local' },
  {
    name: 'test -> a test file',
    file: 'test/helpers/toTestFile.ts',
    to: /^test\/unit\/leaf\.test\.ts$/,
    dependencyType: 'local',
  },
  {
    name: 'test -> a package not declared in package.json (acorn)',
    file: 'test/helpers/toUndeclaredPackage.ts',
    to: /^(\.\.\/)*node_modules\/acorn\//,
    dependencyType: 'import',
  },
];

/**
 * One forbidden import per shape of the rule "nothing untrusted is parsed on the services' main loop"
 * (no-untrusted-parsing-on-the-services-loop): each is allowed by the folder allowlist, so only that
 * rule reports it.
 */
const ON_LOOP: { name: string; file: string; to: RegExp; dependencyType: string }[] = [
  {
    name: 'console API handler -> yaml',
    file: 'src/services/console/toYamlOnLoop.ts',
    to: /^(\.\.\/)*node_modules\/yaml\//,
    dependencyType: 'npm',
  },
  {
    name: 'loopback host -> a motion codec',
    file: 'src/services/host/toMotionCodec.ts',
    to: /^src\/domain\/motion\/fixtureCodec\.ts$/,
    dependencyType: 'local',
  },
  {
    name: 'Electron main -> the episode reader',
    file: 'main/toEpisodeReader.ts',
    to: /^src\/services\/episode\/episodeReader\.ts$/,
    dependencyType: 'local',
  },
];

/** One file per folder that imports only what the folder may import, with the targets it must have. */
const ALLOWED: { folder: string; file: string; imports: RegExp[] }[] = [
  {
    folder: 'src/domain',
    file: 'src/domain/ok.ts',
    imports: [/node_modules\/zod\//, /node_modules\/fflate\//, /^src\/domain\/pure\.ts$/],
  },
  {
    folder: 'src/api',
    file: 'src/api/okContract.ts',
    imports: [/node_modules\/zod\//, /^src\/domain\/pure\.ts$/],
  },
  {
    folder: 'src/services',
    file: 'src/services/okStore.ts',
    imports: [/^(node:)?path$/, /node_modules\/better-sqlite3\//, /^src\/api\//, /^src\/domain\//],
  },
  {
    folder: 'src/cli',
    file: 'src/cli/okCommand.ts',
    imports: [/^(node:)?path$/, /^src\/api\//, /^src\/domain\//, /^src\/services\//],
  },
  {
    folder: 'main',
    file: 'main/okMain.ts',
    imports: [/^(node:)?path$/, /node_modules\/electron\//, /^src\/api\//, /^src\/services\//],
  },
  {
    folder: 'src/services/console (main loop): a codec as a type, a clip module that is no parser',
    file: 'src/services/console/okTypeFromCodec.ts',
    imports: [/^src\/domain\/motion\/fixtureCodec\.ts$/, /^src\/domain\/motion\/motionClip\.ts$/],
  },
  {
    folder: "src/services/console's file worker: parsers",
    file: 'src/services/console/fileWorker.ts',
    imports: [
      /node_modules\/yaml\//,
      /^src\/domain\/motion\/fixtureCodec\.ts$/,
      /^src\/services\/episode\/episodeReader\.ts$/,
    ],
  },
  {
    folder: 'src/domain: a folder importing a folder below it (no cycle)',
    file: 'src/domain/upper/okUpper.ts',
    imports: [/^src\/domain\/lower\/okLower\.ts$/],
  },
  { folder: 'main (preload)', file: 'main/preload.ts', imports: [/node_modules\/electron\//, /^src\/api\//] },
  {
    folder: 'renderer',
    file: 'renderer/okView.ts',
    imports: [/node_modules\/zustand\//, /node_modules\/three\//, /^src\/api\//, /^src\/domain\//],
  },
  {
    folder: 'test',
    file: 'test/helpers/okHelper.ts',
    imports: [/^(node:)?os$/, /node_modules\/vitest\//, /^src\/services\//, /^renderer\//],
  },
  {
    folder: 'bench',
    file: 'bench/okBench.ts',
    imports: [/^(node:)?perf_hooks$/, /^test\/helpers\/okHelper\.ts$/],
  },
  { folder: 'scripts', file: 'scripts/okScript.mjs', imports: [/^(node:)?path$/, /node_modules\/electron-vite\//] },
  {
    folder: 'bin',
    file: 'bin/ok.mjs',
    imports: [/^(node:)?process$/, /^src\/services\/entries\/entryBundles\.mjs$/],
  },
];

/** A file cycle: each import in it is reported by no-circular. */
const FILE_CYCLE = ['src/domain/cycleOne.ts', 'src/domain/cycleTwo.ts'];

/**
 * Folder cycles that are no file cycle, each folder edge reported by no-folder-cycle: one among
 * services folders, one between renderer folders (clips and ui).
 */
const FOLDER_CYCLES: { name: string; edges: [string, string][] }[] = [
  {
    name: 'src/services/left <-> src/services/right',
    edges: [
      ['src/services/left', 'src/services/right'],
      ['src/services/right', 'src/services/left'],
    ],
  },
  {
    name: 'renderer/src/clips <-> renderer/src/ui',
    edges: [
      ['renderer/src/clips', 'renderer/src/ui'],
      ['renderer/src/ui', 'renderer/src/clips'],
    ],
  },
];
const FOLDER_CYCLE_EDGES = FOLDER_CYCLES.flatMap((c) => c.edges);

describe('layer allowlist (.dependency-cruiser.cjs)', () => {
  let result: ICruiseResult;

  beforeAll(async () => {
    result = await cruiseFixtures();
  }, 60_000);

  it('validates with the repository config: an allowlist whose misses are errors', async () => {
    const config = await extractDepcruiseOptions(CONFIG);
    expect(config.ruleSet?.allowedSeverity).toBe('error');
    expect(config.ruleSet?.allowed?.length).toBeGreaterThan(0);
    expect(result.summary.ruleSetUsed?.allowedSeverity).toBe('error');
    expect(result.summary.optionsUsed.tsPreCompilationDeps).toBe(true);
    expect(result.summary.optionsUsed.detectProcessBuiltinModuleCalls).toBe(true);
  });

  describe.each(FORBIDDEN)('$name', ({ file, to, dependencyType }) => {
    it('is reported as an error', () => {
      const dependency = moduleOf(result, file).dependencies.find((d) => to.test(d.resolved));
      expect(dependency, `${file} has no dependency matching ${to}`).toBeDefined();
      expect(dependency!.dependencyTypes).toContain(dependencyType);
      expect(dependency!.valid).toBe(false);

      const reported = violationsFrom(result, file);
      expect(reported.map((v) => v.to)).toEqual([dependency!.resolved]);
      expect(reported[0]!.rule).toEqual({ name: 'not-in-allowed', severity: 'error' });
    });
  });

  describe.each(ON_LOOP)("the services' main loop: $name", ({ file, to, dependencyType }) => {
    it('is reported by no-untrusted-parsing-on-the-services-loop', () => {
      const dependency = moduleOf(result, file).dependencies.find((d) => to.test(d.resolved));
      expect(dependency, `${file} has no dependency matching ${to}`).toBeDefined();
      expect(dependency!.dependencyTypes).toContain(dependencyType);
      expect(dependency!.valid).toBe(false);

      const reported = violationsFrom(result, file);
      expect(reported.map((v) => v.to)).toEqual([dependency!.resolved]);
      expect(reported[0]!.rule).toEqual({ name: 'no-untrusted-parsing-on-the-services-loop', severity: 'error' });
    });
  });

  it('names its exceptions with their reasons: the temporary ones say TEMPORARY', async () => {
    const config = await extractDepcruiseOptions(CONFIG);
    const rules = (config.ruleSet?.forbidden ?? []).filter(
      (r) => r.name === 'no-untrusted-parsing-on-the-services-loop',
    );
    // The rule itself and one rule per exception (its module may import its one named parser, no other).
    expect(rules.length).toBeGreaterThanOrEqual(2);
    for (const r of rules.slice(1))
      expect(r.comment).toMatch(/^Exception: .+ \((STANDING|TEMPORARY): .+\); no other parser\.$/);
  });

  describe.each(ALLOWED)('$folder: allowed imports', ({ file, imports }) => {
    it('are not reported (negative control)', () => {
      const dependencies = moduleOf(result, file).dependencies;
      for (const target of imports) {
        expect(
          dependencies.some((d) => target.test(d.resolved)),
          `${file} should import ${target}`,
        ).toBe(true);
      }
      expect(dependencies.every((d) => d.valid)).toBe(true);
      expect(violationsFrom(result, file)).toEqual([]);
    });
  });

  it('reports a file cycle by no-circular: every import in it is invalid, the cycle is reported once', () => {
    for (const [i, file] of FILE_CYCLE.entries()) {
      const other = FILE_CYCLE[(i + 1) % FILE_CYCLE.length]!;
      const dependency = moduleOf(result, file).dependencies.find((d) => d.resolved === other);
      expect(dependency, `${file} should import ${other}`).toBeDefined();
      expect(dependency!.circular).toBe(true);
      expect(dependency!.valid).toBe(false);
      expect(dependency!.rules).toEqual([{ name: 'no-circular', severity: 'error' }]);
    }
    const reported = result.summary.violations.filter((v) => FILE_CYCLE.includes(v.from));
    expect(reported.map((v) => [v.from, v.to, v.rule.name])).toEqual([[FILE_CYCLE[0], FILE_CYCLE[1], 'no-circular']]);
  });

  describe.each(FOLDER_CYCLES)('a folder cycle, $name', ({ edges }) => {
    it('is reported by no-folder-cycle on each folder edge, and is no file cycle', () => {
      for (const [from, to] of edges) {
        const reported = violationsFrom(result, from);
        expect(reported.map((v) => [v.to, v.rule.name, v.type])).toEqual([[to, 'no-folder-cycle', 'cycle']]);
        expect(reported[0]!.rule.severity).toBe('error');
      }
      const files = result.modules.filter((m) => edges.some(([from]) => m.source.startsWith(`${from}/`)));
      expect(files.length).toBeGreaterThan(0);
      for (const m of files) expect(m.dependencies.every((d) => !d.circular)).toBe(true);
    });
  });

  it('reports exactly the forbidden fixtures and cycles, nothing else', () => {
    const reported = new Set(result.summary.violations.map((v) => v.from));
    expect([...reported].sort()).toEqual(
      [
        ...[...FORBIDDEN, ...ON_LOOP].map((c) => c.file),
        FILE_CYCLE[0]!,
        ...FOLDER_CYCLE_EDGES.map(([from]) => from),
      ].sort(),
    );
    expect(result.summary.error).toBe(FORBIDDEN.length + ON_LOOP.length + 1 + FOLDER_CYCLE_EDGES.length);
  });

  it('(negative control) without the cycle rules the cycles go through, and nothing else changes', async () => {
    const loose = await cruiseFixtures((options) => {
      options.ruleSet!.forbidden = options.ruleSet!.forbidden!.filter(
        (r) => r.name !== 'no-circular' && r.name !== 'no-folder-cycle',
      );
    });
    for (const file of FILE_CYCLE) expect(violationsFrom(loose, file), file).toEqual([]);
    for (const [from] of FOLDER_CYCLE_EDGES) expect(violationsFrom(loose, from), from).toEqual([]);
    expect(loose.summary.error).toBe(FORBIDDEN.length + ON_LOOP.length);
  }, 60_000);

  it('has one folder-cycle rule over every folder below the top level, with no exceptions', async () => {
    const config = await extractDepcruiseOptions(CONFIG);
    const rules = (config.ruleSet?.forbidden ?? []).filter((r) => r.name === 'no-folder-cycle');
    expect(rules).toHaveLength(1);
    expect(rules[0]!.from.path).toBe('^(src/[^/]+|main|renderer/src)/');
    expect(rules[0]!.from.pathNot).toBeUndefined();
    expect((rules[0] as { to?: { pathNot?: unknown } }).to?.pathNot).toBeUndefined();
  });

  it('a loosened config lets the forbidden domain imports through (the cases above detect loosening)', async () => {
    const loose = await cruiseFixtures((options) => {
      options.ruleSet!.allowed!.push({ from: { path: '^src/domain/' }, to: {} });
    });
    const domainCases = FORBIDDEN.filter((c) => c.file.startsWith('src/domain/'));
    expect(domainCases.length).toBeGreaterThan(5);
    for (const c of domainCases) expect(violationsFrom(loose, c.file), c.file).toEqual([]);
    // The other folders' rules are untouched and still report.
    expect(violationsFrom(loose, 'renderer/toBetterSqlite.ts')).toHaveLength(1);
  }, 60_000);
});

describe('npm run lint', () => {
  const lint = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts.lint!;

  it('runs eslint and prettier first, then dependency-cruiser with this config over every folder', () => {
    expect(lint.startsWith('eslint . && prettier --check . && depcruise --config .dependency-cruiser.cjs ')).toBe(true);
    const cruised = lint.split('depcruise --config .dependency-cruiser.cjs ')[1]!.split(/\s+/);
    for (const folder of ROOTS) expect(cruised).toContain(folder);
  });

  it('(negative control) a lint line without the cruise would be refused', () => {
    expect('eslint . && prettier --check .'.includes('depcruise --config .dependency-cruiser.cjs ')).toBe(false);
  });
});
