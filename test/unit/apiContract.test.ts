import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clipFromDto, clipToDto } from '../../src/api/clipDto';
import { buildContentSecurityPolicy } from '../../src/api/contentSecurityPolicy';
import { API_METHODS, MAX_CLIP_FILE_BYTES, parseRequest, requestSchemas } from '../../src/api/contract';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import { InputError } from '../../src/domain/problems';
import { toApiError } from '../../src/services/console/apiErrorMap';
import { createConsoleApi } from '../../src/services/console/consoleApiHandlers';
import { dispatchWsMessage } from '../../src/services/console/wsDispatch';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NPZ = path.resolve(repo, '../shared/data/motions/g1_moves/npz/B_HandsUp.npz');

describe('API contract', () => {
  it('has one schema per method', () => {
    expect(API_METHODS.sort()).toEqual(Object.keys(requestSchemas).sort());
    expect(API_METHODS).toEqual(expect.arrayContaining(['app.info', 'robot.getProfile', 'clips.load', 'clips.decode']));
  });

  it('rejects unknown methods, naming the field', () => {
    expect(parseRequest('robot.move', {})).toMatchObject({
      ok: false,
      error: { code: 'unknown_method', field: 'method' },
    });
    expect(parseRequest(42, {})).toMatchObject({ ok: false, error: { code: 'unknown_method' } });
    expect(parseRequest('toString', {})).toMatchObject({ ok: false, error: { code: 'unknown_method' } });
  });

  it('names the offending param', () => {
    expect(parseRequest('clips.load', { path: 'a.csv', fps: 0 })).toMatchObject({
      ok: false,
      error: { code: 'bad_params', field: 'params.fps' },
    });
    expect(parseRequest('clips.load', { path: 3 })).toMatchObject({ ok: false, error: { field: 'params.path' } });
    expect(parseRequest('clips.load', { path: 'a.csv', extra: 1 })).toMatchObject({
      ok: false,
      error: { field: 'params.extra' },
    });
    // The base64 alphabet is judged in the file worker, off the services' loop (test/integration/uploadOffThread.test.ts).
    expect(parseRequest('clips.decode', { fileName: 'a.csv', bytesBase64: '***' })).toMatchObject({ ok: true });
    expect(parseRequest('clips.decode', { fileName: 'a.csv', bytesBase64: 7 })).toMatchObject({
      ok: false,
      error: { code: 'bad_params', field: 'params.bytesBase64' },
    });
    expect(parseRequest('app.info', undefined)).toMatchObject({ ok: true, method: 'app.info' });
  });

  it('calls an oversized clip body too large', () => {
    const tooBig = 'A'.repeat(Math.ceil(MAX_CLIP_FILE_BYTES / 3) * 4 + 4);
    expect(parseRequest('clips.decode', { fileName: 'a.npz', bytesBase64: tooBig })).toMatchObject({
      ok: false,
      error: { code: 'too_large', field: 'params.bytesBase64' },
    });
  });

  it('round-trips a clip through JSON exactly', () => {
    const clip = decodeMotionFile(new Uint8Array(fs.readFileSync(NPZ)), { file: 'B_HandsUp.npz' });
    const { clip: back, durationS } = clipFromDto(JSON.parse(JSON.stringify(clipToDto(clip))));
    expect(back.id).toBe(clip.id);
    expect(back.jointPosRad).toEqual(clip.jointPosRad);
    expect(back.rootPosM).toEqual(clip.rootPosM);
    expect(back.rootQuatWxyz).toEqual(clip.rootQuatWxyz);
    expect(back.jointPosRad).toBeInstanceOf(Float64Array);
    expect(durationS).toBeCloseTo((clip.frameCount - 1) / clip.fps, 12);
  });

  it('builds a CSP without inline or eval script sources', () => {
    const csp = buildContentSecurityPolicy({ connectSrc: ['ws://127.0.0.1:5180'] });
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    expect(csp).toContain("connect-src 'self' ws://127.0.0.1:5180");
    expect(csp).toContain("frame-ancestors 'none'");
  });
});

describe('console API handlers', () => {
  const api = createConsoleApi({ transport: 'host' });

  it('keeps an input error’s location', () => {
    const e = toApiError(new InputError({ file: 'walk.csv', line: 7, column: 3 }, "'x' is not a number"));
    expect(e).toEqual({
      code: 'input_error',
      message: "walk.csv:7:3: 'x' is not a number",
      location: { file: 'walk.csv', line: 7, column: 3 },
      reason: "'x' is not a number",
    });
  });

  it('decodes picked bytes, and reports a CSV without fps as an input error on `fps`', async () => {
    const bytesBase64 = fs.readFileSync(NPZ).toString('base64');
    const ok = await api.invoke('clips.decode', { fileName: 'B_HandsUp.npz', bytesBase64 });
    expect(ok).toMatchObject({ ok: true, result: { format: 'mjlab-npz', fpsSource: 'file' } });

    const row = Array.from({ length: 36 }, (_, i) => (i === 6 ? '1' : '0')).join(',');
    const csv = Buffer.from(`${row}\n${row}\n`).toString('base64');
    const noFps = await api.invoke('clips.decode', { fileName: 'two.csv', bytesBase64: csv });
    expect(noFps).toMatchObject({
      ok: false,
      error: { code: 'input_error', location: { file: 'two.csv', key: 'fps' } },
    });
    const withFps = await api.invoke('clips.decode', { fileName: 'two.csv', bytesBase64: csv, fps: 30 });
    expect(withFps).toMatchObject({ ok: true, result: { frameCount: 2, fps: 30, fpsSource: 'user' } });
  });

  it('answers app.info per transport, and refuses the native dialog outside Electron', async () => {
    expect(await api.invoke('app.info', {})).toMatchObject({
      ok: true,
      result: { transport: 'host', capabilities: { nativeOpenDialog: false } },
    });
    expect(await api.invoke('clips.openDialog', {})).toMatchObject({ ok: false, error: { code: 'unsupported' } });
    const electron = createConsoleApi({
      transport: 'electron',
      overrides: { 'clips.openDialog': () => ({ cancelled: true }) },
    });
    expect(await electron.invoke('app.info', {})).toMatchObject({
      ok: true,
      result: { capabilities: { nativeOpenDialog: true } },
    });
    expect(await electron.invoke('clips.openDialog', {})).toEqual({ ok: true, result: { cancelled: true } });
  });

  it('serves the robot profile as plain JSON', async () => {
    const r = await api.invoke('robot.getProfile', {});
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const profile = r.result as { joints: unknown[]; bodies: unknown[] };
    expect(profile.joints).toHaveLength(29);
    expect(JSON.parse(JSON.stringify(profile))).toEqual(profile);
  });

  it('frames WebSocket requests and errors', async () => {
    expect(await dispatchWsMessage(api, 'nope')).toMatchObject({ id: null, error: { code: 'bad_request' } });
    expect(await dispatchWsMessage(api, '[]')).toMatchObject({ id: null, error: { code: 'bad_request' } });
    expect(await dispatchWsMessage(api, JSON.stringify({ id: 9, method: 'app.info', params: {}, x: 1 }))).toMatchObject(
      {
        id: 9,
        error: { code: 'bad_request' },
      },
    );
    expect(await dispatchWsMessage(api, 'x'.repeat(11), 10)).toMatchObject({ error: { code: 'too_large' } });
    expect(await dispatchWsMessage(api, JSON.stringify({ id: 'a', method: 'app.info' }))).toMatchObject({
      id: 'a',
      result: { transport: 'host' },
    });
  });
});
