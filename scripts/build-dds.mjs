// Builds the Cyclone DDS addon (native/dds: idlc generates the unitree_hg C types, node-gyp
// compiles and links libddsc). Refuses in one line, exit 1, when Cyclone DDS 0.10.x is missing.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const missing = (what) => {
  process.stderr.write(
    `build:dds: ${what}; install Cyclone DDS 0.10.x (Debian/Ubuntu: apt-get install cyclonedds-dev cyclonedds-tools)\n`,
  );
  process.exit(1);
};

if (!existsSync('/usr/include/dds/dds.h') && !process.env.CPATH) missing('dds/dds.h not found');
let idlcVersion = '';
try {
  idlcVersion = execFileSync('idlc', ['-v'], { encoding: 'utf8' });
} catch {
  missing('idlc not found on PATH');
}
if (!/0\.10\.\d+/.test(idlcVersion)) missing(`idlc is not 0.10.x (${idlcVersion.trim()})`);

// Node's own headers when they sit beside the binary (Debian's nodejs, official tarballs);
// otherwise node-gyp fetches them.
const prefix = path.resolve(path.dirname(process.execPath), '..');
const nodedirArgs = existsSync(path.join(prefix, 'include', 'node', 'common.gypi')) ? [`--nodedir=${prefix}`] : [];
const nodeGyp =
  process.env.npm_config_node_gyp ??
  path.join(
    path.dirname(process.execPath),
    '..',
    'lib',
    'node_modules',
    'npm',
    'node_modules',
    'node-gyp',
    'bin',
    'node-gyp.js',
  );
if (!existsSync(nodeGyp)) missing(`node-gyp not found (${nodeGyp})`);
const r = spawnSync(process.execPath, [nodeGyp, 'rebuild', ...nodedirArgs], {
  cwd: path.join(repo, 'native', 'dds'),
  stdio: ['ignore', 'inherit', 'inherit'],
});
if (r.status !== 0) {
  process.stderr.write('build:dds: node-gyp failed (see above); is libddsc (cyclonedds-dev) installed?\n');
  process.exit(1);
}
