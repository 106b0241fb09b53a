import { afterEach, describe, expect, it } from 'vitest';
import { ROS2_DEFINITION_LIMITS, Ros2DefinitionBoundsError } from '../../src/domain/robotLink/ros2DefinitionBounds';
import { UnitreeDefinitionError } from '../../src/domain/robotLink/unitreeLowState';
import { Ros2DefinitionChecker } from '../../src/services/robotLink/ros2DefinitionOffThread';
import { c2ZeroSizeElementsDefinition } from '../helpers/hostileRos2Definitions';
import { lowStateDefinitionText } from '../helpers/ros2LowStateBridge';

// The worker thread that parses and checks an advertised ROS 2 definition
// (src/services/robotLink/ros2DefinitionOffThread.ts): a real definition comes back parsed with its
// decoding cost; a refusal comes back as its own error type; a check that misses its deadline, or a
// worker that runs out of its heap, is a refusal naming the limit, and the next check gets a fresh
// worker.

const ROOT = 'unitree_hg/msg/LowState';
const checkers: Ros2DefinitionChecker[] = [];
afterEach(async () => {
  for (const c of checkers.splice(0)) await c.close();
});
const checker = (o: ConstructorParameters<typeof Ros2DefinitionChecker>[0] = {}): Ros2DefinitionChecker => {
  const c = new Ros2DefinitionChecker(o);
  checkers.push(c);
  return c;
};

/** A definition within the bounds that takes a few ms to parse and check: the real one plus 4,000 uint8 fields. */
const slowToParse = (): string => {
  const root = `${lowStateDefinitionText().split('\n=')[0]}\n`;
  const extra = Array.from({ length: 4000 }, (_, i) => `uint8 f${i}\n`).join('');
  return lowStateDefinitionText({ LowState: root + extra });
};

describe('the ROS 2 definition checker (a worker thread with a deadline and a heap cap)', () => {
  it('control: the real definition comes back parsed, with its decoding cost', async () => {
    const r = await checker().check(ROOT, lowStateDefinitionText());
    expect(r.cost).toEqual({ steps: 625, depth: 2, minWireBytes: 1983 });
    expect(r.definitions.map((d) => d.name)).toEqual([
      undefined,
      'unitree_hg/msg/IMUState',
      'unitree_hg/msg/MotorState',
    ]);
  });

  it('refusals come back as their own types, in order; the worker goes on', async () => {
    const c = checker();
    const bounds = c.check(ROOT, c2ZeroSizeElementsDefinition());
    const unitree = c.check(ROOT, lowStateDefinitionText({ MotorState: 'uint8 mode\nfloat32 q\n' }));
    const parseError = c.check(ROOT, 'uint8 Bad-Name\n');
    const real = c.check(ROOT, lowStateDefinitionText());
    await expect(bounds).rejects.toBeInstanceOf(Ros2DefinitionBoundsError);
    await expect(bounds).rejects.toThrow(`${ROOT}:10 [${ROOT}.pad]: a fixed array of 1,000,000,000 elements`);
    await expect(unitree).rejects.toBeInstanceOf(UnitreeDefinitionError);
    await expect(unitree).rejects.toThrow(/unitree_hg\/msg\/MotorState\.dq: missing/);
    await expect(parseError).rejects.toThrow(/^unitree_hg\/msg\/LowState: the advertised definition does not parse: /);
    await expect(real).resolves.toMatchObject({ cost: { steps: 625 } });
  });

  it('a check that misses its deadline is refused naming it; the next check gets a fresh worker', async () => {
    const c = checker({ checkMs: 1 });
    const t0 = performance.now();
    const slow = c.check(ROOT, slowToParse());
    await expect(slow).rejects.toBeInstanceOf(Ros2DefinitionBoundsError);
    await expect(slow).rejects.toThrow(`${ROOT} [(definition)]: checking it took longer than 1 ms; refused`);
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(ROS2_DEFINITION_LIMITS.definitionChars).toBeGreaterThan(slowToParse().length);
    // With room, the same definition passes (it is within the bounds): only the deadline refused it.
    await expect(checker().check(ROOT, slowToParse())).resolves.toMatchObject({ cost: { steps: 4625 } });
    // The timed-out checker's next check runs in a fresh worker, and is answered (within 1 ms, or refused for the deadline).
    expect(c.workersStarted).toBe(1);
    await expect(c.check(ROOT, 'uint8 mode_pr\n')).rejects.toThrow(
      /unitree_hg\/msg\/LowState\.mode_machine: missing|checking it took longer than 1 ms/,
    );
    expect(c.workersStarted).toBe(2);
  });

  it('a worker out of its heap is a refusal naming the heap, and the process lives', async () => {
    // A heap too small for the worker to even start: it dies with ERR_WORKER_OUT_OF_MEMORY.
    const c = checker({ heapMib: 2 });
    const r = c.check(ROOT, lowStateDefinitionText());
    await expect(r).rejects.toThrow(
      `${ROOT} [(definition)]: checking it needed more than the 2 MiB heap it is given; refused`,
    );
    // The next check, on a checker with the default heap, is answered.
    await expect(checker().check(ROOT, lowStateDefinitionText())).resolves.toBeDefined();
  });
});
