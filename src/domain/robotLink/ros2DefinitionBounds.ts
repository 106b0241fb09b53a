import { InputError } from '../problems';

// Bounds on a ROS 2 message definition a robot advertises (foxglove_bridge's `schema` of a channel,
// `ros2msg`: the root type's text, then per dependency a line of '=' and `MSG: pkg/msg/Type` with
// its text), checked before and after it is parsed, so that neither the parse nor the decoding of a
// payload can cost more than the definition's declared sizes allow:
//
// - scanRos2DefinitionText, BEFORE any parse and in one linear pass: the text's length, every
//   line's length (the parser's line pattern backtracks quadratically in a line's length: 16 k
//   characters take ~0.2 s, 32 k ~0.6 s) and the number of type sections (the parser compares
//   every section with every other). It also indexes where each type and field is declared, so
//   the checks after the parse name a line.
// - checkRos2DefinitionBounds, on the parsed definitions (@foxglove/rosmsg's shape): every field's
//   type is declared once, no type contains itself (a recursive type decodes as deep as a payload
//   says), nesting depth, the length of every fixed array, no array of elements that occupy no
//   bytes, no variable-length array, no wstring, and the work of decoding one message: the element
//   reads the fixed structure implies (a fixed array of N elements is N reads per message whatever
//   they hold), both in all and per byte of the smallest payload the definition admits.
//
// Variable-length arrays (`T[]`, `T[<=N]`) are refused: unitree_hg's LowState declares none, and
// the CDR reader takes such an array's length from each payload and sizes its result from it
// before checking it against the payload (a multi-byte primitive array of 2^29 elements allocates
// gigabytes per message for a 30-byte payload; the bound `<=N` is not checked by the reader).
// With them refused, a message's decoding costs at most `steps` element reads plus its strings'
// bytes (each a view of the payload), whatever the payload holds; and since the decoder refuses a
// payload shorter than `minWireBytes` before reading it, and steps ≤ decodeStepsPerByte ×
// minWireBytes, decoding a payload costs at most a few reads per byte of it, as a real one does.
//
// Fields beyond the ones the console reads are allowed within these bounds: every real unitree_hg
// LowState has them (`version`, `wireless_remote`, `reserve`, `crc`, IMUState's `rpy` and
// `temperature`, MotorState's `temperature`, `vol`, `sensor`, `motorstate`, `reserve`), all fixed-size.

/**
 * The bounds. The real unitree_hg LowState with its two dependencies (unitree_ros2 @ eea27198,
 * cyclonedds_ws/src/unitree/unitree_hg/msg) is 634 characters in 30 lines of at most 80 (the
 * separator), 3 type sections, 2 levels of nesting, fixed arrays of at most 40 elements, 625
 * element reads per message and at least 1,983 bytes of payload (0.32 reads per byte); each bound
 * leaves a wide margin above that.
 */
export const ROS2_DEFINITION_LIMITS = {
  /** Characters of the whole advertised definition (100× the real one). */
  definitionChars: 65_536,
  /** Characters of one line, as sent (a line of this length parses in ~1.5 ms). */
  lineChars: 1_000,
  /** Type sections: the root and its `MSG:` dependencies (the real one has 3). */
  typeSections: 32,
  /** Types nested inside one another, the root counting as 1 (the real one has 2). */
  nestingDepth: 8,
  /** Elements of one fixed array (the real one: 40). */
  fixedArrayLength: 4_096,
  /** Element reads of one message's decoding (the real one: 625). */
  decodeSteps: 8_192,
  /** Element reads per byte of the smallest payload the definition admits (the real one: 0.32). */
  decodeStepsPerByte: 4,
} as const;

const L = ROS2_DEFINITION_LIMITS;
const fmt = (n: number): string => n.toLocaleString('en-US');

/** Where each type section and field of a definition text is declared (1-based lines). */
export interface Ros2DefinitionIndex {
  /** The line of each type's `MSG:` line (the last, for a type defined twice); the root's: its first field. */
  typeLines: Map<string, number>;
  /** The line of each field, under `Type.field` (the root's type as given to the scan). */
  fieldLines: Map<string, number>;
  sections: number;
}

/**
 * A definition out of bounds: an InputError located in the definition (file = the message type,
 * line = the line of the definition text, key = `Type.field`), its message one line.
 */
