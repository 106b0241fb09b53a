// `--binding` parsing (builtin specs and binding files) and the controller factory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/problems';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { BuiltinTracker } from '../../src/domain/sim/builtinTracker';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { BindingSpecError, resolveBindingSpec } from '../../src/services/sim/bindingSpec';
import { createController } from '../../src/services/sim/controllerFactory';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-binding-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const write = (name: string, doc: unknown) => {
  const f = path.join(dir, name);
  fs.writeFileSync(f, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return f;
};

describe('--binding specs', () => {
  it('builtin and builtin:assist=<N/m>', async () => {
    expect(await resolveBindingSpec('builtin')).toEqual(makeBuiltinBinding());
    const b = await resolveBindingSpec('builtin:assist=3000');
    expect(b).toEqual(makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) }));
    expect(b.label).toBe('reference tracker, not a policy (root assist 3000 N/m)');
    expect(await resolveBindingSpec('builtin:assist=0')).toEqual(makeBuiltinBinding());
  });

  it('rejects malformed specs with a one-line reason', async () => {
    await expect(resolveBindingSpec('builtin:assist=')).rejects.toThrow(BindingSpecError);
    await expect(resolveBindingSpec('builtin:assist=-5')).rejects.toThrow(/between 0 and 1e6/);
    await expect(resolveBindingSpec('builtin:kp=3')).rejects.toThrow(/unknown builtin option "kp"/);
    await expect(resolveBindingSpec('builtin:3000')).rejects.toThrow(/expected builtin:assist=<N\/m>/);
    await expect(resolveBindingSpec('no-such-file.json')).rejects.toThrow(
      /not "builtin", "builtin:assist=<N\/m>" or an existing binding file/,
    );
  });

  it('builtin binding files: defaults from the stiffness, version by content', async () => {
    const f = write('stiff.json', {
      format: 'motionbench-wbc-binding/1',
      kind: 'builtin',
      id: 'stiff',
      version: 'lab-3',
      label: 'stiff PD',
      gains: { kp: 400, kd: 12 },
      rootAssist: { kpNPerM: 2000 },
    });
    const b = await resolveBindingSpec(f);
    expect(b.kind).toBe('builtin');
    if (b.kind !== 'builtin') return;
    expect(b.id).toBe('stiff');
    expect(b.version).toMatch(/^lab-3\+[0-9a-f]{10}$/);
    expect(b.label).toBe('stiff PD (reference tracker, not a policy)');
    expect(b.rootAssist).toEqual(rootAssistFromStiffness(2000));
    expect(b.gains).toEqual({ kp: 400, kd: 12 });
    const g = await resolveBindingSpec(
      write('stiffer.json', { kind: 'builtin', gains: { kp: 401, kd: 12 }, rootAssist: { kpNPerM: 2000 } }),
    );
    expect(g.version).not.toBe(b.version.split('+')[1]);
  });

  it('errors name the file and the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ kind: 'builtin', gains: { kp: [1, 2, 3], kd: 1 } }, /\[gains\.kp\]/],
      [{ kind: 'builtin', rootAssist: { kpNPerM: -3 } }, /\[rootAssist\.kpNPerM\].*≥ 0/],
      [{ kind: 'builtin', controlRateHz: 60 }, /\[controlRateHz\].*multiple of 50 Hz/],
      [{ kind: 'builtin', gain: {} }, /\[\(root\)\]|\[gain\]/],
      [{ kind: 'remote', id: 'x' }, /\[kind\].*remote/],
      [{ kind: 'mystery' }, /\[kind\]: expected "builtin" or "onnx"/],
    ];
    for (const [doc, re] of cases) {
      const f = write('bad.json', doc);
      const err = await resolveBindingSpec(f).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InputError);
      expect((err as Error).message).toContain(f);
      expect((err as Error).message).toMatch(re);
    }
    const broken = write('broken.json', '{"kind": "builtin",');
    await expect(resolveBindingSpec(broken)).rejects.toThrow(/broken\.json: not a readable JSON binding file/);
  });
});

describe('controller factory', () => {
  const profile = loadRobotProfile();
  it('builds the builtin tracker and refuses remote bindings', async () => {
    expect(await createController(makeBuiltinBinding(), profile)).toBeInstanceOf(BuiltinTracker);
    await expect(
      createController(
        { kind: 'remote', id: 'r', version: '1', controlRateHz: 50, label: 'x', checkpointHash: null },
        profile,
      ),
    ).rejects.toThrow(/remote simulator or robot runs that policy itself/);
  });
});
