// `npm start`: build the desktop app and launch Electron. Where the Electron binary was never
// downloaded (offline machines, ELECTRON_SKIP_BINARY_DOWNLOAD=1), say so in one line and point
// to the browser console instead.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function electronBinary() {
  try {
    const p = require('electron'); // the binary's path; throws when path.txt is missing
    return typeof p === 'string' && fs.existsSync(p) ? p : null;
  } catch {
    return null;
  }
}

const binary = electronBinary();
if (!binary) {
  process.stderr.write(
    'Electron binary not installed (it cannot be downloaded here): run `npm run host` and open the printed URL in a browser instead.\n',
  );
  process.exit(1);
}

const { build } = await import('electron-vite');
await build({ root: repo });
const child = spawn(binary, [repo, ...process.argv.slice(2)], { stdio: 'inherit', cwd: repo });
child.on('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
