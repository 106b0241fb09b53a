import { InputError } from '../problems';

// A small XML parser for MJCF and URDF: elements, attributes, comments, processing
// instructions, CDATA and the five predefined entities. Text content is kept only where it is
// non-blank. Every element remembers its 1-based line and column so model errors can point at
// the exact place in the user's file. No DTDs, no namespaces beyond keeping `a:b` names.
// Hostile input is refused with a located error, never a stack overflow: elements nest at most
// MAX_XML_DEPTH deep, and a character reference must name a character XML allows.

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
  file: string;
  line: number;
  column: number;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Deepest element nesting accepted (the root element is depth 1). Robot models use about 20. */
export const MAX_XML_DEPTH = 256;

/** XML 1.0 `Char`: tab, newline, carriage return, U+0020–U+D7FF, U+E000–U+FFFD, U+10000–U+10FFFF. */
const isXmlChar = (c: number): boolean =>
  c === 0x9 ||
  c === 0xa ||
  c === 0xd ||
  (c >= 0x20 && c <= 0xd7ff) ||
  (c >= 0xe000 && c <= 0xfffd) ||
  (c >= 0x10000 && c <= 0x10ffff);

export function parseXml(source: string, file: string): XmlElement {
  let i = 0;
  // Line starts, for turning an offset into line/column lazily.
  const lineStarts = [0];
  for (let k = 0; k < source.length; k++) if (source.charCodeAt(k) === 10) lineStarts.push(k + 1);
  const locate = (offset: number): { line: number; column: number } => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - lineStarts[lo] + 1 };
  };
  const fail = (offset: number, reason: string): never => {
    throw new InputError({ file, ...locate(offset) }, reason);
  };
  /** Replaces the entities of `raw`, which starts at `offset` in the source (errors point at the entity). */
  const decode = (raw: string, offset: number): string =>
    raw.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (_m, ent: string, at: number) => {
      if (ent[0] === '#') {
        const code = ent[1] === 'x' ? parseInt(ent.slice(2), 16) : parseInt(ent.slice(1), 10);
        if (!isXmlChar(code)) {
          fail(
            offset + at,
            `character reference &${ent}; is not a character XML allows (${code > 0x10ffff ? 'beyond U+10FFFF, the last Unicode code point' : 'a control character, a surrogate or a non-character'})`,
          );
        }
        return String.fromCodePoint(code);
      }
      const v = ENTITIES[ent];
      if (v === undefined) fail(offset + at, `unknown entity &${ent};`);
      return v;
    });

  const skipMisc = (): void => {
    for (;;) {
      while (i < source.length && /\s/.test(source[i])) i++;
      if (source.startsWith('<!--', i)) {
        const end = source.indexOf('-->', i + 4);
        if (end < 0) fail(i, 'unterminated comment');
        i = end + 3;
      } else if (source.startsWith('<?', i)) {
        const end = source.indexOf('?>', i + 2);
        if (end < 0) fail(i, 'unterminated processing instruction');
        i = end + 2;
      } else if (source.startsWith('<!DOCTYPE', i)) {
        const end = source.indexOf('>', i);
        if (end < 0) fail(i, 'unterminated DOCTYPE');
        i = end + 1;
      } else return;
    }
  };

  const nameRe = /[A-Za-z_:][-A-Za-z0-9_:.]*/y;
  const readName = (): string => {
    nameRe.lastIndex = i;
    const m = nameRe.exec(source);
    if (!m) fail(i, `expected a name, found ${JSON.stringify(source.slice(i, i + 10))}`);
    i += m![0].length;
    return m![0];
  };

  const parseElement = (depth: number): XmlElement => {
    const start = i;
    if (source[i] !== '<') fail(i, 'expected "<"');
    i++;
    const name = readName();
    if (depth > MAX_XML_DEPTH)
      fail(start, `<${name}> is nested ${depth} elements deep, deeper than the limit of ${MAX_XML_DEPTH}`);
    const el: XmlElement = { name, attrs: {}, children: [], text: '', file, ...locate(start) };
    for (;;) {
      while (i < source.length && /\s/.test(source[i])) i++;
      if (i >= source.length) fail(start, `element <${name}> is not closed (end of file)`);
      if (source.startsWith('/>', i)) {
        i += 2;
        return el;
      }
      if (source[i] === '>') {
        i++;
        break;
      }
      const attrStart = i;
      const attr = readName();
      while (/\s/.test(source[i])) i++;
      if (source[i] !== '=') fail(i, `attribute "${attr}" of <${name}> has no value`);
      i++;
      while (/\s/.test(source[i])) i++;
      const quote = source[i];
      if (quote !== '"' && quote !== "'") fail(i, `attribute "${attr}" of <${name}> must be quoted`);
      const end = source.indexOf(quote, i + 1);
      if (end < 0) fail(i, `attribute "${attr}" of <${name}> is not closed`);
      if (attr in el.attrs) fail(attrStart, `attribute "${attr}" repeated on <${name}>`);
      el.attrs[attr] = decode(source.slice(i + 1, end), i + 1);
      i = end + 1;
    }
    // Content.
    let text = '';
    for (;;) {
      if (i >= source.length) fail(start, `element <${name}> is not closed (end of file)`);
      if (source.startsWith('</', i)) {
        const closeAt = i;
        i += 2;
        const closeName = readName();
        if (closeName !== name) fail(closeAt, `</${closeName}> closes <${name}> opened at line ${el.line}`);
        while (/\s/.test(source[i])) i++;
        if (source[i] !== '>') fail(i, `expected ">" after </${closeName}`);
        i++;
        el.text = text.trim();
        return el;
      }
      if (source.startsWith('<!--', i)) {
        const end = source.indexOf('-->', i + 4);
        if (end < 0) fail(i, 'unterminated comment');
        i = end + 3;
      } else if (source.startsWith('<![CDATA[', i)) {
        const end = source.indexOf(']]>', i + 9);
        if (end < 0) fail(i, 'unterminated CDATA section');
        text += source.slice(i + 9, end);
        i = end + 3;
      } else if (source.startsWith('<?', i)) {
        const end = source.indexOf('?>', i + 2);
        if (end < 0) fail(i, 'unterminated processing instruction');
        i = end + 2;
      } else if (source[i] === '<') {
        el.children.push(parseElement(depth + 1));
      } else {
        const next = source.indexOf('<', i);
        const end = next < 0 ? source.length : next;
        text += decode(source.slice(i, end), i);
        i = end;
      }
    }
  };

  skipMisc();
  if (i >= source.length) fail(i, 'the file is empty: expected an XML document');
  const root = parseElement(1);
  skipMisc();
  if (i < source.length) fail(i, 'unexpected content after the root element');
  return root;
}
