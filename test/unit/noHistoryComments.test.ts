// Comments in the shipped code state contracts and reasons, never history: no issue or item
// numbers ("issue 12 item 7") and no "since …; before, it …" narration — the history is in git.
// Every comment of every source file under the folders below is read (TypeScript and JavaScript
// through the TypeScript parser, so a string that mentions an issue is not a comment; C, IDL and
// CSS by their /* */ and // syntax; make and gyp files by #) and matched against HISTORY_PATTERNS.
// The controls feed the same reader and patterns fixture text: a tagged or narrating comment must
// be caught, a string literal or a contract-stating comment must not.
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const ROOTS = ['src', 'main', 'renderer', 'scripts', 'bin', 'native'];
/** Generated or third-party trees inside ROOTS: not ours to word. */
const SKIPPED_DIRS = new Set(['node_modules', 'build', 'out', 'dist']);

const HISTORY_PATTERNS: readonly { name: string; pattern: RegExp }[] = [
  { name: 'issue or item number', pattern: /\b(?:issues?|items?)\s*#?\s*\d+/i },
  { name: 'issue or pull request reference', pattern: /\b(?:PR|pull request|fixed in|fixes|closes|see|gh-)\s*#\d+/i },
  {
    name: '"since …; before, …" narration',
    pattern: /\bsince\b[^.!?]{0,80}[;,]\s*before\b\s*(?:,|that|this|then|it)/i,
  },
  {
    name: '"before/after the fix" narration',
    pattern: /\b(?:before|after|until) (?:the|this) (?:fix|change|refactor)\b/i,
  },
];

const TS_EXTENSIONS = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs', '.jsx']);
const C_LIKE_EXTENSIONS = new Set(['.c', '.h', '.cc', '.cpp', '.hpp', '.idl', '.css']);
const HASH_COMMENT_EXTENSIONS = new Set(['.gyp', '.gypi', '.mk']);

interface Comment {
  line: number;
  text: string;
}

function lineOf(source: string, offset: number): number {
  let line = 1;
  for (let i = source.indexOf('\n'); i >= 0 && i < offset; i = source.indexOf('\n', i + 1)) line++;
  return line;
}

/** Every comment of a TypeScript/JavaScript source, read by the TypeScript parser. */
function tsComments(fileName: string, source: string): Comment[] {
  const kind = /\.[jt]sx$/.test(fileName) ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, kind);
  const seen = new Set<number>();
  const out: Comment[] = [];
  const collect = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      out.push({ line: file.getLineAndCharacterOfPosition(r.pos).line + 1, text: source.slice(r.pos, r.end) });
    }
  };
  // A comment lies in the trivia before a token; that trivia starts at the end of the token before
  // it, which is where some node or node list begins or ends (an empty block's list begins right
  // after its brace; a JSX comment sits right after its expression's brace).
  const at = (pos: number) => {
    collect(ts.getLeadingCommentRanges(source, pos));
    collect(ts.getTrailingCommentRanges(source, pos));
  };
  const visit = (node: ts.Node) => {
    at(node.pos);
    at(node.end);
    if (ts.isJsxExpression(node)) at(node.getStart(file) + 1);
    ts.forEachChild(node, visit, (list) => {
      at(list.pos);
      at(list.end);
      list.forEach(visit);
    });
  };
  visit(file);
  return out;
}

/** Comments of C-like sources (C, headers, IDL, CSS): // and /* *\/, strings skipped. */
function cLikeComments(source: string): Comment[] {
  const out: Comment[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === '"' || c === "'") {
      i++;
      while (i < source.length && source[i] !== c && source[i] !== '\n') i += source[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '/' && source[i + 1] === '/') {
      const end = source.indexOf('\n', i);
      const stop = end < 0 ? source.length : end;
      out.push({ line: lineOf(source, i), text: source.slice(i, stop) });
      i = stop;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end < 0 ? source.length : end + 2;
      out.push({ line: lineOf(source, i), text: source.slice(i, stop) });
      i = stop;
    } else i++;
  }
  return out;
}

/** Comments of make and gyp files: from # to the end of the line. */
function hashComments(source: string): Comment[] {
  const out: Comment[] = [];
  source.split('\n').forEach((line, index) => {
    const at = line.indexOf('#');
    if (at >= 0) out.push({ line: index + 1, text: line.slice(at) });
  });
  return out;
}

