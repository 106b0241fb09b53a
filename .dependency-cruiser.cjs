// Layer rules (DESIGN §2, docs/ARCHITECTURE.md "Folders and responsibilities") as an ALLOWLIST:
// every dependency must match one of the `allowed` rules below, anything else is a `not-in-allowed`
// error. A rule names what one folder MAY import; a new folder, a new package or a new direction is
// refused until it is named here. dependency-cruiser is the authority (`npm run lint`,
// test/unit/layerRules.test.ts); the no-restricted-imports rules in eslint.config.js only show the
// common mistakes in the editor.
//
//   src/domain   -> src/domain, zod, fflate                 (pure: no I/O, no node built-ins)
//   src/api      -> src/api, src/domain, zod                (the contract shared with the renderer)
//   src/services -> src/services, src/api, src/domain, node built-ins, the server-side packages
//   src/cli      -> src/cli, src/services, src/api, src/domain, node built-ins
//   main/        -> main/, src/services, src/api, src/domain, node built-ins, electron
//   main/preload -> src/api, src/domain, electron           (sandboxed preload: nothing that needs node)
//   renderer/    -> renderer/, src/api, src/domain, react, react-dom, three, @react-three/fiber, zustand, uplot
//   test/, bench/ -> any source file but a *.test.* file, node built-ins, any package declared in
//                   package.json (dependencies or devDependencies)
//   scripts/     -> scripts/, node built-ins, declared packages, the entry loader
//   bin/         -> the entry loader (src/services/entries/entryBundles.mjs), node built-ins
//   ./*.config.* -> node built-ins, devDependencies
//
// Imports are read through TypeScript (tsPreCompilationDeps), so `import type`, `export ... from`,
// `import('x')`, `require('x')` and `process.getBuiltinModule('x')` (detectProcessBuiltinModuleCalls)
// all count. An import that cannot be resolved matches no rule and is refused too.

/** Folder patterns, matched against paths relative to the cruise's baseDir (the repository root). */
const DOMAIN = '^src/domain/';
const API = '^src/api/';
const SERVICES = '^src/services/';
const CLI = '^src/cli/';
const MAIN = '^main/';
const PRELOAD = '^main/preload\\.ts$';
const RENDERER = '^renderer/';
const TEST = '^test/';
const BENCH = '^bench/';
const SCRIPTS = '^scripts/';
const BIN = '^bin/';
const ROOT_CONFIG = '^[^/]+\\.config\\.[cm]?[jt]s$';
/** The plain-JavaScript loader of the TypeScript entries (bundle or tsx), shared by bin/ and scripts/. */
const ENTRY_LOADER = '^src/services/entries/entryBundles\\.mjs$';

/** A test file is a leaf: nothing imports it (shared test code lives in test/helpers or a non-test file). */
const TEST_FILE = '\\.test\\.[cm]?[jt]sx?$';

/** Declared packages from node_modules (up the tree from the cruised file, as node resolves them), by name. */
function packages(...names) {
  const escaped = names.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return `^(\\.\\./)*node_modules/(${escaped.join('|')})/`;
}

const DOMAIN_PACKAGES = packages('zod', 'fflate');
const API_PACKAGES = packages('zod');
const SERVICES_PACKAGES = packages(
  '@foxglove/rosmsg',
  '@foxglove/rosmsg2-serialization',
  '@foxglove/schemas',
  '@foxglove/wasm-zstd',
  '@foxglove/ws-protocol',
  '@mcap/core',
  'better-sqlite3',
  'mujoco-js',
  'onnxruntime-node',
  'protobufjs',
  'serialport',
  'tsx',
  'ws',
  'yaml',
  'zod',
);
const RENDERER_PACKAGES = packages('react', 'react-dom', 'three', '@react-three/fiber', 'zustand', 'uplot');

