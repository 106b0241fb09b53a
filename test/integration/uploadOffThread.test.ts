// clips.decode: the upload's bytes are untrusted, so nothing about them but their length is judged on
// the services' event loop. The base64 alphabet (a regex over up to 64 MB: ~120 ms there) is checked
// in the file worker, where the bytes are decoded; a bad upload is refused from there, with the same
// code and field as before.
import { Buffer } from 'node:buffer';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_CLIP_FILE_BYTES, parseRequest } from '../../src/api/contract';
import { createConsoleApi } from '../../src/services/console/consoleApiHandlers';
import { realCsvText } from '../helpers/hostileInputs';

const api = createConsoleApi({ transport: 'host' });
afterAll(() => api.close());

describe('clips.decode: the base64 alphabet is checked off the event loop', () => {
  it('the request contract judges only the length: a 64 MiB upload validates in a few ms', () => {
    const big = 'QUFB'.repeat(Math.floor((Math.ceil(MAX_CLIP_FILE_BYTES / 3) * 4) / 4));
    const t0 = performance.now();
    const r = parseRequest('clips.decode', { fileName: 'big.csv', bytesBase64: big });
    const ms = performance.now() - t0;
    console.log(`parseRequest of a ${(big.length / 1048576).toFixed(0)} MiB bytesBase64: ${ms.toFixed(1)} ms`);
    expect(r.ok).toBe(true);
    expect(ms).toBeLessThan(50);
    expect(parseRequest('clips.decode', { fileName: 'x.csv', bytesBase64: '@@@@' }).ok).toBe(true);
  });

  it('a bytesBase64 that is not base64 is refused by the file worker: bad_params on params.bytesBase64', async () => {
    const r = await api.invoke('clips.decode', { fileName: 'x.csv', bytesBase64: 'QUFB@@@@' });
    expect(r).toEqual({
      ok: false,
      error: expect.objectContaining({
        code: 'bad_params',
        field: 'params.bytesBase64',
        message: 'clips.decode: params.bytesBase64: not base64',
      }),
    });
  });

  it('(negative control) a base64 CSV decodes', async () => {
    const bytesBase64 = Buffer.from(realCsvText(31)).toString('base64');
    const r = await api.invoke('clips.decode', { fileName: 'walk.csv', bytesBase64, fps: 30 });
    expect(r.ok, JSON.stringify(r).slice(0, 300)).toBe(true);
  });
});
