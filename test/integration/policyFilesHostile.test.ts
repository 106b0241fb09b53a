import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/problems';
import { seededUniform } from '../../src/domain/stats/prng';
import { loadTrackingPolicy } from '../../src/services/wbc/loadPolicy';
import { readOnnxFile } from '../../src/services/wbc/onnxModelReader';
import { expectInputError } from '../unit/motionTestHelpers';
import { sharedData } from '../helpers/sharedData';

// Bad policy files and folders through loadTrackingPolicy(), the path every CLI and host entry
// point takes. Each case copies the real released files (../shared/data/policies) into its own
// os.tmpdir() folder and breaks one thing; the shared data is never written.
//
// Not covered here: a policy whose action turns NaN at run time. That needs an ONNX graph that
// outputs NaN under a real policy's interface, which is out of scope for this file.

const MJLAB = sharedData('policies', 'unitree_rl_mjlab_mimic_dance1_subject2');
const WBC = sharedData('policies', 'wbc_mjlab');
const BM = sharedData('policies', 'beyondmimic');

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-policy-hostile-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
/** A fresh folder under the test's tmp root. */
const tmp = (name: string) => {
  const d = path.join(root, `${++n}-${name}`);
  fs.mkdirSync(d, { recursive: true });
  return d;
};
/** Copies files (paths relative to `from`) into `to`, keeping their relative paths. */
function copy(from: string, to: string, files: string[]): void {
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(to, f)), { recursive: true });
    fs.copyFileSync(path.join(from, f), path.join(to, f));
  }
}
/** The unitree_rl_mjlab deploy folder, minimal: the model, its weights and deploy.yaml. */
function mjlabFolder(name: string, opts: { data?: boolean } = {}): string {
  const d = tmp(name);
  copy(MJLAB, d, [
    'exported/policy.onnx',
    'params/deploy.yaml',
    ...(opts.data === false ? [] : ['exported/policy.onnx.data']),
  ]);
  return d;
}
const lineOf = (text: string, prefix: string) => text.split('\n').findIndex((l) => l.startsWith(prefix)) + 1;

describe('positive controls: the copied folders load', () => {
  it('the minimal unitree_rl_mjlab copy loads as mjlab-deploy', () => {
    const d = mjlabFolder('ok-mjlab');
    const p = loadTrackingPolicy(d);
    expect(p.spec.family).toBe('mjlab-deploy');
    expect(p.files.map((f) => path.relative(d, f))).toEqual([
      'exported/policy.onnx',
      'exported/policy.onnx.data',
      'params/deploy.yaml',
    ]);
    // the hash covers the weights: same bytes, same hash as the original folder
    expect(p.contentHash).toBe(loadTrackingPolicy(MJLAB).contentHash);
  });
  it('the minimal wbc-mjlab copy loads as wbc-mjlab', () => {
    const d = tmp('ok-wbc');
    copy(WBC, d, ['policy.onnx', 'config.yaml']);
    expect(loadTrackingPolicy(d).spec.family).toBe('wbc-mjlab');
  });
});

describe('external weights (.onnx.data)', () => {
  const needed = readOnnxFile(path.join(MJLAB, 'exported', 'policy.onnx')).info.externalData;

  it('the real model references one external file', () => {
    expect(needed).toEqual([{ location: 'policy.onnx.data', bytesNeeded: expect.any(Number) }]);
    expect(needed[0].bytesNeeded).toBeGreaterThan(100_000);
    expect(needed[0].bytesNeeded).toBeLessThanOrEqual(
      fs.statSync(path.join(MJLAB, 'exported', 'policy.onnx.data')).size,
    );
  });

  it('missing → InputError at the .onnx, key external_data, naming the .data file', () => {
    const d = mjlabFolder('no-data', { data: false });
    const onnx = path.join(d, 'exported', 'policy.onnx');
    const err = expectInputError(
      () => loadTrackingPolicy(d),
      { file: onnx, key: 'external_data' },
      /"policy\.onnx\.data"/,
    );
    expect(err.reason).toMatch(/missing/);
    expect(err.reason).toContain(path.join(d, 'exported', 'policy.onnx.data'));
    // the same when the .onnx is named directly
    expectInputError(
      () => loadTrackingPolicy(onnx),
      { file: onnx, key: 'external_data' },
      /policy\.onnx\.data.*missing/,
    );
  });

  it('truncated → refused as truncated, with the sizes', () => {
    const d = mjlabFolder('short-data', { data: false });
    const full = fs.readFileSync(path.join(MJLAB, 'exported', 'policy.onnx.data'));
    const keep = Math.floor(needed[0].bytesNeeded / 2);
    fs.writeFileSync(path.join(d, 'exported', 'policy.onnx.data'), full.subarray(0, keep));
    const err = expectInputError(
      () => loadTrackingPolicy(d),
      { file: path.join(d, 'exported', 'policy.onnx'), key: 'external_data' },
      /truncated/,
    );
    expect(err.reason).toContain(`has ${keep} bytes`);
    expect(err.reason).toContain(`up to byte ${needed[0].bytesNeeded}`);
    // one byte short is enough
    fs.writeFileSync(path.join(d, 'exported', 'policy.onnx.data'), full.subarray(0, needed[0].bytesNeeded - 1));
    expectInputError(() => loadTrackingPolicy(d), { key: 'external_data' }, /truncated/);
  });

  it('a .data that is a folder is refused', () => {
    const d = mjlabFolder('dir-data', { data: false });
    fs.mkdirSync(path.join(d, 'exported', 'policy.onnx.data'));
    expectInputError(() => loadTrackingPolicy(d), { key: 'external_data' }, /not a regular file/);
  });

  it('an external-data location outside the model folder is refused', () => {
    const d = mjlabFolder('escape', { data: false });
    const onnx = path.join(d, 'exported', 'policy.onnx');
    // Same-length rewrite of every location string keeps the protobuf valid.
    const bytes = Buffer.from(
      fs.readFileSync(onnx).toString('latin1').split('policy.onnx.data').join('../policy.o.data'),
      'latin1',
    );
    fs.writeFileSync(onnx, bytes);
    fs.copyFileSync(path.join(MJLAB, 'exported', 'policy.onnx.data'), path.join(d, 'policy.o.data'));
    expectInputError(
      () => loadTrackingPolicy(d),
      { file: onnx, key: 'external_data' },
      /"\.\.\/policy\.o\.data" lies outside the model's folder/,
    );
  });
});

