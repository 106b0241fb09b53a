import type { ApiError } from '../../../src/api/contract';

/** "file, line 12, column 5 [key]" — the parts of an input location that are known. */
export function formatErrorLocation(error: ApiError): string | null {
  const loc = error.location;
  if (!loc) return null;
  const parts = [loc.file];
  if (loc.line !== undefined) parts.push(`line ${loc.line}`);
  if (loc.column !== undefined) parts.push(`column ${loc.column}`);
  let s = parts.join(', ');
  if (loc.key !== undefined) s += ` [${loc.key}]`;
  return s;
}

/** The error's reasons (a refusal's) that its message does not already say, verbatim and in order. */
export function unstatedReasons(error: ApiError): string[] {
  const said = `${error.message}\n${error.reason ?? ''}`;
  return (error.reasons ?? []).filter((r) => !said.includes(r));
}

/** One readable line: location (when known) and reason; then each reason the line does not say, as "• …". */
export function formatApiError(error: ApiError): string {
  const where = formatErrorLocation(error);
  const line = where ? `${where}: ${error.reason ?? error.message}` : error.message;
  return [line, ...unstatedReasons(error).map((r) => `• ${r}`)].join('\n');
}
