// DDS domains for the tests, one owner each across every process on the machine: test files run
// side by side (two unit files at once, a leftover child of an earlier file), and two Cyclone DDS
// participants on one domain hear each other's lowstate and lowcmd. A claim is a lock file
// created exclusively in the temporary folder, naming the claiming process; a lock whose process
// is gone is taken over. Released when this process exits.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Domains the tests use: clear of 0 (the default every DDS program joins) and of the e2e's fixed 57. */
const FIRST = 60;
const LAST = 230;

const held: string[] = [];
let releaseHooked = false;

const lockOf = (domain: number) => path.join(os.tmpdir(), `motionbench-test-dds-domain-${domain}.lock`);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tryClaim(domain: number): boolean {
  const lock = lockOf(domain);
  try {
    fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    const owner = Number(fs.readFileSync(lock, 'utf8').trim());
    if (Number.isInteger(owner) && owner > 0 && alive(owner)) return false;
    fs.rmSync(lock, { force: true }); // its process is gone
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return true;
    } catch {
      return false; // another process took it over first
    }
  }
}

/**
 * `count` consecutive DDS domains no other live process holds; returns the first. Starts the
 * search at a place derived from the pid, so concurrent claimers rarely contend.
 */
export function claimDdsDomains(count = 1): number {
  if (!releaseHooked) {
    releaseHooked = true;
    process.once('exit', () => {
      for (const lock of held) fs.rmSync(lock, { force: true });
    });
  }
  const span = LAST - FIRST + 1 - (count - 1);
  for (let i = 0; i < span; i++) {
    const first = FIRST + ((process.pid + i) % span);
    const got: number[] = [];
    for (let d = first; d < first + count && tryClaim(d); d++) got.push(d);
    if (got.length === count) {
      held.push(...got.map(lockOf));
      return first;
    }
    for (const d of got) fs.rmSync(lockOf(d), { force: true });
  }
  throw new Error(`no ${count} free DDS domains in ${FIRST}–${LAST}: every one is held by a live test process`);
}
