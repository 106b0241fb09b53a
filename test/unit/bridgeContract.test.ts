import { describe, expect, it } from 'vitest';
import { createStateFrame } from '../../src/domain/robot/stateFrame';
import {
  COMMAND_SCHEMA,
  G1_BRIDGE_CONTRACT,
  G1_BRIDGE_LIMITS,
  G1_BRIDGE_SCHEMAS,
  G1_BRIDGE_TOPICS,
  LOW_STATE_SCHEMA,
  bindingToWire,
  clipToWire,
  decodeCommand,
  decodeLowState,
  decodeRootState,
  decodeWbcStatus,
  decodeWireBinding,
  frameFromLowState,
  g1BridgeChannel,
  lowStateFromFrame,
  parseJsonMessage,
  prepareCommand,
  resetCommand,
  rootStateFromFrame,
  validateCommand,
  validateLowState,
  validateRootState,
  validateWbcStatus,
  type LowStateMsg,
} from '../../src/domain/bridge';
import { decodeMotionbenchJson, encodeClipJson } from '../../src/domain/motion/motionbenchJson';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import { makeBuiltinBinding } from '../../src/domain/sim/builtinBinding';
import { initialStateFromClipFrame } from '../../src/domain/sim/initialState';
import { Xoshiro128StarStar } from '../../src/domain/stats/prng';
import type { OnnxBinding, RemoteBinding } from '../../src/domain/wbc/wbcBinding';
import { syntheticClip } from './motionTestHelpers';

const enc = (v: unknown): Uint8Array => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));

function testClip(n = 12): MotionClip {
  const c = syntheticClip(n);
  const json = JSON.stringify({
    format: 'motionbench-clip/1',
    name: 'synthetic',
    fps: 30,
    joint_order: G1_JOINT_NAMES,
    frames: {
      root_pos_m: c.rootPos,
      root_quat_wxyz: c.rootQuatXyzw.map(([x, y, z, w]) => [w, x, y, z]),
      joint_pos_rad: c.joints,
    },
  });
  return decodeMotionbenchJson(json, { file: 'synthetic.json' });
}

function sampleLowState(): LowStateMsg {
  const f = createStateFrame(true);
  f.timeS = 0.04;
  for (let j = 0; j < 29; j++) {
    f.jointPosRad[j] = 0.01 * j - 0.1;
    f.jointVelRadS[j] = -0.02 * (j + 1); // (JSON has no −0)
    f.jointTauNm[j] = 0.5 * j;
  }
  const h = Math.SQRT1_2;
  f.imu.quatWxyz.set([h, 0, 0, h]);
  f.imu.gyroRadS.set([0.1, -0.2, 0.3]);
  f.imu.accelMS2.set([0.01, 0.02, 9.81]);
  f.referenceFrame = 3;
  return lowStateFromFrame(f, 42, 1_000_000_040);
}

