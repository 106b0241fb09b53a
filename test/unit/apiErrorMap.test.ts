import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { apiErrorSchema, type ApiError } from '../../src/api/contract';
import { NotARobotBackendError } from '../../src/domain/backend/backend';
import { InputError } from '../../src/domain/problems';
import { StatsError } from '../../src/domain/stats/result';
import { BakedMotionError } from '../../src/domain/wbc/bakedMotion';
import { JointOrderError } from '../../src/domain/robot/jointOrder';
import { IkError } from '../../src/domain/workload/bodyModel';
import { MAPPED_ERROR_TYPES, toApiError } from '../../src/services/console/apiErrorMap';
import { ApiFailure, FieldError, UnsupportedError } from '../../src/services/console/apiFailure';
import { EmulatorControlError } from '../../src/services/robotEmulator/emulatorControlClient';
import { CommandRefusedError } from '../../src/services/bridge/bridgeClientBackend';
import { EpisodeFileError } from '../../src/services/episode/chunkedMcapWriter';
import { FolderRefusedError } from '../../src/services/files/folders';
import { isSystemError } from '../../src/services/files/systemErrors';
import { QualificationCancelled, QualificationRequestError } from '../../src/services/qualification/runQualification';
import { BindingSpecError } from '../../src/services/sim/bindingSpec';
import { ControllerUnavailableError } from '../../src/services/sim/controllerFactory';
import { OnnxPolicyError } from '../../src/services/sim/onnxController';
import { SimModelError } from '../../src/services/sim/simEngine';
import { TraceStoreError, type TraceStoreErrorCode } from '../../src/services/trace/errors';
import { TrialRefusedError } from '../../src/services/trial/matchedTrialRunner';
import { PairClipError } from '../../src/services/trial/pairClip';
import { ClipMismatchError } from '../../src/services/wbc/policyRun';
import { TrackingPolicyError } from '../../src/services/wbc/trackingPolicyController';
import { FrozenSnapshotMismatchError } from '../../src/services/workload/coreV1Frozen';
import { ListenerTakenError } from '../../src/domain/backend/backend';
import { WorkloadInputError } from '../../src/services/workload/folderWorkload';
import { REPO_ROOT } from '../helpers/sharedData';
import { thrown } from '../helpers/thrown';

// The one error map at the console API edge (src/services/console/apiErrorMap.ts): every typed error of
// the services gets its deliberate code, its own message verbatim and its details (an InputError's
// location, a refusal's reasons, a store error's own code), chosen by TYPE. The negative controls:
// an unknown Error is internal with its message, and an object that merely has `code` and `path`
// (what the old mapping probed for) is not a file error.

