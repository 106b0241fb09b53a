import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createConsoleApi } from '../../src/services/console/consoleApiHandlers';
import { motionbench } from '../helpers/runCli';
import { sharedData } from '../helpers/sharedData';

// A CSV picked in the browser console (clips.decode: bytes and a file name, no folder) follows the
// same fps rules as the command line: the LAFAN1 retargeted dataset's file names state 30 fps, so
// the upload decodes to the clip the CLI reads from disk, with the same fps and content id.

const LAFAN1_CSV = sharedData('motions/lafan1_g1_csv/walk1_subject1.csv');

describe('an uploaded CSV clip gets the fps the CLI gives the same file', () => {
  const api = createConsoleApi({ transport: 'host' });
  const bytesBase64 = fs.readFileSync(LAFAN1_CSV).toString('base64');

  it('a LAFAN1-named CSV: 30 fps inferred from the name, the same content id as `clip info`', async () => {
    const cli = await motionbench('clip', 'info', LAFAN1_CSV, '--json');
    expect(cli.code, cli.stderr).toBe(0);
    const info = JSON.parse(cli.stdout) as { id: string; fps: number; fps_source: string };
    expect(info).toMatchObject({ fps: 30, fps_source: 'inferred' });

    const uploaded = await api.invoke('clips.decode', { fileName: 'walk1_subject1.csv', bytesBase64 });
    expect(uploaded).toMatchObject({ ok: true, result: { id: info.id, fps: 30, fpsSource: 'inferred' } });
    const warnings = (uploaded as { result: { warnings: { code: string; message: string }[] } }).result.warnings;
    expect(warnings).toContainEqual(
      expect.objectContaining({ code: 'fps_inferred', message: expect.stringMatching(/LAFAN1 .*file name/) }),
    );
  });

  it('negative control: the same bytes under a name that states nothing still ask for an fps', async () => {
    const uploaded = await api.invoke('clips.decode', { fileName: 'walk.csv', bytesBase64 });
    expect(uploaded).toMatchObject({ ok: false, error: { code: 'input_error', location: { key: 'fps' } } });
    // and the operator's fps wins over the name's
    const stated = await api.invoke('clips.decode', { fileName: 'walk1_subject1.csv', bytesBase64, fps: 60 });
    expect(stated).toMatchObject({ ok: true, result: { fps: 60, fpsSource: 'user' } });
  });
});
