import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/problems';
import { BakedMotionError } from '../../src/domain/wbc/bakedMotion';
import { JointOrderError } from '../../src/domain/robot/jointOrder';
import { ONNX_ELEMENTS_MAX, ONNX_STRING_MAX_BYTES } from '../../src/domain/wbc/onnxDeclaredSizes';
import { BAKED_FRAMES_MAX } from '../../src/domain/wbc/policyFamilies';
import { OffThreadFiles } from '../../src/services/console/offThread';
import { reviveError, serializeError } from '../../src/services/console/workerErrors';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { loadTrackingPolicy, POLICY_CONFIG_MAX_BYTES, POLICY_YAML_MAX_TOKENS } from '../../src/services/wbc/loadPolicy';
import { planPolicy } from '../../src/services/wbc/policyRun';
import { hostileDir } from '../helpers/hostileFiles';
import {
  deployYamlOf,
  MiB,
  replaceFirstListValue,
  writeAliasBombDeployFolder,
  writeBakedPolicy,
  writeDeployFolderWith,
  writeHugeJointNamesOnnx,
  writeManyElementsOnnx,
  writeNonFiniteBakedOnnx,
  writeNulLocationFolder,
  writeOversizedSonicFolder,
  writePhantomFramesOnnx,
  writeScalarFloodDeployFolder,
  writeThinBodiesOnnx,
} from '../helpers/hostilePolicyFiles';
import { MOTIONBENCH_BIN } from '../helpers/runCli';
import { REPO_ROOT } from '../helpers/sharedData';
import { expectInputError } from '../unit/motionTestHelpers';

// Released-policy files that claim more than they hold, or hold what no G1 policy has, refused by
// their DECLARED sizes and values where they enter (loadTrackingPolicy, the path of policies.open,
// `policy info`, `sim` and `qualify`), with a located one-line InputError, in bounded time and
// memory. The files are generated here (test/helpers/hostilePolicyFiles.ts) in os.tmpdir().
// Each in-process refusal's CPU time (this process, user + system) is asserted and its wall time
// printed: the bound is on the work done before the refusal, which a loaded machine does not
// change, while the wall time also counts the time the test waited for a core. Each CLI refusal's
// wall time is asserted with a wide bound; the CLI runs' peak RSS comes from
// /usr/bin/time (%M) when the machine has it. The CLI children run with a 2 GiB V8 heap, so the
// readers these tests attack fail fast (signal 6) instead of taking the machine's memory.

const profile = loadRobotProfile(DEFAULT_MODEL_FILE);
let tmp: { dir: string; cleanup(): void };
let n = 0;
const at = (name: string) => path.join(tmp.dir, `${++n}-${name}`);
beforeAll(() => {
  tmp = hostileDir('mb-policy-bounds-');
});
afterAll(() => tmp?.cleanup());

interface Measured<T> {
  value: T | undefined;
  error: unknown;
  /** Wall time, printed. */
  ms: number;
  /** This process's CPU time (user + system), asserted. */
  cpuMs: number;
  rssGrowthMiB: number;
}

/** Runs `fn`, returning its wall and CPU time (ms) and the growth of this process's RSS (MiB). */
function measured<T>(fn: () => T): Measured<T> {
  const rss0 = process.memoryUsage().rss;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const done = (value: T | undefined, error: unknown): Measured<T> => {
    const cpu = process.cpuUsage(cpu0);
    return {
      value,
      error,
      ms: performance.now() - t0,
      cpuMs: (cpu.user + cpu.system) / 1000,
      rssGrowthMiB: (process.memoryUsage().rss - rss0) / MiB,
    };
  };
  try {
    return done(fn(), undefined);
  } catch (error) {
    return done(undefined, error);
  }
}

const TIME = '/usr/bin/time';
interface CliRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** Peak RSS of the child (MiB), or null without /usr/bin/time. */
  peakRssMiB: number | null;
}

/** `motionbench …` as a child with a 2 GiB heap, killed after `timeoutMs`. */
function cli(timeoutMs: number, ...args: string[]): CliRun {
  const withTime = fs.existsSync(TIME);
  const node = [process.execPath, MOTIONBENCH_BIN, ...args];
  const t0 = performance.now();
  const r = spawnSync(withTime ? TIME : node[0], withTime ? ['-f', 'MB_PEAK_RSS_KB=%M', ...node] : node.slice(1), {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: 64 << 20,
    env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=2048' },
  });
  const ms = performance.now() - t0;
  const m = /MB_PEAK_RSS_KB=(\d+)/.exec(r.stderr ?? '');
  return {
    status: r.status,
    signal: r.signal,
    stdout: r.stdout ?? '',
    stderr: (r.stderr ?? '').replace(/MB_PEAK_RSS_KB=\d+\n?/, '').replace(/Command (terminated|exited).*\n?/, ''),
    ms,
    peakRssMiB: m ? Number(m[1]) / 1024 : null,
  };
}

