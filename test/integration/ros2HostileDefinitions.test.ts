import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { BackendEvent } from '../../src/domain/backend/backend';
import { connectRobot } from '../../src/services/bridge/bridgeClientBackend';
import {
  c1QuadraticLineDefinition,
  c2ZeroSizeElementsDefinition,
  m1DeepPayload,
  m1ManySectionsDefinition,
  m1RecursiveDefinition,
  overSchemaLimitDefinition,
} from '../helpers/hostileRos2Definitions';
import {
  lowStateDefinitionText,
  startRos2LowStateBridge,
  type Ros2LowStateBridgeOptions,
} from '../helpers/ros2LowStateBridge';
import { watchLoopGaps } from '../helpers/loopGaps';
import { sleep, waitFor } from './bridgeTestClient';

// A hostile ROS 2 robot (a foxglove_bridge-like server on loopback, test/helpers/ros2LowStateBridge.ts)
// advertises its /lowstate with a definition built to stall whoever parses or decodes it
// (test/helpers/hostileRos2Definitions.ts), against the console's real robot link (connectRobot). Each
// is refused with a one-line problem naming the topic, the message, the line or field and the limit,
// within a bounded time, while the services' loop stays responsive: a 50 ms ticker on this loop never
// waits more than 250 ms, and the event-loop delay is recorded (monitorEventLoopDelay). The link stays
// `connecting` with the reason and nothing is decoded. Control: the real unitree_hg definition, under
// the same watch, becomes present and decodes.
//
// Measured figures (refusal time, loop delay, RSS growth) are printed per case.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

/** The loop's responsiveness while a case runs: a 50 ms ticker's longest gap and the histogram's max. */
function watchLoop(): () => { maxGapMs: number; maxDelayMs: number } {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const gaps = watchLoopGaps(50);
  return () => {
    h.disable();
    const maxGapMs = gaps.stop();
    return { maxGapMs, maxDelayMs: h.max / 1e6 };
  };
}

interface Outcome {
  problem: string;
  refusedAfterMs: number;
  maxGapMs: number;
  maxDelayMs: number;
  rssGrowthMb: number;
  maxRssGrowthMb: number;
  presence: string;
  received: number;
}

/** A hostile bridge with `options`, the robot link to it, watched until `unsupported_encoding` arrives. */
async function refusalOf(what: string, options: Ros2LowStateBridgeOptions, withinMs: number): Promise<Outcome> {
  const bridge = await startRos2LowStateBridge({ rateHz: 50, writeDefinition: lowStateDefinitionText(), ...options });
  cleanups.push(() => bridge.stop());
  const rss0 = process.memoryUsage().rss;
  const maxRss0 = process.resourceUsage().maxRSS;
  const stop = watchLoop();
  const t0 = performance.now();
  const problems: { atMs: number; text: string }[] = [];
  const backend = connectRobot({ url: bridge.url, reconnectInitialDelayMs: 200 });
  cleanups.push(() => backend.close());
  backend.setListener(async (events: BackendEvent[]) => {
    for (const e of events)
      if (e.type === 'problem')
        problems.push({ atMs: performance.now() - t0, text: `${e.problem.code}: ${e.problem.message}` });
  });
  await waitFor(() => problems.some((p) => p.text.startsWith('unsupported_encoding')), withinMs, `${what} refused`);
  const refusal = problems.find((p) => p.text.startsWith('unsupported_encoding'))!;
  await sleep(300); // the link goes on: nothing subscribed, nothing decoded
  const loop = stop();
  const out: Outcome = {
    problem: refusal.text,
    refusedAfterMs: refusal.atMs,
    ...loop,
    rssGrowthMb: (process.memoryUsage().rss - rss0) / 2 ** 20,
    maxRssGrowthMb: (process.resourceUsage().maxRSS - maxRss0) / 1024,
    presence: backend.presence,
    received: backend.stats().received,
  };
  console.info(
    `[${what}] refused after ${out.refusedAfterMs.toFixed(0)} ms; loop: max ticker gap ${out.maxGapMs.toFixed(0)} ms, ` +
      `max delay ${out.maxDelayMs.toFixed(0)} ms; RSS +${out.rssGrowthMb.toFixed(0)} MiB (peak +${out.maxRssGrowthMb.toFixed(0)} MiB)`,
  );
  return out;
}

function expectRefused(o: Outcome, message: string, withinMs: number): void {
  expect(o.problem).toBe(message);
  expect(o.problem).not.toContain('\n');
  expect(o.refusedAfterMs).toBeLessThan(withinMs);
  expect(o.maxGapMs).toBeLessThan(250);
  expect(o.maxRssGrowthMb).toBeLessThan(200);
  expect(o.presence).toBe('connecting');
  expect(o.received).toBe(0);
}

