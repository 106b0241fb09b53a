// Text from an untrusted file, made fit for a one-line message: control characters (a NUL, a
// newline, an escape sequence that would drive the terminal) are written as \u escapes, and a long
// text is cut with its length stated.

/** Longest text quoted in a message, characters. */
export const PRINTABLE_MAX_CHARS = 200;

export function printable(s: string, maxChars = PRINTABLE_MAX_CHARS): string {
  const cut = s.length > maxChars ? s.slice(0, maxChars) : s;
  const safe = cut.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return s.length > maxChars ? `${safe}… (${s.length} characters)` : safe;
}

/** A value from a file, for "got …" in messages: numbers as JS prints them (NaN, Infinity), the rest as JSON. */
export function describeValue(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (v === undefined) return 'nothing';
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return printable(s);
}