/** toApiError, checked against the contract's schema on the way. */
function mapped(err: unknown): ApiError {
  const e = toApiError(err);
  expect(apiErrorSchema.safeParse(e).error?.issues ?? []).toEqual([]);
  return e;
}

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-api-errors-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('API error map: the typed errors', () => {
  it('InputError: input_error with its location and reason, nothing else', () => {
    const err = new InputError({ file: 'walk.csv', line: 7, column: 3 }, "'x' is not a number");
    expect(mapped(err)).toEqual({
      code: 'input_error',
      message: "walk.csv:7:3: 'x' is not a number",
      location: { file: 'walk.csv', line: 7, column: 3 },
      reason: "'x' is not a number",
    });
    expect(mapped(new InputError({ file: 'b.npz', key: 'joint_pos' }, 'missing'))).toMatchObject({
      location: { file: 'b.npz', key: 'joint_pos' },
    });
  });

  it('WorkloadInputError: input_error with each problem of the folder as a reason', () => {
    const problems = [new InputError({ file: 'a.csv', line: 2 }, 'bad'), new InputError({ file: 'b.npz' }, 'worse')];
    const err = new WorkloadInputError({ file: '/w/workload.json' }, problems);
    expect(mapped(err)).toEqual({
      code: 'input_error',
      message: err.message,
      location: { file: '/w/workload.json' },
      reason: err.reason,
      reasons: ['a.csv:2: bad', 'b.npz: worse'],
    });
  });

  const STORE_CODES: Record<TraceStoreErrorCode, ApiError['code']> = {
    not_found: 'not_found',
    not_a_campaign: 'input_error',
    read_only: 'input_error',
    corrupt: 'input_error',
    schema_too_new: 'unsupported',
    conflict: 'conflict',
    state: 'conflict',
    invalid: 'bad_params',
    busy: 'busy',
    disk_full: 'storage',
    io: 'storage',
  };
  for (const [storeCode, apiCode] of Object.entries(STORE_CODES) as [TraceStoreErrorCode, ApiError['code']][]) {
    it(`TraceStoreError '${storeCode}': ${apiCode}, the store's message verbatim, its code as the origin`, () => {
      const message = `open /c/campaign.sqlite: something about ${storeCode} (SQLITE_X)`;
      expect(mapped(new TraceStoreError(storeCode, '/c/campaign.sqlite', message))).toEqual({
        code: apiCode,
        message,
        origin: { type: 'TraceStoreError', code: storeCode, path: '/c/campaign.sqlite' },
      });
    });
  }

  it('TrialRefusedError: refused, with every reason verbatim and in order (none is an empty list)', () => {
    const reasons = ['success_rate: SR 0.0% < 100%', 'mpjpe_l: max 234.5 mm > 80.0 mm'];
    expect(mapped(new TrialRefusedError('pair p1 is not admitted', reasons))).toEqual({
      code: 'refused',
      message: 'pair p1 is not admitted',
      reasons,
    });
    expect(mapped(new TrialRefusedError('binding b is not stored in the campaign'))).toEqual({
      code: 'refused',
      message: 'binding b is not stored in the campaign',
      reasons: [],
    });
  });

  it('CommandRefusedError: refused, the robot’s own words as the message', () => {
    expect(mapped(new CommandRefusedError('prepare refused: not damped'))).toEqual({
      code: 'refused',
      message: 'prepare refused: not damped',
      reasons: [],
    });
  });

  it('EmulatorControlError: conflict, the control channel’s words as the message', () => {
    const msg = 'ws://127.0.0.1:9/: no answer to human_reset within 2000 ms';
    expect(mapped(new EmulatorControlError(msg))).toEqual({ code: 'conflict', message: msg });
  });

  it('NotARobotBackendError: refused, its reason as the message (no robot link to stop the robot with)', () => {
    expect(mapped(new NotARobotBackendError('embedded simulator', 'embedded simulator has no robot link'))).toEqual({
      code: 'refused',
      message: 'embedded simulator has no robot link',
      reasons: [],
    });
  });

  it('FolderRefusedError: input_error, its message verbatim, its refusal and path as the origin', () => {
    const err = new FolderRefusedError('virtual_fs', '/proc', '/proc/x/c is under /proc, a virtual file system');
    expect(mapped(err)).toEqual({
      code: 'input_error',
      message: '/proc/x/c is under /proc, a virtual file system',
      origin: { type: 'FolderRefusedError', code: 'virtual_fs', path: '/proc' },
    });
  });

  it('EpisodeFileError: by its errno (disk full is storage, read-only is the folder’s problem, misuse internal)', () => {
    const f = '/c/episodes/run-1.mcap';
    for (const [errno, code] of [
      ['ENOSPC', 'storage'],
      ['EFBIG', 'storage'],
      ['EACCES', 'input_error'],
      ['EROFS', 'input_error'],
      ['EEXIST', 'conflict'],
      ['ENOENT', 'not_found'],
      ['EINVAL', 'internal'],
    ] as const) {
      const err = new EpisodeFileError(f, errno, 'cannot write');
      expect(mapped(err), errno).toEqual({
        code,
        message: err.message,
        origin: { type: 'EpisodeFileError', code: errno, path: f },
      });
    }
  });

  it('ApiFailure: its own code, message and field; UnsupportedError: unsupported', () => {
    expect(mapped(new ApiFailure('not_found', 'no run "r"', 'params.runId'))).toEqual({
      code: 'not_found',
      message: 'no run "r"',
      field: 'params.runId',
    });
    expect(mapped(new ApiFailure('conflict', 'busy elsewhere'))).toEqual({
      code: 'conflict',
      message: 'busy elsewhere',
    });
    expect(mapped(new UnsupportedError('only in the desktop app'))).toEqual({
      code: 'unsupported',
      message: 'only in the desktop app',
    });
  });

  it('FieldError: the wrapped error mapped by its own type, with the field set', () => {
    const inner = new TraceStoreError('busy', '/c/campaign.sqlite', 'the lock is held');
    expect(mapped(new FieldError('params.campaignDir', inner))).toEqual({
      code: 'busy',
      message: 'the lock is held',
      field: 'params.campaignDir',
      origin: { type: 'TraceStoreError', code: 'busy', path: '/c/campaign.sqlite' },
    });
    expect(mapped(new FieldError('params.pairId', new TrialRefusedError('no', ['r1'])))).toEqual({
      code: 'refused',
      message: 'no',
      reasons: ['r1'],
      field: 'params.pairId',
    });
  });

  it('the plain typed errors: each its own code, its message verbatim', () => {
    const cases: [Error, ApiError['code']][] = [
      [new QualificationRequestError('unknown clip "nope"'), 'bad_params'],
      [new BindingSpecError('--binding x: not "builtin"'), 'bad_params'],
      [new ClipMismatchError('the clip differs from the baked motion at frame 3'), 'bad_params'],
      [new RangeError('trials must be an integer in 1..20, got 0'), 'bad_params'],
      [new PairClipError('the pair’s clip no longer hashes to its reference'), 'conflict'],
      [new QualificationCancelled('cancelled by the operator'), 'conflict'],
      [new ControllerUnavailableError('onnx bindings not available'), 'unsupported'],
      [new SimModelError('g1.xml: MuJoCo has no joint "x"'), 'input_error'],
      [new OnnxPolicyError('/p/policy.onnx', 12, 'the policy produced a non-finite action'), 'input_error'],
      [new TrackingPolicyError('/p/policy.onnx: step after dispose'), 'input_error'],
      [new JointOrderError('unknown joint names: foo'), 'input_error'],
      [new BakedMotionError('/p/policy.onnx: no baked "joint_pos"'), 'input_error'],
      [new IkError('leg IK did not reach its target'), 'internal'],
    ];
    for (const [err, code] of cases) expect(mapped(err), err.name).toEqual({ code, message: err.message });
  });

  it('FrozenSnapshotMismatchError and StatsError: internal, with the differences / the stats code', () => {
    expect(mapped(new FrozenSnapshotMismatchError(['clip a: hash differs'], 'core-v1 no longer reproduces'))).toEqual({
      code: 'internal',
      message: 'core-v1 no longer reproduces',
      reasons: ['clip a: hash differs'],
    });
    expect(mapped(new StatsError('too-few', 'needs 2 values'))).toEqual({
      code: 'internal',
      message: 'needs 2 values',
      origin: { type: 'StatsError', code: 'too-few' },
    });
  });

  it('ListenerTakenError: internal, the backend named as the origin', () => {
    const err = new ListenerTakenError({ id: 'embedded-sim', name: 'Embedded MuJoCo (2 workers)' });
    expect(mapped(err)).toEqual({
      code: 'internal',
      message: err.message,
      origin: { type: 'ListenerTakenError', code: 'embedded-sim' },
    });
  });

  it('a zod error: internal, each issue as a reason', () => {
    const err = thrown(() => z.strictObject({ a: z.number(), b: z.string() }).parse({ a: 'x', b: 1 }));
    const e = mapped(err);
    expect(e.code).toBe('internal');
    expect(e.reasons).toHaveLength(2);
    expect(e.reasons![0]).toMatch(/^a: .*expected number/);
    expect(e.message).toBe(e.reasons!.join('; '));
  });

  it('Node system errors: recognised by their errno, the file and what it means', () => {
    const missing = path.join(tmp, 'nope.csv');
    const enoent = thrown(() => fs.openSync(missing, 'r'));
    expect(isSystemError(enoent)).toBe(true);
    expect(mapped(enoent)).toEqual({
      code: 'not_found',
      message: `${missing}: no such file`,
      location: { file: missing },
      reason: 'no such file',
      origin: { type: 'SystemError', code: 'ENOENT', path: missing },
    });
    const eisdir = thrown(() => fs.openSync(tmp, 'w'));
    expect(mapped(eisdir)).toMatchObject({ code: 'input_error', message: `${tmp}: is a directory, not a file` });
    // Without a file: Node's own message, internal unless the errno says more.
    const ebadf = thrown(() => fs.closeSync(2 ** 30));
    expect(mapped(ebadf)).toEqual({
      code: 'internal',
      message: (ebadf as Error).message,
      origin: { type: 'SystemError', code: 'EBADF' },
    });
  });

  it('a system error from a socket (ECONNREFUSED, no file) keeps Node’s message', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((r) => server.close(() => r()));
    const err = await new Promise<unknown>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('error', resolve);
    });
    expect(mapped(err)).toEqual({
      code: 'internal',
      message: (err as Error).message,
      origin: { type: 'SystemError', code: 'ECONNREFUSED' },
    });
  });
});

