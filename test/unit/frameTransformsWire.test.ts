import { describe, expect, it } from 'vitest';
import { BodyFrameTree } from '../../src/domain/robot/bodyTransforms';
import { Xoshiro128StarStar } from '../../src/domain/stats/prng';
import { FRAME_TRANSFORMS, bodyFrameId } from '../../src/services/episode/foxgloveScene';
import { writeFrameTransforms } from '../../src/services/episode/frameTransformsWire';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { OUR_G1 } from '../helpers/sharedData';

// The direct writer of foxglove.FrameTransforms against protobufjs encoding the same message from
// Foxglove's schema (the object the episode writer built before): the same bytes, byte for byte.

const tree = new BodyFrameTree(loadRobotProfile(OUR_G1));

/** The message as the episode writer built it for protobufjs (which leaves proto3 zeros out itself). */
function protobufjsBytes(prefix: string, rootParent: string, timeNs: bigint, pos: Float64Array, quat: Float64Array) {
  const nonZero = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== 0));
  const timestamp = { seconds: Number(timeNs / 1_000_000_000n), nanos: Number(timeNs % 1_000_000_000n) };
  const transforms = tree.frames.map((f, i) => ({
    timestamp,
    parent_frame_id: f.parent < 0 ? rootParent : bodyFrameId(prefix, tree.frames[f.parent].name),
    child_frame_id: bodyFrameId(prefix, f.name),
    translation: nonZero({ x: pos[3 * i], y: pos[3 * i + 1], z: pos[3 * i + 2] }),
    rotation: nonZero({ x: quat[4 * i + 1], y: quat[4 * i + 2], z: quat[4 * i + 3], w: quat[4 * i] }),
  }));
  return FRAME_TRANSFORMS.encode({ transforms }).finish();
}

describe('foxglove.FrameTransforms written directly', () => {
  const n = tree.frames.length;
  const rng = new Xoshiro128StarStar(7);
  /** Coordinates mixing ordinary values with the cases proto3 treats apart: 0, -0, tiny, huge, NaN. */
  const value = (): number => {
    const u = rng.nextFloat();
    if (u < 0.2) return 0;
    if (u < 0.25) return -0;
    if (u < 0.3) return 5e-324;
    if (u < 0.33) return -1.7976931348623157e308;
    if (u < 0.35) return Number.NaN;
    return (rng.nextFloat() - 0.5) * 4;
  };

  it('equals protobufjs byte for byte over 500 random trees, both prefixes, times from 0 to 2^53 s', () => {
    const times = [
      0n,
      1n,
      999_999_999n,
      1_000_000_000n,
      1_765_000_000_123_456_789n,
      9_007_199_254_740_991_999_999_999n,
    ];
    for (let k = 0; k < 500; k++) {
      const pos = Float64Array.from({ length: 3 * n }, value);
      const quat = Float64Array.from({ length: 4 * n }, value);
      const t = k < times.length ? times[k] : BigInt(Math.floor(rng.nextFloat() * 2 ** 40)) * 1_000_003n;
      const [prefix, parent] = k % 2 ? ['exec', 'ref/pelvis'] : ['ref', 'world'];
      const ours = writeFrameTransforms(tree, prefix, parent, t, pos, quat);
      const theirs = protobufjsBytes(prefix, parent, t, pos, quat);
      if (!Buffer.from(ours).equals(Buffer.from(theirs))) {
        let d = 0;
        while (ours[d] === theirs[d]) d++;
        throw new Error(
          `case ${k} (t ${t}): ${ours.length} vs ${theirs.length} bytes, first difference at ${d}: ${Buffer.from(ours.slice(Math.max(0, d - 12), d + 12)).toString('hex')} vs ${Buffer.from(theirs.slice(Math.max(0, d - 12), d + 12)).toString('hex')}`,
        );
      }
    }
  });

  it('reads back through protobufjs with every frame, name and coordinate (x, y, z, w from w, x, y, z)', () => {
    const pos = Float64Array.from({ length: 3 * n }, (_, i) => i + 0.5);
    const quat = Float64Array.from({ length: 4 * n }, (_, i) => (i % 4) + 1);
    const m = FRAME_TRANSFORMS.toObject(
      FRAME_TRANSFORMS.decode(writeFrameTransforms(tree, 'ref', 'world', 2_500_000_001n, pos, quat)),
      { longs: Number },
    ) as {
      transforms: {
        timestamp: object;
        parent_frame_id: string;
        child_frame_id: string;
        translation: object;
        rotation: object;
      }[];
    };
    expect(m.transforms).toHaveLength(n);
    expect(m.transforms[0]).toEqual({
      timestamp: { seconds: 2, nanos: 500_000_001 },
      parent_frame_id: 'world',
      child_frame_id: `ref/${tree.frames[0].name}`,
      translation: { x: 0.5, y: 1.5, z: 2.5 },
      rotation: { x: 2, y: 3, z: 4, w: 1 },
    });
    expect(m.transforms[n - 1].parent_frame_id).toBe(`ref/${tree.frames[tree.frames[n - 1].parent].name}`);
  });

  it('a time before the epoch is refused, not wrapped (negative control of the range)', () => {
    const pos = new Float64Array(3 * n);
    const quat = new Float64Array(4 * n);
    expect(() => writeFrameTransforms(tree, 'ref', 'world', -1_000_000_000n, pos, quat)).toThrow(/outside 0…2\^53 s/);
  });
});
