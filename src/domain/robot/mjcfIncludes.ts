import { InputError } from '../problems';
import { MAX_XML_DEPTH, parseXml, type XmlElement } from '../xml/parseXml';
import { joinPath, where } from './mjcfAttributes';

// The first pass of reading an MJCF model: parse the model file and expand its <include>s into
// one element tree, within limits on include count, depth, cycles, characters, elements and
// nesting, so a hostile model ends in a located InputError rather than a hang or a stack overflow.

/** Most <include> expansions in one model, counting each time a file is included again. */
export const MAX_MJCF_INCLUDES = 256;
/** Longest chain of includes (the model file including a file including a file …). */
export const MAX_MJCF_INCLUDE_DEPTH = 16;
/** Most characters read for one model, over the model file and every include expansion (64 Mi). */
export const MAX_MJCF_TEXT_CHARS = 64 * 1024 * 1024;
/** Most elements in one model once its includes are expanded. */
export const MAX_MJCF_ELEMENTS = 500_000;
/** Deepest element nesting of the model once its includes are expanded (the reader walks it recursively). */
export const MAX_MJCF_DEPTH = MAX_XML_DEPTH;

/** `a/./b/../c` → `a/c` (for recognising the same file in include chains; no file system here). */
export function normalizePath(p: string): string {
  const abs = p.startsWith('/');
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..' && out.length > 0 && out[out.length - 1] !== '..') out.pop();
    else if (seg !== '..' || !abs) out.push(seg);
  }
  return (abs ? '/' : '') + (out.join('/') || (abs ? '' : '.'));
}

export interface IncludeBudget {
  includes: number;
  chars: number;
  /** Told of every include expansion once its file has been read. */
  onInclude?: (file: string, via: XmlElement) => void;
}

/** One link of an include chain: the file, and the <include> that brought it in (null for the model file). */
interface IncludeLink {
  file: string;
  key: string;
  via: XmlElement | null;
}

const chainText = (chain: readonly IncludeLink[], last: string): string =>
  [...chain.map((c) => c.file), last].join(' -> ');

export function loadWithIncludes(
  file: string,
  readText: (p: string) => string,
  rootDir: string,
  budget: IncludeBudget,
  chain: readonly IncludeLink[],
  via: XmlElement | null,
): XmlElement {
  const key = normalizePath(file);
  if (via) {
    const at = where(via, 'file');
    if (chain.some((c) => c.key === key)) throw new InputError(at, `include cycle: ${chainText(chain, file)}`);
    if (chain.length > MAX_MJCF_INCLUDE_DEPTH) {
      throw new InputError(
        at,
        `includes are nested more than ${MAX_MJCF_INCLUDE_DEPTH} deep: ${chainText(chain, file)}`,
      );
    }
    if (++budget.includes > MAX_MJCF_INCLUDES) {
      throw new InputError(
        at,
        `the model expands more than ${MAX_MJCF_INCLUDES} <include>s (each inclusion of a file counts, so files that include each other several times multiply): ${chainText(chain, file)}`,
      );
    }
  }
  let text: string;
  try {
    text = readText(file);
  } catch (err) {
    const from = via ? ` (included from ${via.file}:${via.line}:${via.column})` : '';
    throw new InputError({ file }, `cannot read the file (${err instanceof Error ? err.message : String(err)})${from}`);
  }
  if (via) budget.onInclude?.(file, via);
  budget.chars += text.length;
  if (budget.chars > MAX_MJCF_TEXT_CHARS) {
    throw new InputError(
      via ? where(via, 'file') : { file },
      `the model and its includes are more than ${MAX_MJCF_TEXT_CHARS / 1048576} Mi characters of XML (the limit for one model)`,
    );
  }
  const root = parseXml(text, file);
  const next = [...chain, { file, key, via }];
  const expand = (el: XmlElement): void => {
    const out: XmlElement[] = [];
    for (const child of el.children) {
      if (child.name === 'include') {
        if (child.attrs.file === undefined)
          throw new InputError(where(child, 'file'), '<include> needs a file attribute');
        // MuJoCo resolves include paths against the directory of the top-level model file.
        const inc = loadWithIncludes(joinPath(rootDir, child.attrs.file), readText, rootDir, budget, next, child);
        for (const c of inc.name === 'mujoco' ? inc.children : [inc]) out.push(c);
      } else {
        expand(child);
        out.push(child);
      }
    }
    el.children = out;
  };
  expand(root);
  return root;
}

/** Refuses an expanded model deeper than MAX_MJCF_DEPTH or larger than MAX_MJCF_ELEMENTS (iteratively: no recursion here). */
export function checkModelSize(root: XmlElement): void {
  const stack: [XmlElement, number][] = [[root, 1]];
  let count = 0;
  while (stack.length > 0) {
    const [el, depth] = stack.pop()!;
    if (depth > MAX_MJCF_DEPTH)
      throw new InputError(
        where(el),
        `<${el.name}> is nested ${depth} elements deep once the includes are expanded, deeper than the limit of ${MAX_MJCF_DEPTH}`,
      );
    if (++count > MAX_MJCF_ELEMENTS)
      throw new InputError(
        where(el),
        `the model has more than ${MAX_MJCF_ELEMENTS} elements once the includes are expanded (the limit for one model)`,
      );
    for (let k = el.children.length - 1; k >= 0; k--) stack.push([el.children[k], depth + 1]);
  }
}