// ---- Nothing untrusted is parsed on the loop that carries STOP --------------------------------
//
// The services' main loop (the console API's handlers in src/services/console, the loopback host in
// src/services/host, the Electron main process in main/) carries the operator's STOP, the safety
// gate and the robot link. A file a request names, a campaign folder, a policy and what a robot
// advertises are parsed, decoded and inflated in the file worker (src/services/console/offThread.ts
// → fileWorker.ts, which loads the worker-side modules below), never on that loop. So these modules
// must not import a decoder or parser, nor a worker-side module, except as types (`import type`).
// Only direct imports are judged: what a handler reaches through another services folder is that
// folder's to keep bounded.

/** The modules whose code runs on the services' main loop. */
const MAIN_LOOP = ['^src/services/console/', '^src/services/host/', MAIN];
/** Modules of src/services/console that run only in the file worker: its entry, fileWorker.ts, and what it imports. */
const WORKER_SIDE_API =
  '^src/services/console/(fileWorker|campaignBoardReads|campaignAnalysisApi|campaignOpen|gapReview|trialEpisode)\\.ts$';
/** Decoders and parsers of untrusted bytes, and the worker-side modules that call them. */
const UNTRUSTED_PARSERS = [
  packages(
    'yaml',
    'protobufjs',
    '@foxglove/rosmsg',
    '@foxglove/rosmsg2-serialization',
    '@mcap/core',
    '@foxglove/wasm-zstd',
    'fflate',
    'onnxruntime-node',
  ),
  // Motion codecs (CSV, NPZ, JSON, the peers' formats, ZIP, NPY, torch pickles); not the clip's types or resampling.
  '^src/domain/motion/(?!(motionClip|clipCommon|resample)\\.ts$)',
  '^src/domain/robot/mjcf[A-Z]\\w*\\.ts$',
  '^src/domain/wbc/(policyFamilies|holomotionFamily|sonicFamily|bakedMotion)\\.ts$',
  '^src/services/motion/',
  '^src/services/robot/loadRobotProfile\\.ts$',
  '^src/services/wbc/(loadPolicy|loadOnnxBinding|onnxModelReader|policyRun)\\.ts$',
  '^src/services/episode/episodeReader\\.ts$',
  '^src/services/robotLink/ros2LowStateDecoder\\.ts$',
  '^src/services/workload/folderWorkload\\.ts$',
  '^src/services/console/(campaignBoardReads|campaignAnalysisApi|gapReview|trialEpisode)\\.ts$',
];
/**
 * Main-loop modules allowed ONE named parser module each, with the reason. Every other parser stays
 * forbidden to them (a rule of their own below).
 */
const MAIN_LOOP_EXCEPTIONS = [
  {
    from: '^src/services/console/consoleServices\\.ts$',
    to: '^src/services/robot/loadRobotProfile\\.ts$',
    reason:
      'STANDING: the robot model the services start with (--model, else our G1 in assets/), named by the operator at start-up and never by a request; read once, lazily (getProfile)',
  },
  {
    from: '^src/services/console/workerErrors\\.ts$',
    to: '^src/domain/wbc/bakedMotion\\.ts$',
    reason:
      "STANDING: an error the file worker throws crosses as its type and fields and is rebuilt as the same class; the module imports BakedMotionError for `instanceof` and construction, and calls none of the decoder's code",
  },
  {
    from: '^src/services/console/apiErrorMap\\.ts$',
    to: '^src/(domain/wbc/bakedMotion|services/wbc/policyRun|services/workload/folderWorkload)\\.ts$',
    reason:
      "STANDING: the error map imports those modules' error classes for `instanceof`; it calls none of their code",
  },
];