describe('g1-bridge/1 contract constants and schemas', () => {
  it('names the version in every schema and channel', () => {
    expect(G1_BRIDGE_CONTRACT).toBe('g1-bridge/1');
    for (const [key, schema] of Object.entries(G1_BRIDGE_SCHEMAS)) {
      expect(String(schema.$id)).toMatch(/^g1-bridge\/1\//);
      const topic = key === 'command' ? G1_BRIDGE_TOPICS.command : G1_BRIDGE_TOPICS[key as 'lowstate'];
      const ch = g1BridgeChannel(key as keyof typeof G1_BRIDGE_SCHEMAS, topic);
      expect(ch).toMatchObject({ topic, encoding: 'json', schemaEncoding: 'jsonschema', schemaName: schema.$id });
      expect(JSON.parse(ch.schema)).toEqual(schema);
    }
    expect(G1_BRIDGE_TOPICS).toEqual({
      lowstate: '/g1/lowstate',
      rootState: '/g1/root_state',
      wbcStatus: '/g1/wbc_status',
      command: '/console/command',
    });
  });

  it('schemas state the array lengths and the canonical joint order', () => {
    const props = LOW_STATE_SCHEMA.properties as Record<
      string,
      { minItems?: number; maxItems?: number; description?: string }
    >;
    expect(props.q).toMatchObject({ minItems: 29, maxItems: 29 });
    expect(props.q.description).toContain('left_hip_pitch_joint, left_hip_roll_joint');
    expect((COMMAND_SCHEMA.oneOf as unknown[]).length).toBe(6);
  });
});

describe('lowstate', () => {
  it('round-trips a StateFrame exactly (JSON numbers are shortest round-trip)', () => {
    const low = sampleLowState();
    const d = decodeLowState(enc(low));
    expect(d.ok).toBe(true);
    if (!d.ok) return;
    expect(d.value).toEqual(low);
    const f = frameFromLowState(d.value, null, 0.04);
    expect(Array.from(f.jointPosRad)).toEqual(low.q);
    expect(Array.from(f.jointTauNm)).toEqual(low.tau_est);
    expect(f.tick).toBe(42);
    expect(f.referenceFrame).toBe(3);
    // No root_state: position unknown, orientation from the IMU.
    expect(f.rootPosM).toBeNull();
    expect(Array.from(f.rootQuatWxyz!)).toEqual(low.imu.quat_wxyz);
  });

  it('carries simulator contacts when the source knows them', () => {
    const f = createStateFrame(true);
    f.contacts = [{ body: 'left_wrist_yaw_link', other: 'floor', forceN: 12.5 }];
    const low = lowStateFromFrame(f, 1, 2);
    expect(low.contacts).toEqual([{ body: 'left_wrist_yaw_link', other: 'floor', force_n: 12.5 }]);
    const d = decodeLowState(enc(low));
    expect(d.ok && frameFromLowState(d.value, null, 0).contacts).toEqual(f.contacts);
    expect(d.ok && frameFromLowState({ ...d.value, contacts: undefined }, null, 0).contacts).toBeNull();
    expect(validateLowState({ ...low, contacts: [{ body: 'a', other: 'b', force_n: -1 }] })).toMatchObject({
      ok: false,
      reason: 'contacts[0].force_n: must be ≥ 0, found -1',
    });
    expect(
      validateLowState({ ...low, contacts: new Array(257).fill({ body: 'a', other: 'b', force_n: 1 }) }),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/^contacts: must be an array of at most 256/) });
  });

  it('pairs a root_state into the frame', () => {
    const f = createStateFrame(true);
    f.rootPosM!.set([1, 2, 0.75]);
    f.rootQuatWxyz!.set([0, 1, 0, 0]);
    const root = rootStateFromFrame(f, 5, 'sim')!;
    expect(validateRootState(JSON.parse(JSON.stringify(root)))).toEqual({ ok: true, value: root });
    const out = frameFromLowState(sampleLowState(), root, 0);
    expect(Array.from(out.rootPosM!)).toEqual([1, 2, 0.75]);
    expect(Array.from(out.rootQuatWxyz!)).toEqual([0, 1, 0, 0]);
    expect(rootStateFromFrame(createStateFrame(false), 5, 'sim')).toBeNull();
  });

  const bad: Array<[string, (m: Record<string, unknown>) => unknown, RegExp]> = [
    ['28 joint angles', (m) => ({ ...m, q: (m.q as number[]).slice(1) }), /^q: must have 29 values, found 28/],
    [
      'a null velocity',
      (m) => ({ ...m, dq: [...(m.dq as number[]).slice(0, 5), null, ...(m.dq as number[]).slice(6)] }),
      /^dq\[5\]: must be a finite number, found null/,
    ],
    [
      'a string torque',
      (m) => ({ ...m, tau_est: ['1', ...(m.tau_est as number[]).slice(1)] }),
      /^tau_est\[0\]: must be a finite number/,
    ],
    [
      'a non-unit IMU quaternion',
      (m) => ({ ...m, imu: { ...(m.imu as object), quat_wxyz: [1.01, 0, 0, 0] } }),
      /^imu\.quat_wxyz: quaternion .* unit within 0\.001, its norm is 1\.01/,
    ],
    [
      'a zero quaternion',
      (m) => ({ ...m, imu: { ...(m.imu as object), quat_wxyz: [0, 0, 0, 0] } }),
      /^imu\.quat_wxyz: quaternion/,
    ],
    [
      'a 2-vector gyro',
      (m) => ({ ...m, imu: { ...(m.imu as object), gyro: [0, 0] } }),
      /^imu\.gyro: must have 3 values, found 2/,
    ],
    ['no imu', (m) => ({ ...m, imu: undefined }), /^imu: must be an object, found nothing/],
    ['a negative tick', (m) => ({ ...m, tick: -1 }), /^tick: must be an integer/],
    ['a fractional stamp', (m) => ({ ...m, stamp_ns: 1.5 }), /^stamp_ns: must be an integer/],
    [
      'a stamp beyond 2^53',
      (m) => ({ ...m, stamp_ns: 2 ** 60 }),
      /^stamp_ns: must be an integer in \[0, 9007199254740991\]/,
    ],
    ['a ref_frame of -3', (m) => ({ ...m, ref_frame: -3 }), /^ref_frame: must be an integer/],
    ['an array', () => [1, 2, 3], /must be an object, found an array of 3/],
  ];
  for (const [what, mutate, reason] of bad) {
    it(`rejects ${what} with a reason`, () => {
      const r = validateLowState(mutate(sampleLowState() as unknown as Record<string, unknown>));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(reason);
    });
  }

  it('rejects NaN/Infinity literals, 1e400, truncated JSON, bad UTF-8, empty and oversized messages', () => {
    const text = JSON.stringify(sampleLowState());
    const withNaN = text.replace(/"q":\[[^,]+/, '"q":[NaN');
    expect(decodeLowState(enc(withNaN))).toMatchObject({
      ok: false,
      code: 'malformed',
      reason: expect.stringMatching(/NaN is not a JSON number/),
    });
    expect(decodeLowState(enc(text.replace(/"dq":\[[^,]+/, '"dq":[-Infinity')))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/-Infinity is not a JSON number/),
    });
    expect(decodeLowState(enc(text.replace(/"dq":\[[^,]+/, '"dq":[1e400')))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^dq\[0\]: must be a finite number, found number Infinity/),
    });
    expect(decodeLowState(enc(text.slice(0, -10)))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^invalid JSON/),
    });
    expect(decodeLowState(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]))).toMatchObject({
      ok: false,
      reason: 'message is not valid UTF-8 text',
    });
    expect(decodeLowState(new Uint8Array(0))).toMatchObject({ ok: false, reason: 'message is empty' });
    const big = new Uint8Array(G1_BRIDGE_LIMITS.lowStateBytes + 1).fill(0x20);
    expect(decodeLowState(big)).toMatchObject({
      ok: false,
      code: 'oversized',
      reason: expect.stringMatching(/more than the 65536-byte limit/),
    });
  });

  it('accepts a DataView over a larger buffer (as the Foxglove client hands it over)', () => {
    const body = enc(sampleLowState());
    const buf = new Uint8Array(body.length + 13);
    buf.set(body, 13);
    expect(decodeLowState(new DataView(buf.buffer, 13, body.length)).ok).toBe(true);
  });
});

