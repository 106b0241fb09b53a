// Hostile XML and MJCF: nesting deep enough to overflow a recursive reader,
// includes that multiply, nest or loop, and character references to code points XML does not
// have. Each must end in a located InputError (file, line, column) — never "Maximum call stack
// size exceeded", "Invalid code point" or a hang.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  MAX_MJCF_DEPTH,
  MAX_MJCF_INCLUDE_DEPTH,
  MAX_MJCF_INCLUDES,
  readMjcf,
  readMjcfFileReferences,
} from '../../src/domain/robot/mjcfReader';
import { MAX_XML_DEPTH, parseXml } from '../../src/domain/xml/parseXml';
import {
  deepAcrossIncludes,
  deeplyNestedBodies,
  deeplyNestedXml,
  exponentialIncludes,
  includeChain,
  includeCycle,
} from '../helpers/hostileInputs';
import { MENAGERIE_SCENE } from '../helpers/sharedData';
import { captureError, readVirtual } from './mjcfTestHelpers';

describe('XML reader: nesting and character references', () => {
  it('20 000 nested elements: a located error at the first element past MAX_XML_DEPTH, not a stack overflow', () => {
    const text = deeplyNestedXml(20_000);
    const err = captureError(() => parseXml(text, 'deep.xml'));
    // <mujoco> is depth 1, so the (MAX_XML_DEPTH)-th <a> is the first one too deep.
    const column = '<mujoco>'.length + (MAX_XML_DEPTH - 1) * '<a>'.length + 1;
    expect(err.location).toEqual({ file: 'deep.xml', line: 1, column });
    expect(err.reason).toMatch(
      new RegExp(`<a> is nested ${MAX_XML_DEPTH + 1} elements deep, deeper than the limit of ${MAX_XML_DEPTH}`),
    );
  });

  it('MAX_XML_DEPTH levels are still read', () => {
    const root = parseXml(deeplyNestedXml(MAX_XML_DEPTH - 1), 'ok.xml');
    let depth = 1;
    for (let el = root; el.children.length > 0; el = el.children[0]) depth++;
    expect(depth).toBe(MAX_XML_DEPTH);
  });

  it('&#x110000; in an attribute: located at the reference, not "Invalid code point"', () => {
    const err = captureError(() => parseXml('<mujoco>\n  <body name="a&#x110000;b"/>\n</mujoco>', 'cp.xml'));
    expect(err.location).toEqual({ file: 'cp.xml', line: 2, column: 16 }); // the '&'
    expect(err.reason).toMatch(/character reference &#x110000; is not a character XML allows \(beyond U\+10FFFF/);
  });

  it('decimal references beyond Unicode, NUL and lone surrogates in text are located errors too', () => {
    for (const [ref, col] of [
      ['&#99999999999999;', 9],
      ['&#0;', 9],
      ['&#xD800;', 9],
    ] as const) {
      const err = captureError(() => parseXml(`<mujoco>${ref}</mujoco>`, 'text.xml'));
      expect(err.location, ref).toEqual({ file: 'text.xml', line: 1, column: col });
      expect(err.reason).toContain(`character reference ${ref} is not a character XML allows`);
    }
    expect(parseXml('<mujoco name="&#x10FFFF;&#233;&#x9;"/>', 'ok.xml').attrs.name).toBe('\u{10FFFF}é\t');
  });
});

describe('MJCF reader: deep models and include expansion', () => {
  it('3 000 nested bodies: located error at the first body past the limit', () => {
    const err = captureError(() => readVirtual({ 'm/deep.xml': deeplyNestedBodies(3000) }, 'm/deep.xml'));
    expect(err.location.file).toBe('m/deep.xml');
    expect(err.location.line).toBe(3);
    expect(err.location.column).toBe((MAX_XML_DEPTH - 2) * '<body>'.length + 1);
    expect(err.reason).toMatch(/<body> is nested 257 elements deep/);
  });

  it('bodies nested within the per-file limit but too deep once an include is expanded: located in the included file', () => {
    const { files, entry } = deepAcrossIncludes(200);
    const err = captureError(() => readVirtual(files, entry));
    expect(err.location.file).toBe('models/inner.xml');
    expect(err.location.line).toBe(2);
    expect(err.reason).toMatch(new RegExp(`nested ${MAX_MJCF_DEPTH + 1} elements deep once the includes are expanded`));
  });

  it('includes that multiply (3 per file, 9 levels = 19 683 expansions) stop at MAX_MJCF_INCLUDES with the include located', () => {
    const { files, entry } = exponentialIncludes(9, 3);
    let reads = 0;
    const t0 = performance.now();
    const err = captureError(() =>
      readMjcf({
        file: entry,
        readText: (p) => {
          reads++;
          return files[p];
        },
      }),
    );
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(reads).toBeLessThanOrEqual(MAX_MJCF_INCLUDES + 1);
    expect(err.location.file).toMatch(/^models\/inc\d\.xml$/);
    expect(err.location.line).toBeGreaterThanOrEqual(2);
    expect(err.location.column).toBe(3);
    expect(err.location.key).toBe('file');
    expect(err.reason).toMatch(new RegExp(`expands more than ${MAX_MJCF_INCLUDES} <include>s`));
  });

  it('a chain of 20 includes stops at MAX_MJCF_INCLUDE_DEPTH, located at the include that goes too deep', () => {
    const { files, entry } = includeChain(20);
    const err = captureError(() => readVirtual(files, entry));
    expect(err.location).toEqual({ file: `models/c${MAX_MJCF_INCLUDE_DEPTH}.xml`, line: 2, column: 3, key: 'file' });
    expect(err.reason).toMatch(
      new RegExp(`includes are nested more than ${MAX_MJCF_INCLUDE_DEPTH} deep: models/c0.xml -> models/c1.xml -> `),
    );
  });

  it('an include cycle spelled differently (./a.xml) is found at once and located at the include that closes it', () => {
    const { files, entry } = includeCycle();
    files['models/./a.xml'] = files['models/a.xml'];
    const err = captureError(() => readVirtual(files, entry));
    expect(err.location).toEqual({ file: 'models/b.xml', line: 4, column: 3, key: 'file' });
    expect(err.reason).toBe('include cycle: models/a.xml -> models/b.xml -> models/./a.xml');
  });

  it('a missing include names the include that asked for it', () => {
    const err = captureError(() =>
      readVirtual({ 'models/g1.xml': '<mujoco>\n <include file="robot.xml"/></mujoco>' }, 'models/g1.xml'),
    );
    expect(err.location.file).toBe('models/robot.xml');
    expect(err.reason).toMatch(/cannot read the file .*\(included from models\/g1\.xml:2:2\)/);
  });
});

describe('MJCF file references (what MuJoCo will open)', () => {
  it("lists Menagerie's included g1.xml and every mesh under meshdir, each with the element that names it", () => {
    const refs = readMjcfFileReferences({ file: MENAGERIE_SCENE, readText: (p) => fs.readFileSync(p, 'utf8') });
    const dir = MENAGERIE_SCENE.replace(/\/scene\.xml$/, '');
    expect(refs[0]).toEqual({
      kind: 'include',
      file: `${dir}/g1.xml`,
      declaredAt: { file: MENAGERIE_SCENE, line: 2, column: 3, key: 'file' },
    });
    const meshes = refs.filter((r) => r.kind === 'mesh');
    const declared = (fs.readFileSync(`${dir}/g1.xml`, 'utf8').match(/<mesh [^>]*file=/g) ?? []).length;
    expect(meshes.length).toBe(declared);
    expect(meshes[0]).toEqual({
      kind: 'mesh',
      file: `${dir}/assets/pelvis.STL`,
      declaredAt: expect.objectContaining({ file: `${dir}/g1.xml`, key: 'file' }),
    });
    for (const m of meshes) expect(fs.existsSync(m.file), m.file).toBe(true);
  });
});