// ---- No cycles ------------------------------------------------------------------------------
//
// Below the top level the code forms a hierarchy too. A module never reaches itself back through
// its imports (no-circular), and neither does a folder (no-folder-cycle, dependency-cruiser's folder
// scope: a folder's dependencies are its modules' imports of modules outside it, at every depth, so
// a subfolder importing its parent is no cycle). What two folders both need goes below both, e.g.
//   src/domain    robot holds the robot's facts (joints, kinematics, state frame, physics profile,
//                 joint orders) and episode how an episode starts and ends, below motion, wbc, the
//                 g1-bridge/1 wire (bridge), backend and sim;
//   src/services  files holds only bounded reads and folder checks; the file worker lives in console
//                 (whose reads it runs), the policy check and table runs in policyCheck (above sim and
//                 wbc), the Foxglove socket helpers in robotLink (below bridge);
//   src/api       clipDto is below the sub-contracts, which are below contract.
//   renderer/src  app composes the feature panels (and the operator's STOP over them); a store two
//                 folders share sits in the lower one (clipStore in playback, calibrationStore in
//                 trial, dockStore in ui).

/** Where file cycles are checked: the shipped code. */
const CYCLE_CHECKED = '^(src|main|renderer)/';
/**
 * Where folder cycles are checked: the shipped code's folders below the top level (src/<layer>/<folder>,
 * main/<folder>, renderer/src/<folder> and deeper). Between the top-level layers the allowlist above
 * already fixes the direction.
 */