function commentsOf(fileName: string, source: string): Comment[] | null {
  const ext = extname(fileName);
  const base = fileName.split('/').pop() ?? '';
  if (TS_EXTENSIONS.has(ext)) return tsComments(fileName, source);
  if (C_LIKE_EXTENSIONS.has(ext)) return cLikeComments(source);
  if (HASH_COMMENT_EXTENSIONS.has(ext) || base === 'Makefile') return hashComments(source);
  return null;
}

/** "file:line: pattern name: comment line" for every comment line that narrates history. */
/** A sentence may wrap over comment lines: patterns match on the text as one line. */
const flatten = (text: string) => text.replace(/\s*\n\s*(?:\/\/|\*|#)?\s*/g, ' ');

function historyFindings(fileName: string, source: string): string[] {
  const findings: string[] = [];
  // Each comment's flattened text is part of the flattened file, so a file with no match at all
  // has no finding and need not be parsed.
  const wholeFile = flatten(source);
  if (!HISTORY_PATTERNS.some(({ pattern }) => pattern.test(wholeFile))) return findings;
  for (const comment of commentsOf(fileName, source) ?? []) {
    const flat = flatten(comment.text);
    for (const { name, pattern } of HISTORY_PATTERNS) {
      const match = pattern.exec(flat);
      if (match) findings.push(`${fileName}:${comment.line}: ${name}: …${match[0]}…`);
    }
  }
  return findings;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) out.push(...sourceFiles(path));
    } else if (entry.isFile()) out.push(path);
  }
  return out;
}

describe('comments state contracts and reasons, not history', () => {
  it('no comment under src, main, renderer, scripts, bin or native carries an issue/item tag or since/before narration', () => {
    const files = ROOTS.flatMap((root) => sourceFiles(join(REPO, root)));
    let read = 0;
    const findings: string[] = [];
    for (const path of files) {
      const rel = relative(REPO, path);
      if (!commentsOf(rel, '')) continue;
      read++;
      findings.push(...historyFindings(rel, readFileSync(path, 'utf8')));
    }
    // The scan saw the code base, not an empty folder.
    expect(read).toBeGreaterThan(400);
    expect(findings).toEqual([]);
  });

  it('control: tagged and narrating comments are caught in every syntax the scan reads', () => {
    const caught = (fileName: string, source: string) => historyFindings(fileName, source).length;
    expect(
      caught('a.ts', '// The safety gate (DESIGN §6; issue 6 item 4): a state machine.\nexport const a = 1;\n'),
    ).toBe(1);
    expect(caught('a.ts', 'export const a = 1; // see item 3\n')).toBe(1);
    expect(caught('a.tsx', '/**\n * The live robot (Issue 13): drawn.\n */\nexport const A = () => <div />;\n')).toBe(
      1,
    );
    expect(
      caught(
        'a.ts',
        '/*\n * The emulated box has its own process since the keeper\n * split; before, it stopped answering.\n */\nconst a = 1;\n',
      ),
    ).toBe(1);
    expect(caught('a.ts', 'function f() {\n  return 1; // fixed in #128\n}\n')).toBe(1);
    expect(caught('a.mjs', 'const re = /x/g; // issue 4\n')).toBe(1);
    expect(caught('a.c', 'int a = 1; /* issue 12 item 7 */\n')).toBe(1);
    expect(caught('a.idl', '// item 2: the sequence\nmodule m {};\n')).toBe(1);
    expect(caught('Makefile', 'all: # issue 3\n\ttrue\n')).toBe(1);
  });

  it('control: strings, ranges and contract wording are not comments with history', () => {
    const caught = (fileName: string, source: string) => historyFindings(fileName, source).length;
    expect(caught('a.ts', "const s = 'issue 12 item 7'; // the message shown\n")).toBe(0);
    expect(caught('a.ts', 'const s = `item ${n}`; // one line per item, numbered from 1\n')).toBe(0);
    expect(caught('a.c', 'const char *s = "issue 5"; /* a label */\n')).toBe(0);
    expect(
      caught('a.ts', '// The gap still open since the last arrival counts too; it is measured before the next one.\n'),
    ).toBe(0);
    expect(caught('a.css', '.a { color: #333; } /* grey #333 */\n')).toBe(0);
  });
});