describe('deploy.yaml (unitree_rl_mjlab)', () => {
  const deploy = (d: string) => path.join(d, 'params', 'deploy.yaml');
  const edit = (d: string, fn: (t: string) => string) => {
    const t = fn(fs.readFileSync(deploy(d), 'utf8'));
    fs.writeFileSync(deploy(d), t);
    return t;
  };

  it('a syntax error is refused as not valid YAML, at the file', () => {
    const d = mjlabFolder('yaml-syntax');
    edit(d, (t) => t.replace('step_dt: 0.02', 'step_dt: 0.02: 3'));
    expectInputError(() => loadTrackingPolicy(d), { file: deploy(d) }, /not valid YAML/);
  });

  // The yaml library's error position, mapped through the LineCounter to line and column.
  it('a syntax error carries its line and column', () => {
    const d = mjlabFolder('yaml-syntax-pos');
    const t = edit(d, (x) => x.replace('step_dt: 0.02', 'step_dt: 0.02: 3'));
    const line = lineOf(t, 'step_dt:');
    expect(line).toBe(2);
    // the yaml library places this error at the second ':' (line 2, column 10)
    expectInputError(() => loadTrackingPolicy(d), { file: deploy(d), line, column: 10 }, /not valid YAML/);
  });

  it('a repeated key is refused', () => {
    const d = mjlabFolder('yaml-dup');
    edit(d, (t) => t.replace('step_dt: 0.02', 'step_dt: 0.02\nstep_dt: 0.04'));
    expectInputError(() => loadTrackingPolicy(d), { file: deploy(d) }, /not valid YAML.*unique/);
  });

  it('an unknown observation term → key observations.<term> with its line and column', () => {
    const d = mjlabFolder('yaml-term');
    const t = edit(d, (x) =>
      x.replace(
        '  last_action:',
        '  foo_term:\n    params: {}\n    clip: null\n    scale: [1.0, 1.0, 1.0]\n    history_length: 1\n  last_action:',
      ),
    );
    const line = lineOf(t, '  foo_term:');
    expect(line).toBeGreaterThan(10);
    expectInputError(
      () => loadTrackingPolicy(d),
      { file: deploy(d), key: 'observations.foo_term', line, column: 3 },
      /observation term "foo_term" is not one the mjlab-deploy adapter knows/,
    );
  });

  it('a bad list element is located at its own line and column', () => {
    const d = mjlabFolder('yaml-elem');
    // damping's second line of values starts with 0.9; make its first value a string
    const t = edit(d, (x) =>
      x.replace(/\n(\s+)0\.9, 0\.9, 0\.9, 0\.9, 0\.9, 1\.1/, '\n$1bad, 0.9, 0.9, 0.9, 0.9, 1.1'),
    );
    const line = t.split('\n').findIndex((l) => /^\s+bad, /.test(l)) + 1;
    const column = t.split('\n')[line - 1].indexOf('bad') + 1;
    expect(line).toBeGreaterThan(lineOf(t, 'damping:'));
    expectInputError(
      () => loadTrackingPolicy(d),
      { file: deploy(d), key: 'damping[15]', line, column },
      /not a finite number: "bad"/,
    );
  });

  it('a missing key is refused at the file, naming the key', () => {
    const d = mjlabFolder('yaml-missing');
    edit(d, (t) => t.replace(/^step_dt: .*\n/m, ''));
    expectInputError(() => loadTrackingPolicy(d), { file: deploy(d), key: 'step_dt' }, /missing \(the policy period\)/);
  });
});