describe('root_state and wbc_status', () => {
  it('validates root_state fields', () => {
    const ok = { stamp_ns: 1, pos: [0, 0, 0.8], quat_wxyz: [1, 0, 0, 0], source: 'mocap' };
    expect(validateRootState(ok).ok).toBe(true);
    expect(validateRootState({ ...ok, source: 'gps' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^source: must be one of mocap, estimator, sim/),
    });
    expect(validateRootState({ ...ok, pos: [0, 0] })).toMatchObject({
      ok: false,
      reason: 'pos: must have 3 values, found 2',
    });
    expect(decodeRootState(enc({ ...ok, quat_wxyz: [0.9, 0, 0, 0] }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^quat_wxyz: quaternion/),
    });
  });

  it('validates wbc_status fields, including the ack', () => {
    const ok = {
      state: 'tracking',
      clip_id: 'clip-0123456789abcdef',
      frame: 12,
      stamp_ns: 5,
      run_id: 'run-1',
      episode_start_ns: 4,
      outcome: null,
      reason: '',
      ack: { seq: 3, command: 'start', ok: true, code: 'ok', message: 'started' },
    };
    expect(validateWbcStatus(ok)).toEqual({ ok: true, value: ok });
    expect(validateWbcStatus({ state: 'idle', clip_id: null, frame: null })).toEqual({
      ok: true,
      value: { state: 'idle', clip_id: null, frame: null },
    });
    expect(validateWbcStatus({ ...ok, state: 'walking' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^state: must be one of idle, damping, ready, tracking, done, fault/),
    });
    expect(validateWbcStatus({ state: 'idle', frame: null })).toMatchObject({
      ok: false,
      reason: 'clip_id: is required (null when no clip)',
    });
    expect(validateWbcStatus({ ...ok, outcome: 'crashed' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^outcome: must be one of completed/),
    });
    expect(validateWbcStatus({ ...ok, ack: { ...ok.ack, code: 'meh' } })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^ack\.code/),
    });
    expect(decodeWbcStatus(enc({ ...ok, run_id: 'bad id with spaces' }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^run_id: must be 1–128 characters/),
    });
  });
});

