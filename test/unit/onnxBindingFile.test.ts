import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/hash/sha256';
import { InputError } from '../../src/domain/problems';
import { observationSize } from '../../src/domain/wbc/observationBuilder';
import { loadOnnxBinding } from '../../src/services/wbc/loadOnnxBinding';
import { encodeLinearPolicy, standardInterface, writeBindingFiles } from '../helpers/onnxBuilder';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-onnx-binding-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const dir = () => path.join(root, `b${n++}`);

const iface = standardInterface();
const model = encodeLinearPolicy({ inDim: observationSize(iface), outDim: 29 });

async function loadError(file: string): Promise<InputError> {
  const e = await loadOnnxBinding(file).then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(InputError);
  return e as InputError;
}

/** Writes a binding whose json is `mutate`d after the standard content. */
function writeMutated(mutate: (json: Record<string, unknown>) => void): string {
  const file = writeBindingFiles(dir(), model, iface);
  const json = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  mutate(json);
  fs.writeFileSync(file, JSON.stringify(json));
  return file;
}

describe('loadOnnxBinding', () => {
  it('loads a valid binding, resolves the model next to the json and hashes it', async () => {
    const d = dir();
    const file = writeBindingFiles(path.join(d, 'sub'), model, iface, { label: 'my policy' }, 'p.onnx');
    const b = await loadOnnxBinding(file);
    expect(b.kind).toBe('onnx');
    expect(b.id).toBe('test-policy');
    expect(b.label).toBe('my policy');
    expect(b.controlRateHz).toBe(50);
    expect(b.modelFile).toBe(path.join(d, 'sub', 'p.onnx'));
    expect(b.checkpointHash).toBe(sha256Hex(model));
    expect(b.interface.observation).toEqual(iface.observation);
    expect(b.interface.actionOffset).toBe(0);
  });

  it('resolves a model path relative to the json, not to the working directory', async () => {
    const d = dir();
    fs.mkdirSync(path.join(d, 'weights'), { recursive: true });
    fs.writeFileSync(path.join(d, 'weights', 'w.onnx'), model);
    const file = writeBindingFiles(path.join(d, 'cfg'), model, iface, { modelFile: '../weights/w.onnx' });
    const b = await loadOnnxBinding(path.relative(process.cwd(), file));
    expect(b.modelFile).toBe(path.join(d, 'weights', 'w.onnx'));
  });

  it('fills defaults: scale 1, actionOffset 0, a label', async () => {
    const file = writeMutated((j) => {
      const i = j.interface as Record<string, unknown>;
      i.observation = [{ term: 'joint_vel' }];
      delete i.actionOffset;
      delete j.controlRateHz;
    });
    const b = await loadOnnxBinding(file);
    expect(b.interface.observation).toEqual([{ term: 'joint_vel', scale: 1 }]);
    expect(b.interface.actionOffset).toBe(0);
    expect(b.controlRateHz).toBe(50);
    expect(b.label).toBe('ONNX policy test-policy');
  });

  it('accepts a matching checkpointHash pin and rejects a different one', async () => {
    expect((await loadOnnxBinding(writeMutated((j) => (j.checkpointHash = sha256Hex(model))))).checkpointHash).toBe(
      sha256Hex(model),
    );
    const e = await loadError(writeMutated((j) => (j.checkpointHash = '0'.repeat(64))));
    expect(e.message).toMatch(
      /binding\.json \[checkpointHash\]: .*policy\.onnx hashes to [0-9a-f]{64}, the binding pins 0{64}/,
    );
  });

  const cases: [string, (j: Record<string, unknown>) => void, string, RegExp][] = [
    [
      'an unknown observation term',
      (j) => ((j.interface as { observation: unknown[] }).observation[2] = { term: 'base_lin_vel', scale: 1 }),
      'interface.observation[2].term',
      /unknown observation term/,
    ],
    [
      'frames < 1',
      (j) =>
        ((j.interface as { observation: unknown[] }).observation[4] = {
          term: 'reference_joint_pos',
          frames: 0,
          scale: 1,
        }),
      'interface.observation[4].frames',
      /too small|>=1|≥/i,
    ],
    [
      'a non-integer frames',
      (j) =>
        ((j.interface as { observation: unknown[] }).observation[4] = {
          term: 'reference_joint_pos',
          frames: 1.5,
          scale: 1,
        }),
      'interface.observation[4].frames',
      /int/i,
    ],
    [
      'a negative reference offset',
      (j) =>
        ((j.interface as { observation: unknown[] }).observation[4] = {
          term: 'reference_joint_pos',
          frames: 2,
          offset: -1,
        }),
      'interface.observation[4].offset',
      /too small|>=0/i,
    ],
    [
      'actionScale with 28 values',
      (j) => ((j.interface as Record<string, unknown>).actionScale = new Array(28).fill(0.25)),
      'interface.actionScale',
      /29/,
    ],
    [
      'negative gains',
      (j) => ((j.interface as Record<string, unknown>).gains = { kp: -5, kd: 1 }),
      'interface.gains.kp',
      /≥ 0/,
    ],
    ['a misspelt key', (j) => ((j.interface as Record<string, unknown>).actionscale = 1), 'interface', /actionscale/],
    [
      'a missing inputName',
      (j) => delete (j.interface as Record<string, unknown>).inputName,
      'interface.inputName',
      /expected string/i,
    ],
    ['a wrong kind', (j) => (j.kind = 'builtin'), 'kind', /onnx/],
    ['a missing modelFile', (j) => delete j.modelFile, 'modelFile', /expected string/i],
    ['a bad checkpointHash', (j) => (j.checkpointHash = 'abc'), 'checkpointHash', /64 lowercase hex/],
    [
      'a default pose of the wrong length',
      (j) => ((j.interface as Record<string, unknown>).defaultJointPosRad = [0, 0]),
      'interface.defaultJointPosRad',
      /29 values/,
    ],
  ];
  for (const [what, mutate, key, reason] of cases) {
    it(`names the file and field for ${what}`, async () => {
      const file = writeMutated(mutate);
      const e = await loadError(file);
      expect(e.location.file).toBe(file);
      expect(e.location.key).toBe(key);
      expect(e.message.startsWith(`${file} [${key}]: `)).toBe(true);
      expect(e.message).toMatch(reason);
    });
  }

  it('reports invalid JSON and a missing binding file', async () => {
    const d = dir();
    fs.mkdirSync(d);
    const bad = path.join(d, 'binding.json');
    fs.writeFileSync(bad, '{ "kind": "onnx", ');
    expect((await loadError(bad)).message).toMatch(/binding\.json: not valid JSON/);
    expect((await loadError(path.join(d, 'nope.json'))).message).toMatch(
      /nope\.json: cannot read the binding file \(ENOENT\)/,
    );
  });

  it('reports a missing .onnx naming both files', async () => {
    const file = writeMutated((j) => (j.modelFile = 'missing.onnx'));
    const e = await loadError(file);
    expect(e.message).toMatch(/binding\.json \[modelFile\]: cannot read .*missing\.onnx \(ENOENT\)/);
  });
});
