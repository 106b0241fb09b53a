import { afterAll, describe, expect, it } from 'vitest';
import { OffThreadFiles } from '../../src/services/console/offThread';
import { loadWorkload } from '../../src/services/workload';

// The built-in workload (core-v1) generated in the console's file worker (generated
// on the services' loop when a box opens, it blocks STOP, the robot link and the gate for 0.5–2 s;
// the top bar's TIMING read a 1.1 s lowstate gap): the real worker gives exactly what the same
// code gives on this thread — the snapshot (its hash names the workload in every admission) and
// every clip's arrays, value for value.

const files = new OffThreadFiles();
afterAll(() => files.close());

describe('core-v1 off the event loop', () => {
  it('the worker generates the same workload as this thread, clip for clip', async () => {
    const here = loadWorkload('core-v1');
    const there = await files.builtinWorkload('core-v1');
    expect(there.snapshot).toEqual(here.snapshot);
    expect(there.clips.map((c) => c.id)).toEqual(here.clips.map((c) => c.id));
    for (let i = 0; i < here.clips.length; i++) {
      const a = here.clips[i];
      const b = there.clips[i];
      expect(b.fps).toBe(a.fps);
      expect(b.frameCount).toBe(a.frameCount);
      expect(b.jointPosRad).toBeInstanceOf(Float64Array);
      expect(Array.from(b.jointPosRad)).toEqual(Array.from(a.jointPosRad));
      expect(Array.from(b.rootPosM)).toEqual(Array.from(a.rootPosM));
      expect(Array.from(b.rootQuatWxyz)).toEqual(Array.from(a.rootQuatWxyz));
    }
    // The control: a clip that differs in one value is told apart by the same comparison.
    const changed = Float64Array.from(there.clips[0].jointPosRad);
    changed[7] += 1e-9;
    expect(Array.from(changed)).not.toEqual(Array.from(here.clips[0].jointPosRad));
  }, 60_000);
});