describe('config.yaml (wbc-mjlab)', () => {
  it('schema_version changed → refused at schema_version, with line and column', () => {
    const d = tmp('wbc-schema');
    copy(WBC, d, ['policy.onnx', 'config.yaml']);
    const cfg = path.join(d, 'config.yaml');
    const t = fs
      .readFileSync(cfg, 'utf8')
      .replace('schema_version: wbc_tracking_params_v1', 'schema_version: wbc_tracking_params_v2');
    fs.writeFileSync(cfg, t);
    const line = lineOf(t, 'schema_version:');
    expectInputError(
      () => loadTrackingPolicy(d),
      { file: cfg, key: 'schema_version', line, column: 1 },
      /expected wbc_tracking_params_v1, got "wbc_tracking_params_v2"/,
    );
    // naming the .onnx inside the folder (whose comment line still says v1) reads the same config
    expectInputError(
      () => loadTrackingPolicy(path.join(d, 'policy.onnx')),
      { file: cfg, key: 'schema_version' },
      /wbc_tracking_params_v1/,
    );
  });

  it('a config.yaml that nowhere says wbc_tracking_params_v1 is still refused when the .onnx is named', () => {
    const d = tmp('wbc-schema-gone');
    copy(WBC, d, ['policy.onnx', 'config.yaml']);
    const cfg = path.join(d, 'config.yaml');
    fs.writeFileSync(cfg, fs.readFileSync(cfg, 'utf8').split('wbc_tracking_params_v1').join('wbc_tracking_params_v2'));
    expect(() => loadTrackingPolicy(d)).toThrow(InputError);
    expect(() => loadTrackingPolicy(path.join(d, 'policy.onnx'))).toThrow(InputError);
  });
});

describe('files that are not a usable policy', () => {
  it('an .onnx with no metadata and no deploy.yaml beside it → the family cannot be told', () => {
    const d = tmp('bare');
    copy(path.join(MJLAB, 'exported'), d, ['policy.onnx', 'policy.onnx.data']);
    const onnx = path.join(d, 'policy.onnx');
    const err = expectInputError(() => loadTrackingPolicy(onnx), { file: onnx }, /family cannot be told/);
    expect(err.reason).toMatch(/it has no metadata/);
    expect(err.reason).toMatch(/no deploy\.yaml or config\.yaml/);
    // the folder holding it, named instead: the same
    expectInputError(() => loadTrackingPolicy(d), { file: onnx }, /family cannot be told/);
  });

  it('the same in a folder named exported/ with no params/deploy.yaml beside it', () => {
    const d = tmp('bare-exported');
    copy(MJLAB, d, ['exported/policy.onnx', 'exported/policy.onnx.data']);
    const onnx = path.join(d, 'exported', 'policy.onnx');
    expectInputError(() => loadTrackingPolicy(onnx), { file: onnx }, /family cannot be told/);
    expectInputError(() => loadTrackingPolicy(d), { file: d }, /holds no policy/);
  });

  it('random bytes named .onnx → not an ONNX model', () => {
    const d = tmp('random');
    for (const seed of [1, 2, 3]) {
      const r = seededUniform(seed);
      const f = path.join(d, `random${seed}.onnx`);
      fs.writeFileSync(
        f,
        Uint8Array.from({ length: 8192 }, () => Math.floor(r() * 256)),
      );
      expectInputError(() => loadTrackingPolicy(f), { file: f }, /not an ONNX model/);
    }
  });

  it('an empty or text file named .onnx → not an ONNX model', () => {
    const d = tmp('empty');
    const e = path.join(d, 'empty.onnx');
    fs.writeFileSync(e, '');
    expectInputError(() => loadTrackingPolicy(e), { file: e }, /not an ONNX model/);
    const t = path.join(d, 'text.onnx');
    fs.writeFileSync(t, 'this is a policy, honest\n');
    expectInputError(() => loadTrackingPolicy(t), { file: t }, /not an ONNX model/);
  });

  it('a folder with two .onnx files asks to name one; naming one loads it', () => {
    const d = tmp('two');
    copy(BM, d, ['Violin.onnx', 'Jump_wose.onnx']);
    const err = expectInputError(() => loadTrackingPolicy(d), { file: d }, /holds 2 \.onnx files .*; name one/);
    expect(err.reason).toContain('Violin.onnx');
    expect(err.reason).toContain('Jump_wose.onnx');
    const p = loadTrackingPolicy(path.join(d, 'Jump_wose.onnx'));
    expect(p.spec.family).toBe('beyondmimic');
    expect(p.name).toBe('Jump_wose');
  });

  it('an empty folder, a missing path and a non-.onnx file are refused', () => {
    const d = tmp('nothing');
    expectInputError(() => loadTrackingPolicy(d), { file: d }, /holds no policy/);
    const missing = path.join(d, 'nope.onnx');
    expectInputError(() => loadTrackingPolicy(missing), { file: missing }, /no such policy file or folder/);
    const txt = path.join(d, 'policy.txt');
    fs.writeFileSync(txt, 'x');
    expectInputError(() => loadTrackingPolicy(txt), { file: txt }, /not an \.onnx file/);
  });
});
