// Canonical JSON for identities and stored records: object keys sorted (code-unit order),
// `undefined` members dropped, arrays and typed arrays as JSON arrays, −0 written as 0, and
// non-finite numbers refused (JSON has no NaN/Infinity; silently writing null would hide a bug).
// Two values that mean the same record give the same text, so hashes of it are stable.

export function canonicalJson(value: unknown): string {
  return write(value, '$');
}

function write(v: unknown, path: string): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'number':
      if (!Number.isFinite(v))
        throw new RangeError(`canonicalJson: ${path} is ${v}; only finite numbers can be stored`);
      return JSON.stringify(v + 0);
    case 'string':
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
        return write(Array.from(v as unknown as ArrayLike<number>), path);
      }
      if (Array.isArray(v))
        return `[${v.map((x, i) => (x === undefined ? 'null' : write(x, `${path}[${i}]`))).join(',')}]`;
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o)
        .filter((k) => o[k] !== undefined)
        .sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${write(o[k], `${path}.${k}`)}`).join(',')}}`;
    }
    default:
      throw new TypeError(`canonicalJson: ${path} is a ${typeof v}, which JSON cannot hold`);
  }
}