const ROOT = 'unitree_hg/msg/LowState';
const REFUSED = `unsupported_encoding: /lowstate: advertised definition refused: ${ROOT}`;
/** A refusal in the text scan (on the loop, linear) comes at once; one from the worker within its start and check. */
const SCAN_REFUSAL_MS = 3_000;
const WORKER_REFUSAL_MS = 15_000;

describe('a hostile ROS 2 robot’s message definitions: refused, located, while the services’ loop stays responsive', () => {
  // First: it also warms what every case runs (the link's code, the checker's worker), as a console that ran before would be.
  it('control: the real unitree_hg definition, under the same watch, becomes present and decodes', async () => {
    const bridge = await startRos2LowStateBridge();
    cleanups.push(() => bridge.stop());
    const stop = watchLoop();
    const t0 = performance.now();
    const backend = connectRobot({ url: bridge.url, reconnectInitialDelayMs: 200 });
    cleanups.push(() => backend.close());
    let frames = 0;
    backend.setListener(async (events: BackendEvent[]) => {
      for (const e of events) if (e.type === 'frames') frames += e.frames.length;
    });
    await backend.whenPresent(WORKER_REFUSAL_MS);
    const presentAfterMs = performance.now() - t0;
    await waitFor(() => frames >= 200, 5_000, '200 frames');
    const loop = stop();
    console.info(
      `[control] present after ${presentAfterMs.toFixed(0)} ms; loop: max ticker gap ${loop.maxGapMs.toFixed(0)} ms, max delay ${loop.maxDelayMs.toFixed(0)} ms`,
    );
    expect(loop.maxGapMs).toBeLessThan(250);
    expect(backend.stats()).toMatchObject({ malformed: 0 });
  });

  it('C1: a 900,000-character line that makes the parser backtrack quadratically', async () => {
    const o = await refusalOf('C1', { definition: c1QuadraticLineDefinition() }, SCAN_REFUSAL_MS);
    expectRefused(
      o,
      `${REFUSED} [(definition)]: the advertised definition is 900,648 characters; the limit is 65,536; not subscribed`,
      SCAN_REFUSAL_MS,
    );
  });

  it('C1 under the length limit: a 20,000-character line, refused by the line limit', async () => {
    const o = await refusalOf('C1 line', { definition: c1QuadraticLineDefinition(20_000) }, SCAN_REFUSAL_MS);
    expectRefused(o, `${REFUSED}:10: a line of 20,012 characters; the limit is 1,000; not subscribed`, SCAN_REFUSAL_MS);
  });

  it('C2: a billion elements of a type that occupies no bytes (parsed and refused in the worker)', async () => {
    const o = await refusalOf('C2', { definition: c2ZeroSizeElementsDefinition() }, WORKER_REFUSAL_MS);
    expectRefused(
      o,
      `${REFUSED}:10 [${ROOT}.pad]: a fixed array of 1,000,000,000 elements; the limit is 4,096; not subscribed`,
      WORKER_REFUSAL_MS,
    );
  });

  it('M1: a recursive type, its payload nested 200,000 deep (refused in the worker)', async () => {
    const o = await refusalOf(
      'M1 recursive',
      { definition: m1RecursiveDefinition(), payload: (written) => m1DeepPayload(written) },
      WORKER_REFUSAL_MS,
    );
    expectRefused(
      o,
      `${REFUSED}:35 [unitree_hg/msg/Node.children]: a variable-length array (unitree_hg/msg/Node[]): its length would come from each payload; only fixed-size fields are read; not subscribed`,
      WORKER_REFUSAL_MS,
    );
  });

  it('M1: 36,000 extra type sections', async () => {
    const o = await refusalOf('M1 sections', { definition: m1ManySectionsDefinition() }, SCAN_REFUSAL_MS);
    expectRefused(
      o,
      `${REFUSED} [(definition)]: the advertised definition is 889,524 characters; the limit is 65,536; not subscribed`,
      SCAN_REFUSAL_MS,
    );
  });

  it('an advertisement over the protocol’s schema limit is a problem naming the channel and the limit', async () => {
    const o = await refusalOf('over schema limit', { definition: overSchemaLimitDefinition() }, SCAN_REFUSAL_MS);
    expectRefused(
      o,
      'unsupported_encoding: /lowstate: advertised with a schema of 1,000,100 characters; the limit is 1,000,000; not subscribed',
      SCAN_REFUSAL_MS,
    );
  });
});
