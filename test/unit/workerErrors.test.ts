import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/problems';
import { toApiError } from '../../src/services/console/apiErrorMap';
import { ApiFailure, FieldError, UnsupportedError } from '../../src/services/console/apiFailure';
import { EpisodeFileError } from '../../src/services/episode/chunkedMcapWriter';
import { FolderRefusedError } from '../../src/services/files/folders';
import { isSystemError } from '../../src/services/files/systemErrors';
import { reviveError, serializeError } from '../../src/services/console/workerErrors';
import { TraceStoreError } from '../../src/services/trace/errors';
import { TrialRefusedError } from '../../src/services/trial/matchedTrialRunner';
import { thrown } from '../helpers/thrown';

// The file worker's error transport (src/services/console/workerErrors.ts): what its tasks throw comes
// back on the main thread as the same type, so the API's error map (by `instanceof`) answers as if
// the error had been thrown there. structuredClone stands in for postMessage (the same algorithm);
// test/integration/fileWorkerErrors.test.ts sends them through the real worker.

/** Worker side → the clone postMessage makes → main side. */
const across = (err: unknown): Error => reviveError(structuredClone(serializeError(err)));

describe('file worker errors: the same type on the main thread', () => {
  const cases: [string, Error, abstract new (...args: never[]) => Error][] = [
    ['InputError', new InputError({ file: 'walk.csv', line: 3, column: 5 }, "'x' is not a number"), InputError],
    ['ApiFailure', new ApiFailure('not_found', 'no campaign at /c', 'params.campaignDir'), ApiFailure],
    ['UnsupportedError', new UnsupportedError('not here'), UnsupportedError],
    ['TraceStoreError', new TraceStoreError('busy', '/c/campaign.sqlite', 'the lock is held'), TraceStoreError],
    ['FolderRefusedError', new FolderRefusedError('virtual_fs', '/proc', '/proc/x is under /proc'), FolderRefusedError],
    ['EpisodeFileError', new EpisodeFileError('/c/episodes/r.mcap', 'ENOSPC', 'cannot write'), EpisodeFileError],
    ['RangeError', new RangeError('trials must be in 1..20'), RangeError],
    ['TypeError', new TypeError('x is not a function'), TypeError],
  ];
  for (const [name, err, type] of cases) {
    it(`${name}: instanceof, the same message and fields, the same ApiError`, () => {
      const back = across(err);
      expect(back).toBeInstanceOf(type);
      expect(back.name).toBe(err.name);
      expect(back.message).toBe(err.message);
      expect(toApiError(back)).toEqual(toApiError(err));
    });
  }

  it('FieldError: the field and the wrapped error, itself of its own type', () => {
    const err = new FieldError(
      'params.campaignDir',
      new FolderRefusedError('not_writable', '/ro', '/ro is not writable'),
    );
    const back = across(err);
    expect(back).toBeInstanceOf(FieldError);
    expect((back as FieldError).field).toBe('params.campaignDir');
    expect((back as FieldError).error).toBeInstanceOf(FolderRefusedError);
    expect(toApiError(back)).toEqual(toApiError(err));
  });

  it('a Node system error: still recognised as one (errno, syscall, path), the same ApiError', () => {
    const err = thrown(() => fs.openSync('/nonexistent-mb/x.csv', 'r'));
    const back = across(err);
    expect(isSystemError(back)).toBe(true);
    expect(back).toMatchObject({ code: 'ENOENT', syscall: 'open', path: '/nonexistent-mb/x.csv' });
    expect(toApiError(back)).toEqual(toApiError(err));
    expect(toApiError(back).code).toBe('not_found');
  });

  it('negative control: a clone alone loses the type (why the transport exists)', () => {
    const cloned = structuredClone(new TraceStoreError('busy', '/c/campaign.sqlite', 'the lock is held'));
    expect(cloned).not.toBeInstanceOf(TraceStoreError);
    expect(toApiError(cloned).code).toBe('internal');
  });

  it('negative control: an error type the worker never throws comes back as an Error of that name, mapped as unknown', () => {
    const back = across(new TrialRefusedError('not admitted', ['SR 0 < 1']));
    expect(back).not.toBeInstanceOf(TrialRefusedError);
    expect(back.name).toBe('TrialRefusedError');
    expect(toApiError(back)).toEqual({ code: 'internal', message: 'not admitted' });
    expect(across('a string')).toMatchObject({ name: 'Error', message: 'a string' });
  });
});
