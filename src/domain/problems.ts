// Structured input problems. Parsers never throw bare strings: they throw an InputError naming
// the file and where in it (line/column for text, key for NPZ/JSON), so an operator can fix the
// file. Warnings (e.g. joint-limit excursions) are returned beside the value, not thrown.

export interface InputLocation {
  /** The file as the user named it (path or display name). */
  file: string;
  /** 1-based line, for text formats. */
  line?: number;
  /** 1-based column (field index for CSV), for text formats. */
  column?: number;
  /** Key or member path, for NPZ/JSON/XML (e.g. `body_pos_w`, `joints[3].name`). */
  key?: string;
}

export class InputError extends Error {
  override readonly name = 'InputError';
  constructor(
    readonly location: InputLocation,
    readonly reason: string,
  ) {
    super(`${formatLocation(location)}: ${reason}`);
  }
}

export function formatLocation(loc: InputLocation): string {
  let s = loc.file;
  if (loc.line !== undefined) s += `:${loc.line}`;
  if (loc.column !== undefined) s += `:${loc.column}`;
  if (loc.key !== undefined) s += ` [${loc.key}]`;
  return s;
}

export interface Warning {
  code: string;
  message: string;
}

/** A validation issue as schema libraries report it (zod's shape): where, and what is wrong. */
export interface SchemaIssue {
  path: readonly PropertyKey[];
  message: string;
}

/** `interface.observation[4].frames`-style key of an issue path; `(root)` for the document itself. */
export function issueKey(path: readonly PropertyKey[]): string {
  let s = '';
  for (const k of path) s += typeof k === 'number' ? `[${k}]` : s ? `.${String(k)}` : String(k);
  return s || '(root)';
}

/** One InputError for a file's schema issues: located at the first, counting (and naming) the rest. */
export function inputErrorFromIssues(file: string, issues: readonly SchemaIssue[]): InputError {
  const [first, ...rest] = issues;
  let reason = first.message;
  if (rest.length > 0)
    reason += ` (and ${rest.length} more: ${rest.map((i) => `[${issueKey(i.path)}] ${i.message}`).join('; ')})`;
  return new InputError({ file, key: issueKey(first.path) }, reason);
}
