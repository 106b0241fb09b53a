import { expect } from 'vitest';
import { FALLEN_TILT_LIMIT_RAD, tiltRadFromQuatWxyz } from '../../src/domain/robotLink/robotUpright';
import { AFTER_CLIP_WINDOW_S } from '../../src/domain/trial/afterClipWatch';
import { readEpisodeFile } from '../../src/services/episode/episodeReader';
import type { CampaignStore } from '../../src/services/trace';

/**
 * A real trial's after-clip watch, checked against its episode file alone: the lowstate after the
 * clip is on /executed/after_clip, after the clip's last frame; its outcome and reason agree with
 * the tilts recomputed from those frames (a fall: a sample past the fallen limit, the trial
 * hard_failure with its hard_failure event; upright or standing: every sample within it).
 * A trial that failed on the clip's own frames is not watched. Returns the verdict word, the
 * largest tilt, the samples and how long after the clip they reach, for the test's log.
 */
export async function checkAfterClip(
  store: CampaignStore,
  t: { runId: string; outcome: string; reason: string },
): Promise<{
  verdict: 'fell' | 'standing' | 'upright' | 'not watched';
  maxTiltDeg: number;
  samples: number;
  lastS: number;
}> {
  const ep = await readEpisodeFile(store.episodeFile(t.runId));
  const after = ep.afterClip;
  if (t.reason.startsWith('hard failure: ')) {
    // failed on the clip's frames (the live metrics): not watched after it
    expect(after).toEqual([]);
    return { verdict: 'not watched', maxTiltDeg: Number.NaN, samples: 0, lastS: 0 };
  }
  expect(after.length, `${t.runId}: no /executed/after_clip frames (${t.reason})`).toBeGreaterThan(0);
  const clipEnd = ep.executed.at(-1)!.timeS;
  expect(after[0].timeS).toBeGreaterThan(clipEnd);
  const tilts = after.map((m) => tiltRadFromQuatWxyz(m.imu.quatWxyz));
  const maxTilt = Math.max(...tilts);
  const fellIn = /fell (\d+\.\d+) s after the clip ended/.exec(t.reason);
  const base = { maxTiltDeg: (maxTilt * 180) / Math.PI, samples: after.length, lastS: after.at(-1)!.timeS - clipEnd };
  if (fellIn) {
    expect(t.outcome).toBe('hard_failure');
    expect(maxTilt).toBeGreaterThan(FALLEN_TILT_LIMIT_RAD);
    // the first sample past the limit is the fall's time; the recording goes on to the window's end
    const first = tilts.findIndex((x) => x > FALLEN_TILT_LIMIT_RAD);
    expect(after[first].timeS - clipEnd).toBeCloseTo(Number(fellIn[1]), 2);
    expect(after.at(-1)!.timeS - clipEnd).toBeGreaterThan(AFTER_CLIP_WINDOW_S - 0.05);
    const events = ep.events.filter((e) => e.type === 'hard_failure');
    expect(events.map((e) => e.reason)).toContain(/hard failure after the clip: (.*)$/.exec(t.reason)![1]);
    return { verdict: 'fell', ...base };
  }
  expect(t.reason).toMatch(/; (standing still|upright) \d+\.\d s after the clip \(tilt at most \d+°\)$/);
  expect(maxTilt).toBeLessThanOrEqual(FALLEN_TILT_LIMIT_RAD);
  return { verdict: /standing still/.test(t.reason) ? 'standing' : 'upright', ...base };
}
