// `node --import tsx test/helpers/keeperConsoleChild.ts <console-pty> [--in-process]`: a console
// process that only opens the interlock (through its keeper process, or with --in-process on its
// own event loop, the layout the keeper replaces), arms it and prints {"armed": true, "keeperPid": N} — for
// tests that stop, block or kill the console and watch the box from another process.
import { openInterlockKeeper } from '../../src/services/interlock/interlockKeeperLink';
import { openInterlock, type InterlockLink } from '../../src/services/interlock/serialInterlock';

const [device, mode] = process.argv.slice(2);
const trips: string[] = [];
const options = { path: device, onTrip: (t: { reason: string }) => trips.push(t.reason), log: () => {} };
const link: InterlockLink & { keeperPid?: number } =
  mode === '--in-process' ? await openInterlock(options) : await openInterlockKeeper(options);
for (let attempt = 0; ; attempt++) {
  if (link.state === 'safe') {
    const r = await link.arm();
    if (r.ok) break;
  }
  if (attempt > 200) throw new Error(`could not arm: ${link.state}`);
  await new Promise((r) => setTimeout(r, 20));
}
process.stdout.write(`${JSON.stringify({ armed: true, keeperPid: link.keeperPid ?? null })}\n`);
process.stdin.resume();
process.stdin.on('end', () => void link.close().then(() => process.exit(0)));