describe('/console/command', () => {
  const clip = testClip();
  const builtin = makeBuiltinBinding({
    rootAssist: { kpNPerM: 3000, kdNsPerM: 600, kpNmPerRad: 600, kdNmsPerRad: 85 },
  });

  it('prepare carries the clip (same content id) and the binding record', () => {
    const wire = prepareCommand({ clip, binding: builtin, seed: 7, runId: 'run-9', seq: 1 });
    const d = decodeCommand(enc(wire));
    expect(d.ok).toBe(true);
    if (!d.ok || d.value.command !== 'prepare') return;
    expect(d.value.clip.id).toBe(clip.id);
    expect(d.value.clip.frameCount).toBe(clip.frameCount);
    expect(Array.from(d.value.clip.jointPosRad)).toEqual(Array.from(clip.jointPosRad));
    expect(d.value.binding).toEqual(builtin);
    expect(d.value).toMatchObject({ seq: 1, seed: 7, runId: 'run-9' });
    // The wire clip is motionbench-clip/1: the clip-file decoder reads it as is.
    expect(decodeMotionbenchJson(JSON.stringify(clipToWire(clip)), { file: 'x.json' }).id).toBe(clip.id);
    expect(encodeClipJson(clip)).toContain('"format": "motionbench-clip/1"');
  });

  it('carries remote and onnx bindings', () => {
    const remote: RemoteBinding = {
      kind: 'remote',
      id: 'sonic',
      version: '1.2',
      controlRateHz: 50,
      label: 'SONIC on the robot PC',
      checkpointHash: 'abc',
    };
    expect(decodeWireBinding(bindingToWire(remote))).toEqual({ ok: true, value: remote });
    const onnx: OnnxBinding = {
      kind: 'onnx',
      id: 'p',
      version: '1',
      controlRateHz: 50,
      label: 'x',
      modelFile: '/tmp/p.onnx',
      checkpointHash: 'f'.repeat(64),
      interface: {
        inputName: 'obs',
        outputName: 'actions',
        observation: [
          { term: 'joint_pos_rel_default', scale: 1 },
          { term: 'reference_joint_pos', frames: 2, scale: 1, offset: 0 },
        ],
        actionScale: 0.25,
        actionOffset: 0,
        gains: { kp: 100, kd: 2 },
        clipAction: 10,
      },
    };
    expect(decodeWireBinding(bindingToWire(onnx))).toEqual({ ok: true, value: onnx });
    expect(decodeWireBinding({ ...bindingToWire(onnx), checkpointHash: null })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/checkpointHash: is required for an onnx binding/),
    });
    expect(decodeWireBinding({ ...bindingToWire(builtin), kind: 'magic' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^binding\.kind: must be one of builtin, onnx, remote/),
    });
    expect(decodeWireBinding({ ...bindingToWire(builtin), gains: { kp: -1, kd: 1 } })).toMatchObject({
      ok: false,
      reason: 'binding.gains.kp: gains must be ≥ 0',
    });
  });

  it('reset carries an InitialState', () => {
    const initial = initialStateFromClipFrame(clip, { frame: 3 });
    const d = validateCommand(JSON.parse(JSON.stringify(resetCommand(initial, { runId: 'r1', seq: 4 }))));
    expect(d).toEqual({ ok: true, value: { command: 'reset', seq: 4, initial, runId: 'r1' } });
    const noArgs = validateCommand({ command: 'reset', seq: 5 });
    expect(noArgs).toMatchObject({
      ok: false,
      code: 'malformed',
      seq: 5,
      command: 'reset',
      reason: 'args.initial_state: is required',
    });
    const w = JSON.parse(JSON.stringify(resetCommand(initial)));
    w.args.initial_state.joint_pos_rad.pop();
    expect(validateCommand(w)).toMatchObject({
      ok: false,
      reason: 'args.initial_state.joint_pos_rad: must have 29 values, found 28',
    });
    w.args.initial_state.joint_pos_rad.push(0);
    w.args.initial_state.root_quat_wxyz = [2, 0, 0, 0];
    expect(validateCommand(w)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^args\.initial_state\.root_quat_wxyz: quaternion/),
    });
  });

  it('start, stop, damp and hold', () => {
    expect(validateCommand({ command: 'start' })).toEqual({
      ok: true,
      value: { command: 'start', seq: null, runId: null },
    });
    expect(validateCommand({ command: 'stop', seq: 2 })).toEqual({
      ok: true,
      value: { command: 'stop', seq: 2, reason: 'stop command', outcome: 'aborted_by_operator' },
    });
    expect(validateCommand({ command: 'stop', args: { outcome: 'estop', reason: 'red button' } })).toMatchObject({
      ok: true,
      value: { outcome: 'estop', reason: 'red button' },
    });
    expect(validateCommand({ command: 'stop', args: { outcome: 'completed' } })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^args\.outcome: must be one of aborted_by_operator, estop, intervention/),
    });
    expect(validateCommand({ command: 'damp', args: { reason: 'x' } })).toEqual({
      ok: true,
      value: { command: 'damp', seq: null, reason: 'x' },
    });
    expect(validateCommand({ command: 'hold', contract: 'g1-bridge/1' })).toEqual({
      ok: true,
      value: { command: 'hold', seq: null, reason: 'hold command' },
    });
  });

  it('refuses unknown commands, other contracts, bad envelopes, clip damage and clip-id mismatches', () => {
    expect(validateCommand({ command: 'dance', seq: 9 })).toMatchObject({
      ok: false,
      code: 'unknown_command',
      seq: 9,
      command: null,
      reason: expect.stringMatching(
        /unknown command the string "dance"; expected one of prepare, start, stop, damp, hold, reset/,
      ),
    });
    expect(validateCommand({ seq: 9 })).toMatchObject({
      ok: false,
      code: 'malformed',
      reason: expect.stringMatching(/^command: unknown command nothing/),
    });
    expect(validateCommand({ command: 'start', contract: 'g1-bridge/2' })).toMatchObject({
      ok: false,
      code: 'unsupported_contract',
    });
    expect(validateCommand({ command: 'start', seq: -1 })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^seq: must be an integer/),
    });
    expect(validateCommand({ command: 'start', args: [] })).toMatchObject({
      ok: false,
      reason: 'args: must be an object, found an array of 0',
    });
    expect(validateCommand({ command: 'start', args: { run_id: '../../etc' } })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^args\.run_id/),
    });
    const wire = JSON.parse(JSON.stringify(prepareCommand({ clip, binding: builtin, seed: 0 })));
    wire.args.clip.frames.root_quat_wxyz[4] = [0.5, 0, 0, 0];
    expect(validateCommand(wire)).toMatchObject({
      ok: false,
      command: 'prepare',
      reason: expect.stringMatching(/^args\.clip\.frames\.root_quat_wxyz\[4\]: quaternion norm is 0\.5/),
    });
    const wire2 = JSON.parse(JSON.stringify(prepareCommand({ clip, binding: builtin, seed: 0 })));
    wire2.args.clip.frames.joint_pos_rad[2][7] += 1e-9;
    expect(validateCommand(wire2)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^args\.clip_id: clip-[0-9a-f]{16} does not match the clip's content id/),
    });
    const wire3 = JSON.parse(JSON.stringify(prepareCommand({ clip, binding: builtin, seed: 0 })));
    wire3.args.clip.joint_order.reverse();
    expect(validateCommand(wire3)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^args\.clip\.joint_order: is a permutation/),
    });
    expect(validateCommand({ command: 'prepare', args: { binding: bindingToWire(builtin) } })).toMatchObject({
      ok: false,
      reason: 'args.clip: is required',
    });
    expect(decodeCommand(enc('{"command": "start", "seq": NaN}'))).toMatchObject({
      ok: false,
      code: 'malformed',
      reason: expect.stringMatching(/NaN is not a JSON number/),
    });
  });

  it('joint velocities of a clip travel with it when present', () => {
    const withVel: MotionClip = {
      ...clip,
      jointVelRadS: new Float64Array(clip.frameCount * 29).map((_, i) => i * 1e-3),
    };
    const d = decodeCommand(enc(prepareCommand({ clip: withVel, binding: builtin, seed: 0 })));
    expect(d.ok && d.value.command === 'prepare' && Array.from(d.value.clip.jointVelRadS!)).toEqual(
      Array.from(withVel.jointVelRadS!),
    );
  });
});

