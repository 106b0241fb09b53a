// The console's services process, standing in for the interlock e-stop test
// (g1RunnerInterlockEstop.test.ts): opens the interlock through its keeper (told the runner's
// e-stop socket, or not: argv[4] '-'), arms it, connects to the runner over g1-bridge/1 and runs a
// long clip with the builtin tracker. Prints "armed" and "running"; the test then SIGSTOPs it.
import { decodeWireClip } from '../../src/domain/bridge';
import { standingArmRaiseClip } from '../../src/domain/robotEmulator/standingClip';
import { makeBuiltinBinding } from '../../src/domain/sim/builtinBinding';
import { connectRobot } from '../../src/services/bridge/bridgeClientBackend';
import { openInterlockFeed } from '../../src/services/trial/interlockFeed';

const [consolePath, runnerUrl, tripSocket] = process.argv.slice(2);
const FIX_STAND = [
  -0.1, 0, 0, 0.3, -0.2, 0, -0.1, 0, 0, 0.3, -0.2, 0, 0, 0, 0, 0, 0.25, 0, 0.97, 0.15, 0, 0, 0, -0.25, 0, 0.97, -0.15,
  0, 0,
];
const feed = await openInterlockFeed({
  path: consolePath,
  log: (l) => process.stderr.write(`console child: interlock: ${l}\n`),
  ...(tripSocket !== '-' ? { runnerTripSocket: tripSocket } : {}),
});
// The box answers its first heartbeat some ms after the port opens: arm once it has.
let armed = await feed.link.arm();
for (let i = 0; i < 100 && !armed.ok && armed.reason === 'not_safe'; i++) {
  await new Promise((r) => setTimeout(r, 20));
  armed = await feed.link.arm();
}
process.stdout.write(`armed ${JSON.stringify(armed)}\n`);
const d = decodeWireClip(standingArmRaiseClip({ rootPosM: [0, 0, 0.79], jointPosRad: FIX_STAND, seconds: 30 }));
if (!d.ok) throw new Error(d.reason);
const client = connectRobot({ url: runnerUrl, reconnectInitialDelayMs: 50 });
client.setListener(async (events) => {
  for (const e of events)
    if (e.type !== 'frames') process.stderr.write(`console child: link: ${JSON.stringify(e).slice(0, 300)}\n`);
});
const lease = await client.acquire('estop-under-sigstop');
process.stdout.write('running\n');
const end = await lease.run({ clip: d.value, binding: makeBuiltinBinding({}), seed: 0 });
process.stdout.write(`end ${end.outcome}\n`);