const report = (what: string, r: { ms: number; cpuMs?: number; rssGrowthMiB?: number; peakRssMiB?: number | null }) =>
  console.log(
    `${what}: ${r.ms.toFixed(0)} ms${r.cpuMs !== undefined ? ` (CPU ${r.cpuMs.toFixed(0)} ms)` : ''}${r.rssGrowthMiB !== undefined ? `, RSS +${r.rssGrowthMiB.toFixed(0)} MiB` : ''}${
      r.peakRssMiB != null ? `, child peak RSS ${r.peakRssMiB.toFixed(0)} MiB` : ''
    }`,
  );

/** A CLI refusal: exit 1, one located line naming the file and the field, within the bounds. */
function expectCliRefusal(r: CliRun, file: string, key: RegExp, bounds: { ms: number; peakRssMiB: number }): void {
  expect(r.signal, r.stderr).toBeNull();
  expect(r.status, r.stderr).toBe(1);
  const lines = r.stderr.trim().split('\n');
  const line = lines.find((l) => l.includes(file));
  expect(line, r.stderr).toBeDefined();
  expect(line).toMatch(key);
  expect(r.ms).toBeLessThan(bounds.ms);
  if (r.peakRssMiB !== null) expect(r.peakRssMiB).toBeLessThan(bounds.peakRssMiB);
}

describe('positive control: the synthetic BeyondMimic export the variants are made from', () => {
  it('loads and plans, with a finite FK residual (max and mean) on our G1', () => {
    const f = writeBakedPolicy(at('ok.onnx'));
    const plan = planPolicy(f, profile);
    expect(plan.loaded.spec.family).toBe('beyondmimic');
    expect(plan.baked!.clip.frameCount).toBe(165);
    const r = plan.baked!.fkResidualM!;
    expect(Number.isFinite(r.max) && Number.isFinite(r.mean)).toBe(true);
    expect(r.max).toBeLessThan(0.01);
  });
});

describe('C3: a 300 MB ONNX whose joint_names is the whole file', () => {
  it('`policy info` refuses it at metadata_props.joint_names before decoding (no signal 6)', () => {
    const f = writeHugeJointNamesOnnx(at('huge.onnx'));
    expect(fs.statSync(f).size).toBeGreaterThan(299 * MiB);
    const r = cli(120_000, 'policy', 'info', f);
    report('C3 huge joint_names, policy info', r);
    expectCliRefusal(r, f, /\[metadata_props\.joint_names\]: a metadata value of 299\.\d MiB; .*limited to 1\.0 MiB/, {
      ms: 20_000,
      // its metadata is checked on disk (keys and lengths) before the file is read whole
      peakRssMiB: 600,
    });
  }, 150_000);

  it('in-process it is refused from the lengths on disk, within 1 s of CPU and 64 MiB', () => {
    const f = writeHugeJointNamesOnnx(at('huge-in-process.onnx'));
    const m = measured(() => loadTrackingPolicy(f));
    report('C3 huge joint_names, in-process', m);
    expectInputError(
      () => {
        throw m.error;
      },
      { file: f, key: 'metadata_props.joint_names' },
      /a metadata value of 299\.\d MiB/,
    );
    expect(m.cpuMs).toBeLessThan(1000);
    expect(m.rssGrowthMiB).toBeLessThan(64);
  });

  it('a metadata value of exactly the bound is decoded; one byte more is refused (in-process)', () => {
    const big = 'x'.repeat(ONNX_STRING_MAX_BYTES);
    const ok = writeBakedPolicy(at('meta-at-bound.onnx'), { metadata: (m) => ({ ...m, robot_urdf: big }) });
    expect(loadTrackingPolicy(ok).spec.family).toBe('beyondmimic');
    const over = writeBakedPolicy(at('meta-over.onnx'), { metadata: (m) => ({ ...m, robot_urdf: `${big}x` }) });
    expectInputError(() => loadTrackingPolicy(over), { file: over, key: 'metadata_props.robot_urdf' }, /limited to/);
  });
});