export class Ros2DefinitionBoundsError extends InputError {}

/**
 * Checks the definition text's size, line lengths and section count in one linear pass, and
 * indexes its declarations. Throws Ros2DefinitionBoundsError naming the line. `rootType` names the
 * root section (the channel's schemaName).
 */
export function scanRos2DefinitionText(text: string, rootType: string): Ros2DefinitionIndex {
  if (text.length > L.definitionChars)
    throw new Ros2DefinitionBoundsError(
      { file: rootType, key: '(definition)' },
      `the advertised definition is ${fmt(text.length)} characters; the limit is ${fmt(L.definitionChars)}`,
    );
  const typeLines = new Map<string, number>();
  const fieldLines = new Map<string, number>();
  let section = rootType;
  let sections = 1;
  let lineNo = 0;
  for (let start = 0; start <= text.length;) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    lineNo++;
    const raw = text.slice(start, end);
    start = end + 1;
    if (raw.length > L.lineChars)
      throw new Ros2DefinitionBoundsError(
        { file: rootType, line: lineNo },
        `a line of ${fmt(raw.length)} characters; the limit is ${fmt(L.lineChars)}`,
      );
    const line = raw.trim();
    if (line.length === 0 || line.startsWith('#')) continue;
    if (line.startsWith('==')) {
      // The parser starts a new type at every line that begins with '=='.
      if (++sections > L.typeSections)
        throw new Ros2DefinitionBoundsError(
          { file: rootType, line: lineNo },
          `more than ${L.typeSections} type sections (the root and its "MSG:" dependencies)`,
        );
      section = `(section ${sections})`;
      continue;
    }
    if (line.startsWith('MSG:')) {
      section = line.slice(4).trim().split(/\s+/)[0] ?? section;
      typeLines.set(section, lineNo); // the last: a type defined twice is named where it is defined again
      continue;
    }
    if (!typeLines.has(section)) typeLines.set(section, lineNo);
    const name = line.split(/\s+/)[1]?.split('=')[0];
    if (name && !fieldLines.has(`${section}.${name}`)) fieldLines.set(`${section}.${name}`, lineNo);
  }
  return { typeLines, fieldLines, sections };
}

/** One field of a parsed definition (@foxglove/rosmsg's `parse` with `ros2: true`). */
export interface ParsedRos2Field {
  name: string;
  type: string;
  isComplex?: boolean;
  isArray?: boolean;
  arrayLength?: number;
  arrayUpperBound?: number;
  isConstant?: boolean;
}
export interface ParsedRos2Definition {
  /** The type's full name; undefined for the root. */
  name?: string;
  definitions: readonly ParsedRos2Field[];
}

/** What the decoding of one message of a checked definition costs at most. */
export interface Ros2DecodeCost {
  /** Element reads (fields, array elements, nested instances) of one message. */
  steps: number;
  /** Types nested inside one another, the root counting as 1. */
  depth: number;
  /** The fewest payload bytes (after the 4-byte CDR header) a message of it occupies, alignment aside. */
  minWireBytes: number;
}

/** Bytes a primitive occupies on the wire at least (a string: its uint32 length). */
const PRIMITIVE_WIRE_BYTES: Readonly<Record<string, number>> = {
  bool: 1,
  int8: 1,
  uint8: 1,
  int16: 2,
  uint16: 2,
  int32: 4,
  uint32: 4,
  float32: 4,
  int64: 8,
  uint64: 8,
  float64: 8,
  string: 4,
  time: 8,
  duration: 8,
};

/**
 * Checks parsed definitions (root first) against ROS2_DEFINITION_LIMITS and returns the decoding
 * cost of one message. Throws Ros2DefinitionBoundsError naming the type, the field and, when the
 * index has it, the line.
 */