describe('API error map: negative controls', () => {
  it('an unknown Error is internal with its message; a thrown non-Error with its text; an empty message says so', () => {
    expect(mapped(new Error('the hub fell over'))).toEqual({ code: 'internal', message: 'the hub fell over' });
    expect(mapped('plain words')).toEqual({ code: 'internal', message: 'plain words' });
    expect(mapped(new Error(''))).toEqual({ code: 'internal', message: 'internal error' });
  });

  it('an Error that merely has `code` and `path` is not a file error (what the old map probed for)', () => {
    const lookalike = Object.assign(new Error('store says busy'), { code: 'busy', path: '/c/campaign.sqlite' });
    expect(isSystemError(lookalike)).toBe(false);
    expect(mapped(lookalike)).toEqual({ code: 'internal', message: 'store says busy' });
    const errnoLookalike = Object.assign(new Error('x'), { code: 'ENOENT', path: '/a', syscall: 'open', errno: -13 });
    expect(isSystemError(errnoLookalike)).toBe(false); // errno -13 is EACCES, not ENOENT
    expect(mapped(errnoLookalike).code).toBe('internal');
  });

  it('a plain object with `code` and `path` is not a file error either', () => {
    const e = mapped({ code: 'ENOENT', path: '/etc/x', message: 'gone' });
    expect(e.code).toBe('internal');
    expect(e.location).toBeUndefined();
  });

  it('the name is not the type: an Error named TrialRefusedError is not a refusal', () => {
    const named = new Error('pair p1 is not admitted');
    named.name = 'TrialRefusedError';
    expect(mapped(named)).toEqual({ code: 'internal', message: 'pair p1 is not admitted' });
  });
});