describe('C3: a graph of millions of tiny elements', () => {
  it('4 MB declaring 2.1 M graph inputs is refused by the element count before decoding, within 1 s of CPU and 64 MiB', () => {
    const f = writeManyElementsOnnx(at('many.onnx'));
    const m = measured(() => loadTrackingPolicy(f));
    report('2.1 M graph elements, in-process', m);
    expectInputError(
      () => {
        throw m.error;
      },
      { file: f, key: 'graph.input' },
      new RegExp(`declares more than ${ONNX_ELEMENTS_MAX.toLocaleString('en-US')} graph elements`),
    );
    expect(m.cpuMs).toBeLessThan(1000);
    expect(m.rssGrowthMiB).toBeLessThan(64);
  });
});

describe('C3: a 16 MiB deploy.yaml of 8 M scalars', () => {
  it('is refused by its size before it is parsed (in-process), within 1 s of CPU and 64 MiB', () => {
    const d = writeScalarFloodDeployFolder(at('flood'));
    const m = measured(() => loadTrackingPolicy(d));
    report('C3 16 MiB deploy.yaml, in-process', m);
    expectInputError(
      () => {
        throw m.error;
      },
      { file: deployYamlOf(d) },
      /larger than the 524288-byte limit for policy configuration files/,
    );
    expect(m.cpuMs).toBeLessThan(1000);
    expect(m.rssGrowthMiB).toBeLessThan(64);
  });

  it('`policy info` refuses it (no signal 6)', () => {
    const d = writeScalarFloodDeployFolder(at('flood-cli'));
    const r = cli(120_000, 'policy', 'info', d);
    report('C3 16 MiB deploy.yaml, policy info', r);
    expectCliRefusal(r, deployYamlOf(d), /larger than the 524288-byte limit/, { ms: 20_000, peakRssMiB: 600 });
  }, 150_000);

  it('a flood within the byte bound is refused by its token count before it is parsed, within 2 s of CPU', () => {
    const d = writeScalarFloodDeployFolder(at('flood-512k'), POLICY_CONFIG_MAX_BYTES);
    const m = measured(() => loadTrackingPolicy(d));
    report('a 512 KiB deploy.yaml of 256 k scalars, in-process', m);
    expectInputError(
      () => {
        throw m.error;
      },
      { file: deployYamlOf(d) },
      new RegExp(`holds more than ${POLICY_YAML_MAX_TOKENS.toLocaleString('en-US')} YAML tokens`),
    );
    expect(m.cpuMs).toBeLessThan(2000);
  });

  it('a configuration of 20,000 scalars (over twice the largest released) within the bounds still parses', () => {
    const d = writeDeployFolderWith(at('20k'), (y) => `pad: [${'0,'.repeat(20_000)}0]\n${y}`);
    const m = measured(() => loadTrackingPolicy(d));
    report('deploy.yaml with 20 k extra scalars, in-process', m);
    expect(m.error).toBeUndefined();
    expect(m.cpuMs).toBeLessThan(2000);
  });
});

describe('C3 / M4: baked tables that claim frames the file does not hold', () => {
  it('a small ONNX whose tables are [1.5 M, 0] is refused at outputs.joint_pos, in-process within 1 s of CPU', () => {
    const f = writePhantomFramesOnnx(at('phantom.onnx'));
    expect(fs.statSync(f).size).toBeLessThan(MiB);
    const m = measured(() => loadTrackingPolicy(f));
    report('C3 1.5 M phantom frames, in-process', m);
    expectInputError(
      () => {
        throw m.error;
      },
      { file: f, key: 'outputs.joint_pos' },
      /has shape \[1500000, 0\]; expected \[F, 29\]/,
    );
    expect(m.cpuMs).toBeLessThan(1000);
    expect(m.rssGrowthMiB).toBeLessThan(64);
  });

  it('`policy info` refuses it (it used to print 1.5 M NaN frames)', () => {
    const f = writePhantomFramesOnnx(at('phantom-cli.onnx'));
    const r = cli(60_000, 'policy', 'info', f);
    report('C3 1.5 M phantom frames, policy info', r);
    expectCliRefusal(r, f, /\[outputs\.joint_pos\]: has shape \[1500000, 0\]/, { ms: 20_000, peakRssMiB: 600 });
  }, 90_000);

  it(`frames beyond ${BAKED_FRAMES_MAX} are refused even when the data is there`, () => {
    // joint_pos [F, 29] of zeros for F = BAKED_FRAMES_MAX + 1, all its data present: the shape is
    // right, the count is not (the first table is checked first, so the others stay short)
    const F = BAKED_FRAMES_MAX + 1;
    const f = writeBakedPolicy(at('long.onnx'), {
      tables: (t) => ({ ...t, joint_pos: { dims: [F, 29], data: new Float32Array(F * 29) } }),
    });
    expectInputError(
      () => loadTrackingPolicy(f),
      { file: f, key: 'outputs.joint_pos' },
      new RegExp(`declares ${F} frames; a baked reference is limited to ${BAKED_FRAMES_MAX}`),
    );
  }, 60_000);
});