describe('validators never throw', () => {
  it('survive random values and random damage to valid messages', () => {
    const rng = new Xoshiro128StarStar(12345);
    const pick = <T>(a: T[]): T => a[Math.floor(rng.nextFloat() * a.length)];
    const junk = (): unknown =>
      pick<() => unknown>([
        () => null,
        () => undefined,
        () => rng.nextFloat() * 1e3,
        () => 'x'.repeat(Math.floor(rng.nextFloat() * 300)),
        () => [],
        () => ({}),
        () => [null, 'a', {}],
        () => true,
        () => Number.NaN,
        () => ({ toString: null, valueOf: null }),
        () => Object.create(null),
      ])();
    const valid: unknown[] = [
      sampleLowState(),
      { stamp_ns: 1, pos: [0, 0, 0], quat_wxyz: [1, 0, 0, 0], source: 'sim' },
      { state: 'idle', clip_id: null, frame: null },
      JSON.parse(JSON.stringify(prepareCommand({ clip: testClip(3), binding: makeBuiltinBinding(), seed: 1 }))),
      JSON.parse(JSON.stringify(resetCommand(initialStateFromClipFrame(testClip(3))))),
    ];
    const damage = (v: unknown, depth: number): unknown => {
      if (depth > 6 || v === null || typeof v !== 'object') return rng.nextFloat() < 0.3 ? junk() : v;
      if (Array.isArray(v)) return v.map((x) => (rng.nextFloat() < 0.05 ? junk() : damage(x, depth + 1)));
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v))
        if (rng.nextFloat() > 0.05) out[k] = rng.nextFloat() < 0.1 ? junk() : damage(x, depth + 1);
      return out;
    };
    let rejected = 0;
    for (let i = 0; i < 400; i++) {
      const v = rng.nextFloat() < 0.2 ? junk() : damage(pick(valid), 0);
      for (const f of [validateLowState, validateRootState, validateWbcStatus, validateCommand, decodeWireBinding]) {
        let r: { ok: boolean } | undefined;
        expect(() => (r = f(v))).not.toThrow();
        if (!r!.ok) rejected++;
      }
      expect(() => parseJsonMessage(JSON.stringify(v) ?? '', 1 << 20)).not.toThrow();
    }
    expect(rejected).toBeGreaterThan(1000);
  });
});
