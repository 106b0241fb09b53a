import { parse } from '@foxglove/rosmsg';
import { describe, expect, it } from 'vitest';
import {
  checkRos2DefinitionBounds,
  Ros2DefinitionBoundsError,
  ROS2_DEFINITION_LIMITS,
  scanRos2DefinitionText,
} from '../../src/domain/robotLink/ros2DefinitionBounds';
import { checkUnitreeLowStateDefinition } from '../../src/domain/robotLink/unitreeLowState';
import {
  c1QuadraticLineDefinition,
  c2ZeroSizeElementsDefinition,
  m1ManySectionsDefinition,
  m1RecursiveDefinition,
  overSchemaLimitDefinition,
} from '../helpers/hostileRos2Definitions';
import { lowStateDefinitionText } from '../helpers/ros2LowStateBridge';

// The bounds on an advertised ROS 2 definition (src/domain/robotLink/ros2DefinitionBounds.ts), on
// Unitree's real unitree_hg LowState (control: it passes, with its measured figures) and on the
// hostile definitions of test/helpers/hostileRos2Definitions.ts: each refused with an InputError
// naming the message, the line and the field, in bounded time (the text checks are one linear pass;
// the parse of what passes them is bounded by them).

const ROOT = 'unitree_hg/msg/LowState';
const SEP = `\n${'='.repeat(80)}\n`;

/** How long the text scan takes to refuse `text`, ms (the scan alone: what runs on the services' loop). */
function scanMs(text: string): number {
  const t0 = performance.now();
  expect(() => scanRos2DefinitionText(text, ROOT)).toThrow(Ros2DefinitionBoundsError);
  return performance.now() - t0;
}

/** Scan, parse and check as the worker does; the error, or the cost. */
function check(text: string) {
  try {
    const index = scanRos2DefinitionText(text, ROOT);
    return { ok: true as const, cost: checkRos2DefinitionBounds(parse(text, { ros2: true }), ROOT, index) };
  } catch (err) {
    return { ok: false as const, err: err as Error };
  }
}

function refusal(text: string): Ros2DefinitionBoundsError {
  const r = check(text);
  if (r.ok) throw new Error(`accepted: ${JSON.stringify(r.cost)}`);
  expect(r.err).toBeInstanceOf(Ros2DefinitionBoundsError);
  expect(r.err.message).not.toContain('\n');
  return r.err as Ros2DefinitionBoundsError;
}

const realRoot = (): string => lowStateDefinitionText().split('\n=')[0].replace(/\n?$/, '\n');
const withLowState = (extra: string, sections = ''): string =>
  lowStateDefinitionText({ LowState: realRoot() + extra }) + sections;