export function checkRos2DefinitionBounds(
  definitions: readonly ParsedRos2Definition[],
  rootType: string,
  index?: Ros2DefinitionIndex,
): Ros2DecodeCost {
  const refuse = (type: string, field: string | null, reason: string): never => {
    const key = field === null ? type : `${type}.${field}`;
    const line = field === null ? index?.typeLines.get(type) : index?.fieldLines.get(key);
    throw new Ros2DefinitionBoundsError({ file: rootType, ...(line !== undefined ? { line } : {}), key }, reason);
  };
  if (definitions.length === 0) return refuse(rootType, null, 'the definition has no type');
  if (definitions.length > L.typeSections)
    return refuse(rootType, null, `${definitions.length} types; the limit is ${L.typeSections}`);
  const byName = new Map<string, ParsedRos2Definition>();
  definitions.forEach((d, i) => {
    const name = i === 0 ? rootType : d.name;
    if (name === undefined) return refuse(rootType, null, `type section ${i + 1} has no "MSG: " line naming it`);
    if (byName.has(name) || (i > 0 && name === rootType))
      return refuse(name, null, 'defined twice (two different "MSG: " sections of the same type)');
    byName.set(name, d);
  });

  const steps = new Map<string, number>();
  const bytes = new Map<string, number>();
  const height = new Map<string, number>();
  const onPath: string[] = [];
  const visit = (type: string): void => {
    if (steps.has(type)) return;
    const def = byName.get(type)!;
    onPath.push(type);
    let total = 0;
    let wire = 0;
    let h = 1;
    const fields = def.definitions.filter((f) => f.isConstant !== true);
    for (const f of fields) {
      if (f.type === 'wstring')
        refuse(type, f.name, 'wstring cannot be decoded (its encoding is implementation-defined)');
      if (f.isArray === true && f.arrayLength === undefined)
        refuse(
          type,
          f.name,
          `a variable-length array (${f.type}[${f.arrayUpperBound !== undefined ? `<=${f.arrayUpperBound}` : ''}]): ` +
            'its length would come from each payload; only fixed-size fields are read',
        );
      const n = f.isArray === true ? f.arrayLength! : 1;
      if (f.isArray === true && n > L.fixedArrayLength)
        refuse(type, f.name, `a fixed array of ${fmt(n)} elements; the limit is ${fmt(L.fixedArrayLength)}`);
      let each = 1;
      let eachBytes = PRIMITIVE_WIRE_BYTES[f.type] ?? 0;
      if (f.isComplex !== true && eachBytes === 0)
        refuse(type, f.name, `${f.type} is not a primitive type the reader knows`);
      if (f.isComplex === true) {
        const nested = byName.get(f.type);
        if (!nested) refuse(type, f.name, `its type ${f.type} has no "MSG: " section in the definition`);
        const cycle = onPath.indexOf(f.type);
        if (cycle >= 0) refuse(type, f.name, `a recursive type: ${[...onPath.slice(cycle), f.type].join(' → ')}`);
        visit(f.type);
        each = 1 + steps.get(f.type)!;
        eachBytes = bytes.get(f.type)!;
        h = Math.max(h, 1 + height.get(f.type)!);
        if (h > L.nestingDepth)
          refuse(type, f.name, `types nested ${h} deep from ${type}; the limit is ${L.nestingDepth}`);
      }
      if (f.isArray === true && n > 0 && eachBytes === 0)
        refuse(
          type,
          f.name,
          `an array of ${fmt(n)} ${f.type} whose elements occupy no bytes: decoding it reads nothing ${fmt(n)} times`,
        );
      const cost = Math.max(1, n * each);
      total += cost;
      wire += n * eachBytes;
      if (total > L.decodeSteps)
        refuse(
          type,
          f.name,
          `decoding it takes ${fmt(cost)} element reads per message (${fmt(total)} in ${type} up to it); ` +
            `the limit is ${fmt(L.decodeSteps)}`,
        );
    }
    // A type without data fields is still read as one byte (ROS 2's placeholder member).
    steps.set(type, Math.max(1, total));
    bytes.set(type, fields.length === 0 ? 1 : wire);
    height.set(type, h);
    onPath.pop();
  };
  visit(rootType);
  const cost = { steps: steps.get(rootType)!, depth: height.get(rootType)!, minWireBytes: bytes.get(rootType)! };
  if (cost.steps > L.decodeStepsPerByte * cost.minWireBytes)
    refuse(
      rootType,
      null,
      `decoding one message takes ${fmt(cost.steps)} element reads for a payload of at least ${fmt(cost.minWireBytes)} bytes; ` +
        `the limit is ${L.decodeStepsPerByte} reads per byte`,
    );
  return cost;
}
