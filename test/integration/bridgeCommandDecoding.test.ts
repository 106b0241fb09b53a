import { afterEach, expect, it } from 'vitest';
import { clipToWire, decodeWireClip, prepareCommand } from '../../src/domain/bridge';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { makeBuiltinBinding } from '../../src/domain/sim/builtinBinding';
import { startBridgeServer, type BridgeServer } from '../../src/services/bridge/bridgeServer';
import type { CommandDecoderOptions } from '../../src/services/bridge/commandDecoder';
import { loadClipFile } from '../../src/services/motion/loadClipFile';
import { watchLoopGaps } from '../helpers/loopGaps';
import { sharedData } from '../helpers/sharedData';
import { FakeBackend } from '../unit/bridgeFakeBackend';
import { PlainClient } from './bridgeTestClient';

// A g1-bridge/1 server's thread relays the robot's state and hears STOP; a console's prepare
// carries a whole clip. Decoding a long clip on that thread stalls it past the console's 100 ms
// state timeout (a runner then ends a trial that no fault ended); decoded in the server's worker
// (commandDecoder.ts) the thread stays free. Measured as the longest gap of a 1 ms timer on the
// server's thread from the prepare's bytes being sent to its ack.

const HANDS_UP = loadClipFile(sharedData('motions/g1_moves/npz/B_HandsUp.npz')); // 441 frames at 60 fps

/** HANDS_UP played `times` times over, as one clip of its own (a long clip with joint velocities). */
function tiled(c: MotionClip, times: number): MotionClip {
  const rep = (a: Float64Array): Float64Array => {
    const out = new Float64Array(a.length * times);
    for (let k = 0; k < times; k++) out.set(a, k * a.length);
    return out;
  };
  const d = decodeWireClip(
    clipToWire(
      {
        ...c,
        frameCount: c.frameCount * times,
        rootPosM: rep(c.rootPosM),
        rootQuatWxyz: rep(c.rootQuatWxyz),
        jointPosRad: rep(c.jointPosRad),
        jointVelRadS: rep(c.jointVelRadS!),
      },
      { includeJointVelocities: true },
    ),
  );
  if (!d.ok) throw new Error(d.reason);
  return d.value;
}

let server: BridgeServer | null = null;
let client: PlainClient | null = null;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = null;
  server = null;
});

/** The longest the server's thread went without running a 1 ms timer while `bytes` were decoded, ms. */
async function longestStall(bytes: Buffer, decoder?: CommandDecoderOptions): Promise<number> {
  server = await startBridgeServer({ backend: new FakeBackend(), speed: 0, heartbeatHz: 5, decoder });
  client = await PlainClient.connect(server.url);
  client.advertiseCommands();
  client.sendRaw(bytes);
  const gaps = watchLoopGaps(1);
  const ack = await client.ack(1, 120_000).finally(() => gaps.stop());
  expect(ack).toMatchObject({ ok: true, status: { state: 'ready' } });
  return gaps.stop();
}

it('a 7 MB prepare (a 88 s clip) leaves the server thread free; decoded on it (negative control) it stalls it', async () => {
  const clip = tiled(HANDS_UP, 12);
  const bytes = Buffer.from(
    JSON.stringify({ ...prepareCommand({ clip, binding: makeBuiltinBinding(), seed: 1 }), seq: 1 }),
  );
  const offThread = await longestStall(bytes);
  expect(server!.stats().commands.decodedOffThread).toBe(1);
  await client!.close();
  await server!.close();
  const inline = await longestStall(bytes, { inlineMaxBytes: Number.POSITIVE_INFINITY });
  expect(server!.stats().commands.decodedOffThread).toBe(0);
  console.log(
    `prepare of ${(bytes.length / 1e6).toFixed(1)} MB (${clip.frameCount} frames): longest stall of the server thread ${offThread.toFixed(1)} ms decoded off it, ${inline.toFixed(1)} ms decoded on it`,
  );
  expect(offThread).toBeLessThan(100);
  expect(inline).toBeGreaterThan(2 * offThread);
  expect(inline).toBeGreaterThan(100);
}, 180_000);