describe('ROS 2 definition bounds', () => {
  it('control: the real unitree_hg LowState passes, with its figures (634 characters, 3 sections, depth 2, 625 reads, ≥ 1,983 bytes)', () => {
    const text = lowStateDefinitionText();
    expect(text.length).toBe(634);
    const index = scanRos2DefinitionText(text, ROOT);
    expect(index.sections).toBe(3);
    const defs = parse(text, { ros2: true });
    expect(checkRos2DefinitionBounds(defs, ROOT, index)).toEqual({ steps: 625, depth: 2, minWireBytes: 1983 });
    expect(() => checkUnitreeLowStateDefinition(defs)).not.toThrow();
    // The figures the bounds are set above, with margin.
    const L = ROS2_DEFINITION_LIMITS;
    expect(text.length * 100).toBeLessThan(L.definitionChars + 2_000);
    expect(625 * 10).toBeLessThan(L.decodeSteps);
  });

  it('C1: a line of 900,012 characters is refused before any parse, naming its line, in one linear pass', () => {
    const text = c1QuadraticLineDefinition();
    const err = refusal(text);
    // The whole text is over the definition limit first; with a shorter line, the line limit names its line.
    expect(err.message).toBe(
      `${ROOT} [(definition)]: the advertised definition is 900,648 characters; the limit is 65,536`,
    );
    expect(scanMs(text)).toBeLessThan(100);
    const line = refusal(c1QuadraticLineDefinition(20_000));
    expect(line.message).toBe(`${ROOT}:10: a line of 20,012 characters; the limit is 1,000`);
    expect(line.location).toEqual({ file: ROOT, line: 10 });
  });

  it('control: a line just at the line limit passes the scan, and such lines parse quickly', () => {
    const text = withLowState(`# ${'x'.repeat(ROS2_DEFINITION_LIMITS.lineChars - 2)}\n`);
    expect(check(text).ok).toBe(true);
    // Lines built to backtrack, at the line limit: the parser refuses the first quickly (it stops there).
    const hostileLine = `uint8 pad a${' '.repeat(ROS2_DEFINITION_LIMITS.lineChars - 13)}\\`;
    const worst = Array.from({ length: 64 }, () => hostileLine).join('\n');
    expect(worst.length).toBeLessThan(ROS2_DEFINITION_LIMITS.definitionChars);
    const t0 = performance.now();
    expect(() => parse(worst, { ros2: true })).toThrow(/Could not parse line/);
    expect(performance.now() - t0).toBeLessThan(1_000);
  });

  it('C2: a fixed array of a billion zero-size elements is refused, naming the field and its line', () => {
    const err = refusal(c2ZeroSizeElementsDefinition());
    expect(err.message).toBe(`${ROOT}:10 [${ROOT}.pad]: a fixed array of 1,000,000,000 elements; the limit is 4,096`);
    // Within the length limit, an array whose elements occupy no bytes is refused all the same.
    expect(refusal(c2ZeroSizeElementsDefinition(100)).message).toBe(
      `${ROOT}:10 [${ROOT}.pad]: an array of 100 unitree_hg/msg/Z whose elements occupy no bytes: decoding it reads nothing 100 times`,
    );
  });

  it('control: a single field of a type that occupies no bytes is one read, and passes', () => {
    const r = check(withLowState('Z pad\n', `${SEP}MSG: unitree_hg/msg/Z\nfloat32[0] nothing\n`));
    expect(r.ok && r.cost).toEqual({ steps: 627, depth: 2, minWireBytes: 1983 });
  });

  it('M1: a recursive type is refused naming the cycle', () => {
    const err = refusal(m1RecursiveDefinition());
    expect(err.message).toBe(
      `${ROOT}:35 [unitree_hg/msg/Node.children]: a variable-length array (unitree_hg/msg/Node[]): its length would come from each payload; only fixed-size fields are read`,
    );
    // A recursion through fixed-size fields only is refused as recursive.
    const fixed = withLowState(
      'Node tree\n',
      `${SEP}MSG: unitree_hg/msg/Node\nuint8 v\nLeaf[2] leaves\n${SEP}MSG: unitree_hg/msg/Leaf\nuint8 w\nNode back\n`,
    );
    expect(refusal(fixed).message).toBe(
      `${ROOT}:41 [unitree_hg/msg/Leaf.back]: a recursive type: unitree_hg/msg/Node → unitree_hg/msg/Leaf → unitree_hg/msg/Node`,
    );
  });

  it('M1: 36,000 extra type sections are refused at the 33rd, before any parse, in one linear pass', () => {
    const text = m1ManySectionsDefinition();
    const err = refusal(text);
    expect(scanMs(text)).toBeLessThan(100);
    // The text is over the definition limit first; with fewer sections, the section limit names its line.
    expect(err.message).toBe(
      `${ROOT} [(definition)]: the advertised definition is 889,524 characters; the limit is 65,536`,
    );
    const fewer = refusal(m1ManySectionsDefinition(40));
    // Under the length limit (2,700 short sections): refused at the 33rd section in one pass.
    const many = lowStateDefinitionText() + '\n==\nMSG: a/b\nuint8 x'.repeat(2_700);
    expect(many.length).toBeLessThan(ROS2_DEFINITION_LIMITS.definitionChars);
    expect(scanMs(many)).toBeLessThan(100);
    expect(fewer.message).toBe(`${ROOT}:118: more than 32 type sections (the root and its "MSG:" dependencies)`);
  });

  it('control: 29 extra sections (32 in all) pass', () => {
    expect(check(m1ManySectionsDefinition(29)).ok).toBe(true);
  });

  it('nesting deeper than 8 is refused naming the field; 8 passes', () => {
    const chain = (levels: number): string => {
      let sections = '';
      for (let i = 1; i <= levels; i++)
        sections += `${SEP}MSG: unitree_hg/msg/N${i}\n${i < levels ? `N${i + 1} next` : 'uint8 leaf'}\n`;
      return withLowState('N1 deep\n', sections);
    };
    expect(check(chain(7)).ok).toBe(true); // LowState + 7 = 8 levels
    expect(refusal(chain(8)).message).toMatch(
      /\[unitree_hg\/msg\/LowState\.deep\]: types nested 9 deep from unitree_hg\/msg\/LowState; the limit is 8$/,
    );
  });

  it('decoding cost: more than 8,192 reads per message, or more than 4 per payload byte, is refused', () => {
    const many = withLowState('uint8[4096] a\nuint8[4096] b\n');
    expect(refusal(many).message).toMatch(
      /\[unitree_hg\/msg\/LowState\.b\]: decoding it takes 4,096 element reads per message \(8,\d\d\d in unitree_hg\/msg\/LowState up to it\); the limit is 8,192$/,
    );
    // 2,000 one-field structs of one empty type: 2 reads per byte.
    const sparse = withLowState('E[2000] e\n', `${SEP}MSG: unitree_hg/msg/E\n`);
    const r = check(sparse);
    expect(r.ok && r.cost.steps).toBe(625 + 4000);
    // Single fields of a zero-size type: reads with no bytes behind them.
    const lines = Array.from({ length: 2000 }, (_, i) => `Z z${i}\n`).join('');
    const zeros = refusal(
      lowStateDefinitionText({ LowState: `uint8 x\n${lines}` }) + `${SEP}MSG: unitree_hg/msg/Z\nfloat32[0] nothing\n`,
    );
    expect(zeros.message).toBe(
      `${ROOT}:1 [${ROOT}]: decoding one message takes 4,001 element reads for a payload of at least 1 bytes; the limit is 4 reads per byte`,
    );
  });

  it('variable-length arrays, bounded ones and wstring are refused naming the field', () => {
    expect(refusal(withLowState('float64[] extra\n')).message).toMatch(
      /:10 \[unitree_hg\/msg\/LowState\.extra\]: a variable-length array \(float64\[\]\)/,
    );
    expect(refusal(withLowState('float64[<=8] extra\n')).message).toMatch(/a variable-length array \(float64\[<=8\]\)/);
    expect(refusal(withLowState('wstring w\n')).message).toMatch(/\.w\]: wstring cannot be decoded/);
    // Control: a string and a fixed array of strings are read as views of the payload.
    expect(check(withLowState('string s\nstring[4] t\n')).ok).toBe(true);
  });

  it('a type defined twice, or a section named as the root, is refused', () => {
    const twice = withLowState(
      'Y y\n',
      `${SEP}MSG: unitree_hg/msg/Y\nuint8 a\n${SEP}MSG: unitree_hg/msg/Y\nuint16 a\n`,
    );
    // The parser itself refuses a referenced type it finds twice; an unreferenced one reaches the bounds.
    expect(check(twice)).toMatchObject({
      ok: false,
      err: { message: expect.stringMatching(/Cannot unambiguously determine/) },
    });
    const unreferenced =
      lowStateDefinitionText() + `${SEP}MSG: unitree_hg/msg/Y\nuint8 a\n${SEP}MSG: unitree_hg/msg/Y\nuint16 a\n`;
    expect(refusal(unreferenced).message).toBe(
      `${ROOT}:36 [unitree_hg/msg/Y]: defined twice (two different "MSG: " sections of the same type)`,
    );
    const root = lowStateDefinitionText() + `${SEP}MSG: ${ROOT}\nuint8 mode_pr\n`;
    expect(refusal(root).message).toMatch(/\[unitree_hg\/msg\/LowState\]: defined twice/);
  });

  it('over the protocol schema limit: refused by length alone', () => {
    const text = overSchemaLimitDefinition();
    expect(text.length).toBe(1_000_100);
    expect(refusal(text).message).toBe(
      `${ROOT} [(definition)]: the advertised definition is 1,000,100 characters; the limit is 65,536`,
    );
  });
});
