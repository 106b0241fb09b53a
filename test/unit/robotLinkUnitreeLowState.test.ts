import { describe, expect, it } from 'vitest';
import { UnitreeDefinitionError } from '../../src/domain/robotLink/unitreeLowState';
import { UnitreeLowStateIntake } from '../../src/domain/robotLink/unitreeLowStateIntake';
import { Ros2LowStateDecoder } from '../../src/services/robotLink/ros2LowStateDecoder';
import { lowStateDefinitionText, lowStateMessage, lowStateWriter } from '../helpers/ros2LowStateBridge';

// A ROS 2 G1's /lowstate (unitree_hg/msg/LowState through foxglove_bridge) → StateFrame, with
// Unitree's real LowState.msg, IMUState.msg and MotorState.msg (../shared/data/ros2, BSD-3-Clause,
// © Unitree Robotics): messages are built with MessageWriter from the definition text foxglove_bridge
// would advertise, decoded by the console's decoder built from that same advertised text, and
// mapped. Negative controls: a definition that is not unitree_hg's is refused naming the field; a
// sample with a non-unit or NaN quaternion, a NaN joint value or AB ankle mode is refused as the
// g1-bridge/1 intake refuses its lowstate.

const channel = (schema: string) => ({
  topic: '/lowstate',
  encoding: 'cdr',
  schemaName: 'unitree_hg/msg/LowState',
  schemaEncoding: 'ros2msg',
  schema,
});
const f32 = (x: number): number => Math.fround(x);

async function decodeWith(schema: string, message: Record<string, unknown>) {
  const bytes = lowStateWriter().writeMessage(message);
  const decoder = await Ros2LowStateDecoder.fromChannel(channel(schema));
  return { bytes, decoded: decoder.decode(bytes) };
}