describe('M4: baked constants that are not a motion', () => {
  it('NaN in joint_pos is refused at its frame', () => {
    const f = writeNonFiniteBakedOnnx(at('nan.onnx'), 'joint_pos', NaN, 10, 1);
    expectInputError(
      () => loadTrackingPolicy(f),
      { file: f, key: 'outputs.joint_pos[10]' },
      /frame 10 holds NaN .*must be finite/,
    );
  });

  it('Infinity in body_pos_w is refused at its frame', () => {
    const f = writeNonFiniteBakedOnnx(at('inf.onnx'), 'body_pos_w', Infinity, 7, 5);
    expectInputError(() => loadTrackingPolicy(f), { file: f, key: 'outputs.body_pos_w[7]' }, /holds Infinity/);
  });

  it('a zero quaternion in body_quat_w is refused', () => {
    const f = writeBakedPolicy(at('zero-quat.onnx'), {
      tables: (t) => {
        const data = Float32Array.from(t.body_quat_w.data);
        data.fill(0, 0, 4);
        return { ...t, body_quat_w: { dims: t.body_quat_w.dims, data } };
      },
    });
    expectInputError(() => loadTrackingPolicy(f), { file: f, key: 'outputs.body_quat_w[0]' }, /norm 0\.000/);
  });

  it('thin body arrays ([F, bodies, 1] body_pos_w) are refused with the expected shape', () => {
    const f = writeThinBodiesOnnx(at('thin.onnx'));
    expectInputError(
      () => loadTrackingPolicy(f),
      { file: f, key: 'outputs.body_pos_w' },
      /has shape \[165, 14, 1\]; expected \[F, 14, 3\]/,
    );
  });

  it('`policy info` on the NaN export exits 1 naming the output (it printed "FK residual max 0 mm, mean null")', () => {
    const f = writeNonFiniteBakedOnnx(at('nan-cli.onnx'), 'joint_pos', NaN);
    const r = cli(60_000, 'policy', 'info', f);
    report('M4 NaN baked table, policy info', r);
    expectCliRefusal(r, f, /\[outputs\.joint_pos\[10\]\]: frame 10 holds NaN/, { ms: 20_000, peakRssMiB: 600 });
    expect(r.stdout).not.toMatch(/mean null|NaN/);
  }, 90_000);
});

