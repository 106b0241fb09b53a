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