describe('unitree_hg LowState from its advertised definition', () => {
  it('maps motor_state[i] to joint i and the IMU (w, x, y, z) exactly, from CDR built with the real .msg files', async () => {
    const msg = lowStateMessage(37, 4242);
    const { bytes, decoded } = await decodeWith(lowStateDefinitionText(), msg);
    // CDR with its 4-byte encapsulation header (little-endian CDR: 00 01 00 00), as rclcpp serializes.
    expect([...bytes.slice(0, 4)]).toEqual([0, 1, 0, 0]);
    expect(decoded.ok).toBe(true);
    const intake = new UnitreeLowStateIntake();
    const r = intake.lowState(decoded as { ok: true; message: unknown }, 1_780_000_000_123_456_789n);
    expect(r.kind).toBe('frame');
    if (r.kind !== 'frame') return;
    const f = r.frame;
    const s = msg.sent;
    // Every slot distinct, so a shifted or permuted mapping cannot pass.
    expect(new Set(Array.from(s.q.slice(0, 29))).size).toBe(29);
    for (let i = 0; i < 29; i++) {
      expect(f.jointPosRad[i]).toBe(s.q[i]);
      expect(f.jointVelRadS[i]).toBe(s.dq[i]);
      expect(f.jointTauNm[i]).toBe(s.tauEst[i]);
    }
    expect(Array.from(f.imu.quatWxyz)).toEqual(Array.from(s.quat));
    expect(Array.from(f.rootQuatWxyz!)).toEqual(Array.from(s.quat));
    expect(Array.from(f.imu.gyroRadS)).toEqual(Array.from(s.gyro));
    expect(Array.from(f.imu.accelMS2)).toEqual(Array.from(s.accel));
    expect(f.imu.quatWxyz[0]).toBeGreaterThan(0.99); // w first: the sample is near upright
    expect(f.rootPosM).toBeNull();
    expect(f.tick).toBe(4242);
    expect(f.timeS).toBe(0);
    expect(f.contacts).toBeNull();
    expect(intake.modeMachine).toBe(5);
  });

  it('times frames by the message log time from the first accepted sample, unwraps the uint32 tick, drops duplicates', () => {
    const intake = new UnitreeLowStateIntake();
    const base = 1_780_000_000_000_000_000n;
    const at = (k: number, tick: number, dt: bigint) =>
      intake.lowState({ ok: true, message: lowStateMessage(k, tick) }, base + dt);
    const a = at(0, 0xfffffffe, 0n);
    const b = at(1, 0, 2_000_000n); // the counter wrapped: 2^32 + 0 follows 2^32 − 2
    const dup = at(2, 0, 4_000_000n);
    expect(a.kind === 'frame' && a.frame.timeS).toBe(0);
    expect(b.kind === 'frame' && [b.frame.tick, b.frame.timeS]).toEqual([2 ** 32, 0.002]);
    expect(dup.kind === 'rejected' && dup.problem.code).toBe('duplicate_frame');
    expect(intake.stats()).toMatchObject({ received: 3, accepted: 2, duplicate: 1, missingTicks: 0 });
  });

  describe('negative controls: a definition that is not unitree_hg LowState is refused naming the field', () => {
    const real = {
      LowState: lowStateDefinitionText().split('\n=')[0],
    };
    const motor = (text: string) => lowStateDefinitionText({ MotorState: text });
    const cases: [string, string, RegExp][] = [
      [
        'MotorState with dq before q',
        motor('uint8 mode\nfloat32 dq\nfloat32 q\nfloat32 ddq\nfloat32 tau_est\n'),
        /unitree_hg\/msg\/MotorState\.dq: comes before unitree_hg\/msg\/MotorState\.q/,
      ],
      [
        'motor_state moved before imu_state',
        lowStateDefinitionText({
          LowState: real.LowState.replace('IMUState imu_state\n', '').replace(
            'MotorState[35] motor_state\n',
            'MotorState[35] motor_state\nIMUState imu_state\n',
          ),
        }),
        /unitree_hg\/msg\/LowState\.motor_state: comes before unitree_hg\/msg\/LowState\.imu_state/,
      ],
      [
        'tau_est renamed',
        motor('uint8 mode\nfloat32 q\nfloat32 dq\nfloat32 ddq\nfloat32 tau\n'),
        /unitree_hg\/msg\/MotorState\.tau_est: missing/,
      ],
      [
        'quaternion as float64',
        lowStateDefinitionText({ IMUState: 'float64[4] quaternion\nfloat32[3] gyroscope\nfloat32[3] accelerometer\n' }),
        /unitree_hg\/msg\/IMUState\.quaternion: is `float64\[4\] quaternion`; expected `float32\[4\] quaternion`/,
      ],
      [
        '30 motor slots',
        lowStateDefinitionText({ LowState: real.LowState.replace('MotorState[35]', 'MotorState[30]') }),
        /unitree_hg\/msg\/LowState\.motor_state: is `unitree_hg\/msg\/MotorState\[30\] motor_state`/,
      ],
      [
        'tick missing',
        lowStateDefinitionText({ LowState: real.LowState.replace('uint32 tick\n', '') }),
        /LowState\.tick: missing/,
      ],
    ];
    it.each(cases)('%s', async (_name, schema, message) => {
      let err: unknown;
      try {
        await Ros2LowStateDecoder.fromChannel(channel(schema));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UnitreeDefinitionError);
      expect((err as Error).message).toMatch(message);
    });

    it('control: the real definition, as foxglove_bridge concatenates it, is accepted', async () => {
      await expect(Ros2LowStateDecoder.fromChannel(channel(lowStateDefinitionText()))).resolves.toBeDefined();
      // … and another schema name or encoding is not read at all.
      await expect(
        Ros2LowStateDecoder.fromChannel({ ...channel(lowStateDefinitionText()), encoding: 'json' }),
      ).rejects.toThrow(/expected unitree_hg\/msg\/LowState \(cdr, ros2msg\)/);
    });
  });

  describe('negative controls: samples refused as the g1-bridge/1 intake refuses them', () => {
    const refuse = async (edit: (m: ReturnType<typeof lowStateMessage>) => void): Promise<string> => {
      const msg = lowStateMessage(3, 77);
      edit(msg);
      const { decoded } = await decodeWith(lowStateDefinitionText(), msg);
      const r = new UnitreeLowStateIntake().lowState(decoded, 0n);
      expect(r.kind).toBe('rejected');
      return r.kind === 'rejected' ? `${r.problem.code}: ${r.problem.message}` : '';
    };
    const imu = (m: ReturnType<typeof lowStateMessage>) => m.imu_state as { quaternion: Float32Array };
    const motors = (m: ReturnType<typeof lowStateMessage>) => m.motor_state as { q: number; dq: number }[];

    it('a quaternion that is not unit', async () => {
      expect(await refuse((m) => imu(m).quaternion.set([0.9, 0, 0, 0]))).toMatch(
        /malformed_frame: .*imu_state\.quaternion quaternion \(w, x, y, z\) must be unit within 0\.001, its norm is 0\.900000/,
      );
    });
    it('a NaN in the quaternion', async () => {
      expect(await refuse((m) => imu(m).quaternion.set([NaN], 2))).toMatch(
        /imu_state\.quaternion\[2\] must be finite, found NaN/,
      );
    });
    it('a NaN joint velocity names its motor slot', async () => {
      expect(await refuse((m) => (motors(m)[17].dq = NaN))).toMatch(/motor_state\[17\]\.dq must be finite, found NaN/);
    });
    it('ankles in AB mode (mode_pr 1)', async () => {
      expect(await refuse((m) => (m.mode_pr = 1))).toMatch(/mode_pr is 1: the ankles report A\/B motor angles/);
    });
    it('control: a NaN beyond the 29 G1 joints (slot 30) is not read', async () => {
      const msg = lowStateMessage(3, 77);
      motors(msg)[30].q = NaN;
      const { decoded } = await decodeWith(lowStateDefinitionText(), msg);
      expect(new UnitreeLowStateIntake().lowState(decoded, 0n).kind).toBe('frame');
    });
    it('a truncated payload is a decoding failure, not a crash', async () => {
      const bytes = lowStateWriter().writeMessage(lowStateMessage(3, 77));
      const d = (await Ros2LowStateDecoder.fromChannel(channel(lowStateDefinitionText()))).decode(
        bytes.subarray(0, 100),
      );
      expect(d.ok).toBe(false);
      const r = new UnitreeLowStateIntake().lowState(d, 0n);
      expect(r.kind === 'rejected' && r.problem.message).toMatch(/CDR decoding failed/);
      // Shorter than the fewest bytes the definition admits (4-byte header + 1,983): refused unread.
      expect(d).toEqual({
        ok: false,
        reason: 'a payload of 100 bytes; the advertised definition needs at least 1987',
      });
      expect(bytes.byteLength).toBeGreaterThanOrEqual(1987); // control: a real payload is not shorter
    });
  });

  it('float32 values survive exactly (no double rounding)', async () => {
    expect(f32(0.1)).not.toBe(0.1);
    const msg = lowStateMessage(0, 1);
    const { decoded } = await decodeWith(lowStateDefinitionText(), msg);
    const r = new UnitreeLowStateIntake().lowState(decoded, 0n);
    expect(r.kind === 'frame' && r.frame.jointPosRad[0]).toBe(f32(msg.sent.q[0]));
  });
});
