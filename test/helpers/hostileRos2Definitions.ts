import { FOXGLOVE_CLIENT_LIMITS } from '../../src/domain/bridge/foxgloveServerMessages';
import { lowStateDefinitionText } from './ros2LowStateBridge';

// Message definitions a hostile ROS 2 robot (a foxglove_bridge-like server) can advertise for its
// `/lowstate` (unitree_hg/msg/LowState), each built on Unitree's real definition so that only the
// hostile part differs, and the payloads that go with them. For the robot link's tests and for a
// STOP-latency harness: advertise one with startRos2LowStateBridge({ definition, writeDefinition:
// lowStateDefinitionText(), payload }) and watch the services' loop while the console refuses it.
//
//   c1QuadraticLineDefinition      a line the parser's pattern backtracks on quadratically
//   c2ZeroSizeElementsDefinition   a fixed array of a billion elements that occupy no bytes
//   m1RecursiveDefinition          a type that contains itself (+ m1DeepPayload: a payload nesting it deep)
//   m1ManySectionsDefinition       tens of thousands of extra type sections
//   overSchemaLimitDefinition      a definition over the protocol check's schema limit (1,000,000 characters)

/** The real LowState.msg text (the root section of the real definition). */
const realLowState = (): string => lowStateDefinitionText().split('\n=')[0];

/** The real definition with extra LowState lines (after the real ones) and extra sections after its own. */
function realWith(extraLowStateLines: string, extraSections = ''): string {
  const root = realLowState();
  return lowStateDefinitionText({ LowState: `${root.replace(/\n?$/, '\n')}${extraLowStateLines}` }) + extraSections;
}

/**
 * C1: LowState gains the one line `uint8 pad a` + `spaces` spaces + `\` (900,000 by default: the
 * text stays under the protocol check's 1,000,000-character schema limit). @foxglove/rosmsg's line
 * pattern backtracks quadratically on it (16 k characters 0.2 s, 32 k 0.6 s; 900 k ≈ 8 min).
 */
export function c1QuadraticLineDefinition(spaces = 900_000): string {
  return realWith(`uint8 pad a${' '.repeat(spaces)}\\\n`);
}

/**
 * C2: LowState gains `Z[count] pad` where `unitree_hg/msg/Z` holds only `float32[0] nothing`:
 * every element occupies no bytes, so a reader loops `count` times (a billion by default) on any
 * payload, making an object each time.
 */
export function c2ZeroSizeElementsDefinition(count = 1_000_000_000): string {
  return realWith(`Z[${count}] pad\n`, `\n${'='.repeat(80)}\nMSG: unitree_hg/msg/Z\nfloat32[0] nothing\n`);
}

/**
 * M1 (recursive): LowState gains `Node tree` where `unitree_hg/msg/Node` is `Node[] children`: a
 * type that contains itself, decoded as deep as a payload nests it (m1DeepPayload).
 */
export function m1RecursiveDefinition(): string {
  return realWith('Node tree\n', `\n${'='.repeat(80)}\nMSG: unitree_hg/msg/Node\nNode[] children\n`);
}

/**
 * The payload of m1RecursiveDefinition nesting `tree` `depth` levels deep: a real LowState payload
 * (CDR, ending 4-aligned with `uint32 crc`) followed by `depth` sequence lengths of 1 and a last 0.
 */
export function m1DeepPayload(realPayload: Uint8Array, depth = 200_000): Uint8Array {
  const out = new Uint8Array(realPayload.byteLength + 4 * (depth + 1));
  out.set(realPayload);
  const dv = new DataView(out.buffer);
  const le = realPayload[1] === 1; // CDR_LE encapsulation
  for (let i = 0; i < depth; i++) dv.setUint32(realPayload.byteLength + 4 * i, 1, le);
  return out;
}

/**
 * M1 (sections): the real definition followed by `sections` extra type sections (36,000 by
 * default), each `==` / `MSG: a/b<i>` / `uint8 x` (unreferenced, so the short name need not
 * resolve): about 890 KB, under the schema limit. The parser compares every section with every other.
 */
export function m1ManySectionsDefinition(sections = 36_000): string {
  let extra = '';
  for (let i = 0; i < sections; i++) extra += `\n==\nMSG: a/b${i}\nuint8 x`;
  return lowStateDefinitionText() + extra;
}

/**
 * A definition just over the protocol check's schema limit (FOXGLOVE_CLIENT_LIMITS.schemaChars):
 * the real one followed by comment lines (each a valid line) up to `limit + over` characters.
 */
export function overSchemaLimitDefinition(over = 100): string {
  const target = FOXGLOVE_CLIENT_LIMITS.schemaChars + over;
  let text = lowStateDefinitionText();
  const line = `\n# ${'x'.repeat(76)}`;
  while (text.length + line.length <= target) text += line;
  return text + `\n#${'x'.repeat(Math.max(0, target - text.length - 2))}`;
}