const FOLDER_CYCLE_CHECKED = '^(src/[^/]+|main|renderer/src)/';
/** Node built-ins (`fs`, `node:fs`, ...). */
const CORE = { dependencyTypes: ['core'] };
/** A package listed under "dependencies" in package.json: what the packaged app ships. */
const RUNTIME = ['npm'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  allowedSeverity: 'error',
  allowed: [
    // src/domain: pure TypeScript.
    { comment: 'domain -> domain', from: { path: DOMAIN }, to: { path: DOMAIN } },
    {
      comment: 'domain -> pure libraries (schemas, inflate)',
      from: { path: DOMAIN },
      to: { path: DOMAIN_PACKAGES, dependencyTypes: RUNTIME },
    },

    // src/api: the typed console API contract.
    { comment: 'api -> api, domain', from: { path: API }, to: { path: [API, DOMAIN] } },
    { comment: 'api -> zod', from: { path: API }, to: { path: API_PACKAGES, dependencyTypes: RUNTIME } },

    // src/services: the Node side.
    {
      comment: 'services -> services, api, domain',
      from: { path: SERVICES },
      to: { path: [SERVICES, API, DOMAIN] },
    },
    { comment: 'services -> node built-ins', from: { path: SERVICES }, to: CORE },
    {
      comment: 'services -> server-side packages',
      from: { path: SERVICES },
      to: { path: SERVICES_PACKAGES, dependencyTypes: RUNTIME },
    },

    // src/cli: the motionbench command over the same services.
    {
      comment: 'cli -> cli, services, api, domain',
      from: { path: CLI },
      to: { path: [CLI, SERVICES, API, DOMAIN] },
    },
    { comment: 'cli -> node built-ins', from: { path: CLI }, to: CORE },

    // main/: Electron main process (Node) and its sandboxed preload.
    {
      comment: 'main -> main, services, api, domain',
      from: { path: MAIN, pathNot: PRELOAD },
      to: { path: [MAIN, SERVICES, API, DOMAIN] },
    },
    { comment: 'main -> node built-ins', from: { path: MAIN, pathNot: PRELOAD }, to: CORE },
    { comment: 'preload -> api, domain', from: { path: PRELOAD }, to: { path: [API, DOMAIN] } },
    { comment: 'main, preload -> electron', from: { path: MAIN }, to: { path: packages('electron') } },

    // renderer/: the sandboxed React UI.
    {
      comment: 'renderer -> renderer, api, domain',
      from: { path: RENDERER },
      to: { path: [RENDERER, API, DOMAIN] },
    },
    {
      comment: 'renderer -> UI packages',
      from: { path: RENDERER },
      to: { path: RENDERER_PACKAGES, dependencyTypes: RUNTIME },
    },

    // test/ (unit, integration, e2e, helpers, fixtures) and bench/: may exercise every layer.
    {
      comment: 'test, bench -> any source file but a test file',
      from: { path: [TEST, BENCH] },
      to: { dependencyTypes: ['local'], pathNot: TEST_FILE },
    },
    { comment: 'test, bench -> node built-ins', from: { path: [TEST, BENCH] }, to: CORE },
    {
      comment: 'test, bench -> declared packages',
      from: { path: [TEST, BENCH] },
      to: { dependencyTypes: ['npm', 'npm-dev'] },
    },

    // scripts/: development launchers.
    { comment: 'scripts -> scripts', from: { path: SCRIPTS }, to: { path: SCRIPTS } },
    { comment: 'scripts -> node built-ins', from: { path: SCRIPTS }, to: CORE },
    // scripts/build-entries.mjs builds the bundles the entry loader names.
    { comment: 'scripts -> the entry loader', from: { path: SCRIPTS }, to: { path: ENTRY_LOADER } },
    {
      comment: 'scripts -> declared packages',
      from: { path: SCRIPTS },
      to: { dependencyTypes: ['npm', 'npm-dev'] },
    },

    // bin/: the motionbench entry loads the TypeScript CLI (src/cli/main.ts) through the entry
    // loader: its prebuilt bundle, or the source through tsx.
    { comment: 'bin -> the entry loader', from: { path: BIN }, to: { path: ENTRY_LOADER } },
    { comment: 'bin -> node built-ins', from: { path: BIN }, to: CORE },

    // Tool configuration at the root (electron.vite.config.ts, vitest.config.ts, eslint.config.js).
    { comment: 'root config -> node built-ins', from: { path: ROOT_CONFIG }, to: CORE },
    {
      comment: 'root config -> devDependencies',
      from: { path: ROOT_CONFIG },
      to: { dependencyTypes: ['npm-dev'] },
    },
    {
      comment: 'electron.vite.config.ts -> the renderer bundle flavour (the name of the file that records it)',
      from: { path: '^electron\\.vite\\.config\\.ts$' },
      to: { path: '^scripts/rendererBundle\\.mjs$' },
    },
  ],
  forbidden: [
    {
      name: 'no-untrusted-parsing-on-the-services-loop',
      comment:
        "The services' main loop carries STOP: a decoder or parser of untrusted input (or a worker-side module) is reached through the file worker (src/services/console/offThread.ts), never imported here; `import type` is fine.",
      severity: 'error',
      from: { path: MAIN_LOOP, pathNot: [WORKER_SIDE_API, ...MAIN_LOOP_EXCEPTIONS.map((e) => e.from)] },
      to: { path: UNTRUSTED_PARSERS, dependencyTypesNot: ['type-only'] },
    },
    ...MAIN_LOOP_EXCEPTIONS.map((e) => ({
      name: 'no-untrusted-parsing-on-the-services-loop',
      comment: `Exception: ${e.from} may import ${e.to} (${e.reason}); no other parser.`,
      severity: 'error',
      from: { path: e.from },
      to: { path: UNTRUSTED_PARSERS, pathNot: e.to, dependencyTypesNot: ['type-only'] },
    })),
    {
      name: 'no-circular',
      comment:
        'A module must not reach itself back through its imports: move what both ends need into a module of its own.',
      severity: 'error',
      from: { path: CYCLE_CHECKED },
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      comment:
        "A folder must not reach itself back through its modules' imports: pick the direction the folders depend in and move what goes against it.",
      severity: 'error',
      scope: 'folder',
      from: { path: FOLDER_CYCLE_CHECKED },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve is a typo or a missing package: name it in package.json.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Deliberately broken sources for test/unit/layerRules.test.ts, which cruises them with this folder as baseDir.
    exclude: { path: '^test/fixtures/layers/' },
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports are dependencies too: a domain file that imports a services type is a layer break.
    tsPreCompilationDeps: true,
    // process.getBuiltinModule('fs') is an import of fs.
    detectProcessBuiltinModuleCalls: true,
    moduleSystems: ['es6', 'cjs', 'tsd'],
    // Resolve packages as node and vite do (package.json "exports"), so e.g. tsx/esm/api resolves.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};
