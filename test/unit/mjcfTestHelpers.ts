import { InputError } from '../../src/domain/problems';
import { readMjcf } from '../../src/domain/robot/mjcfReader';

// Shared by the MJCF reader's tests (mjcfReader.test.ts, mjcfHostile.test.ts).

/** Reads a model given as in-memory files, to test variants without writing to disk. */
export function readVirtual(files: Record<string, string>, entry: string, endEffectors?: string[]) {
  return readMjcf({
    file: entry,
    endEffectors,
    readText: (p) => {
      if (!(p in files)) throw new Error(`ENOENT: ${p}`);
      return files[p];
    },
  });
}

/** The InputError `fn` throws; fails when it throws something else or nothing. */
export function captureError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof InputError)) throw new Error(`expected an InputError, got ${String(err)}`);
    return err;
  }
  throw new Error('expected an InputError, nothing was thrown');
}
