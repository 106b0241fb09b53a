// Child process of lastResort.test.ts: a console process with a robot link that dies of an error
// nobody caught. `node --import tsx lastResortChild.ts <ws-url> [--no-last-resort]`.
import process from 'node:process';
import { connectRobot } from '../../src/services/bridge/bridgeClientBackend';
import { installLastResort } from '../../src/services/safety/lastResort';

const url = process.argv[2];
if (!process.argv.includes('--no-last-resort')) installLastResort();
const robot = connectRobot({ url });
await robot.whenPresent(10_000);
process.stdout.write('present\n');
setTimeout(() => {
  // A bug in a handler: nothing catches it.
  throw new TypeError('chs is not iterable (simulated handler bug)');
}, 50);