describe('API error map: completeness', () => {
  /** Every `class X extends …Error` in src/, by name. */
  function errorClassesInSrc(): string[] {
    const names: string[] = [];
    const walk = (dir: string): void => {
      for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, ent.name);
        if (ent.isDirectory()) walk(p);
        else if (/\.tsx?$/.test(ent.name)) {
          for (const m of fs.readFileSync(p, 'utf8').matchAll(/^export class (\w+) extends (\w*Error|Error)\b/gm))
            names.push(m[1]);
        }
      }
    };
    walk(path.join(REPO_ROOT, 'src'));
    return names.sort();
  }

  /**
   * Errors that never reach the console API: thrown before it exists, by the CLI only, or caught by
   * their only callers and turned into their own errors or refusals (TaskWorkerError: the ROS 2
   * definition checker's errors, a command decoder's refusal).
   */
  const NOT_BEHIND_THE_API = ['RendererNotBuiltError', 'TaskWorkerError', 'UsageError'];

  it('maps every exported error class of src/ by type, except the few that never reach the API', () => {
    const mappedNames = new Set(MAPPED_ERROR_TYPES.map((t) => t.name));
    const unmapped = errorClassesInSrc().filter((n) => !mappedNames.has(n) && !NOT_BEHIND_THE_API.includes(n));
    expect(unmapped).toEqual([]);
    // Control: the scan finds the classes it should (so an empty list above means something).
    expect(errorClassesInSrc()).toEqual(expect.arrayContaining(['TraceStoreError', 'TrialRefusedError', 'UsageError']));
  });
});