describe('minor: configuration values', () => {
  it('a YAML alias bomb is refused at the first alias, with line and column', () => {
    const d = writeAliasBombDeployFolder(at('bomb'));
    const m = measured(() => loadTrackingPolicy(d));
    report('YAML alias bomb, in-process', m);
    expectInputError(
      () => {
        throw m.error;
      },
      { file: deployYamlOf(d), line: 2, column: 10 },
      /aliases expand to more than 100 times .*alias bomb/,
    );
    expect(m.cpuMs).toBeLessThan(1000);
  });

  it('a NaN gain is named as NaN at its key (not "null")', () => {
    const d = writeDeployFolderWith(at('nan-gain'), (y) => replaceFirstListValue(y, 'stiffness', '.nan'));
    const err = expectInputError(
      () => loadTrackingPolicy(d),
      { file: deployYamlOf(d), key: 'stiffness[0]', line: 3, column: 13 },
      /not a finite number: NaN$/,
    );
    expect(err.message).not.toMatch(/null/);
  });

  it('stiffness 1e300 is refused with the stated bound; 350 (3.5 times the largest released) is accepted', () => {
    const d = writeDeployFolderWith(at('kp-1e300'), (y) => replaceFirstListValue(y, 'stiffness', '1e300'));
    expectInputError(
      () => loadTrackingPolicy(d),
      { file: deployYamlOf(d), key: 'stiffness[0]' },
      /1e\+300 N·m\/rad is beyond the bound 5000 N·m\/rad \(.*139 N·m peak torque\)/,
    );
    const ok = writeDeployFolderWith(at('kp-350'), (y) => replaceFirstListValue(y, 'stiffness', '350'));
    expect(loadTrackingPolicy(ok).spec.kp[0]).toBe(350);
  });

  it('action scale −1e300 is refused; a negative damping is refused', () => {
    const d = writeDeployFolderWith(at('scale'), (y) => replaceFirstListValue(y, 'scale', '-1e300'));
    expectInputError(
      () => loadTrackingPolicy(d),
      { file: deployYamlOf(d), key: 'actions.JointPositionAction.scale[0]' },
      /-1e\+300 rad per unit action is beyond the bound ±10/,
    );
    const kd = writeDeployFolderWith(at('kd-neg'), (y) => replaceFirstListValue(y, 'damping', '-2.6'));
    expectInputError(() => loadTrackingPolicy(kd), { key: 'damping[0]' }, /negative \(-2\.6\)/);
  });

  it('a default pose beyond ±π and absurd metadata gains of a BeyondMimic export are refused', () => {
    const d = writeDeployFolderWith(at('def'), (y) => replaceFirstListValue(y, 'default_joint_pos', '7'));
    expectInputError(
      () => loadTrackingPolicy(d),
      { key: 'default_joint_pos[0]' },
      /7 rad is beyond the bound ±3\.1416/,
    );
    const f = writeBakedPolicy(at('bm-kp.onnx'), {
      metadata: (m) => ({ ...m, joint_stiffness: m.joint_stiffness.replace(/^[^,]+/, '1e300') }),
    });
    expectInputError(() => loadTrackingPolicy(f), { file: f, key: 'metadata_props.joint_stiffness[0]' }, /beyond/);
  });
});

describe('minor: files', () => {
  it('a NUL in an external-data location is escaped in a refusal', () => {
    const d = writeNulLocationFolder(at('nul'));
    const err = expectInputError(
      () => loadTrackingPolicy(d),
      { file: path.join(d, 'exported', 'policy.onnx'), key: 'external_data' },
      /"policy\.onnx\\u0000data" holds a control character/,
    );
    expect(err.message).not.toContain('\u0000');
  });

  it('a SONIC folder of two 300 MiB models is refused by stat before either is read', () => {
    const d = writeOversizedSonicFolder(at('sonic'));
    const m = measured(() => loadTrackingPolicy(d));
    report('SONIC folder 600 MiB, in-process', m);
    expectInputError(
      () => {
        throw m.error;
      },
      { file: d },
      /files total 600\.0 MiB .*more than the 512 MiB limit for a policy; refused before reading them/,
    );
    expect(m.cpuMs).toBeLessThan(500);
    expect(m.rssGrowthMiB).toBeLessThan(32);
  });
});

describe('the file worker keeps the errors of a policy open as their types', () => {
  it('BakedMotionError and JointOrderError cross the thread boundary as themselves', () => {
    for (const e of [new BakedMotionError('x.onnx: no baked "joint_pos"'), new JointOrderError('unknown joint foo')]) {
      const back = reviveError(serializeError(e));
      expect(back).toBeInstanceOf(e.constructor);
      expect(back.message).toBe(e.message);
    }
    // the control: an error the boundary does not know comes back as a plain Error keeping its name
    const other = Object.assign(new Error('m'), { name: 'SomethingElse' });
    const back = reviveError(serializeError(other));
    expect(back).not.toBeInstanceOf(BakedMotionError);
    expect(back.name).toBe('SomethingElse');
  });

  it("OffThreadFiles.openPolicy: a hostile file's InputError comes back located; a real policy's plan with its arrays", async () => {
    const files = new OffThreadFiles();
    try {
      const f = writeNonFiniteBakedOnnx(at('worker-nan.onnx'), 'joint_pos', NaN);
      const err = await files.openPolicy(f, DEFAULT_MODEL_FILE).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).location).toEqual({ file: f, key: 'outputs.joint_pos[10]' });
      const ok = writeBakedPolicy(at('worker-ok.onnx'));
      const { plan, dtoJson } = await files.openPolicy(ok, DEFAULT_MODEL_FILE);
      expect(plan.baked!.clip.jointPosRad).toBeInstanceOf(Float64Array);
      expect(plan.baked!.clip.jointPosRad.length).toBe(165 * 29);
      expect(plan.loaded.spec.kp).toBeInstanceOf(Float64Array);
      expect(JSON.parse(new TextDecoder().decode(dtoJson)).motion.frames).toBe(165);
    } finally {
      await files.close();
    }
  }, 60_000);
});
