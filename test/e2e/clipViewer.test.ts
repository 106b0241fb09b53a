import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import type { MotionClip } from '../../src/domain/motion/motionClip';
import { ForwardKinematics } from '../../src/domain/robot/forwardKinematics';
import type { RobotProfile } from '../../src/domain/robot/robotProfile';
import { startHostServer } from '../../src/services/host/hostServer';
import { DEFAULT_MODEL_FILE, loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { canvasPixelStats, screenshot, SHARED_DATA } from '../helpers/browserHarness';
import { withConsole, withTempDir } from './consoleSession';

// The first console view, driven in Chromium against the real services on the loopback host:
// open real clips through the file input, scrub, step, play, and check that what the console
// shows is the clip's frame and the forward kinematics of it.

const NPZ = path.join(SHARED_DATA, 'motions/g1_moves/npz/B_HandsUp.npz');
const LAFAN_CSV = path.join(SHARED_DATA, 'motions/lafan1_g1_csv/walk1_subject1.csv');
const VIEWPORT_BG: [number, number, number] = [0x0b, 0x0e, 0x12];

let profile: RobotProfile;
let fk: ForwardKinematics;
const tmp = withTempDir('mb-e2e-');
beforeAll(() => {
  profile = loadRobotProfile(DEFAULT_MODEL_FILE);
  fk = new ForwardKinematics(profile);
});
const ui = withConsole(() => startHostServer({ port: 0 }), { viewport: { width: 1600, height: 960 } });
const { page, state } = ui;
const pageErrors = ui.errors;

const shownError = (): Promise<string | null> => page.evaluate(() => window.__motionbench!.error());

/** Decodes a file the way the services do, for the expected values. */
function decodeExpected(file: string, fps?: number): MotionClip {
  return decodeMotionFile(new Uint8Array(fs.readFileSync(file)), {
    file: path.basename(file),
    ...(fps !== undefined && { fps }),
    jointLimitsRad: profile.joints.map((j) => j.rangeRad),
  });
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** Asserts the console shows `frame` of `clip`: joint angles as decoded, bodies as FK of them. */
async function expectShowsFrame(clip: MotionClip, frame: number): Promise<void> {
  await expect.poll(async () => (await state()).frame).toBe(frame);
  const s = await state();
  expect(s.clipId).toBe(clip.id);
  expect(s.timeS).toBeCloseTo(frame / clip.fps, 9);
  expect(maxAbsDiff(s.jointPosRad, clip.jointPosRad.subarray(29 * frame, 29 * frame + 29))).toBe(0);
  const pos = new Float64Array(3 * fk.bodyCount);
  const quat = new Float64Array(4 * fk.bodyCount);
  fk.computeClipFrame(clip, frame, pos, quat);
  expect(maxAbsDiff(s.bodyPosM, pos)).toBeLessThan(1e-12);
}

async function openFile(file: string): Promise<void> {
  await page.locator('[data-testid=clip-file-input]').setInputFiles(file);
}

beforeAll(async () => {
  // The model's default pose is drawn before any clip is loaded.
  await page.waitForFunction((n) => window.__motionbench!.state().bodyPosM.length === n, 3 * fk.bodyCount);
});

describe('console: first view', () => {
  it('starts connected, with the robot standing in its default pose and a STOP control', async () => {
    await screenshot(page, '01-start');
    await expect(page.locator('[data-testid=stop-button]').isVisible()).resolves.toBe(true);
    const s = await state();
    expect(s.clipId).toBeNull();
    const pos = new Float64Array(3 * fk.bodyCount);
    const quat = new Float64Array(4 * fk.bodyCount);
    const d = profile.defaultPose;
    fk.compute(d.rootPosM, d.rootQuatWxyz, d.jointPosRad, pos, quat);
    expect(maxAbsDiff(s.bodyPosM, pos)).toBeLessThan(1e-12);
  });

  it('opens an NPZ clip, scrubs with the slider and steps with the keys', async () => {
    const clip = decodeExpected(NPZ);
    await openFile(NPZ);
    await expect.poll(async () => (await state()).clipId, { timeout: 20_000 }).toBe(clip.id); // a decode in the file worker: seconds on a loaded machine
    const s0 = await state();
    expect(s0.clipName).toContain('B_HandsUp');
    expect(s0.frameCount).toBe(clip.frameCount);
    await expectShowsFrame(clip, 0);
    await expect(page.locator('[data-testid=clip-info]').textContent()).resolves.toContain(String(clip.frameCount));

    const target = Math.floor(clip.frameCount * 0.55);
    await page.locator('[data-testid=scrubber]').fill(String(target));
    await expectShowsFrame(clip, target);
    await expect.poll(() => page.locator('[data-testid=frame-label]').textContent()).toBe(String(target));

    // → three times, then Shift+← (ten back).
    await page.locator('[data-testid=scrubber]').focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
    await expectShowsFrame(clip, target + 3);
    await page.keyboard.press('Shift+ArrowLeft');
    await expectShowsFrame(clip, target - 7);
    await page.locator('[data-testid=step-forward]').click();
    await expectShowsFrame(clip, target - 6);

    await page.waitForTimeout(300); // let the throttled joint table catch up
    await screenshot(page, '02-npz-scrubbed');
  });

  it('plays for about a second, and STOP (Space) pauses and is recorded', async () => {
    await page.locator('[data-testid=scrubber]').fill('0');
    await expect.poll(async () => (await state()).frame).toBe(0);
    await page.locator('[data-testid=play-pause]').click();
    // About a second of clip; on a loaded machine the drawn frames (and so the playhead) come slower.
    await expect.poll(async () => (await state()).frame, { timeout: 10_000 }).toBeGreaterThan(10);
    const s = await state();
    expect(s.playing).toBe(true);
    await screenshot(page, '03-playing');

    await page.keyboard.press('Space');
    await expect.poll(async () => (await state()).playing).toBe(false);
    expect(await page.evaluate(() => window.__motionbench!.operatorStops())).toBe(1);
    await expect(page.locator('[data-testid=last-stop]').textContent()).resolves.toContain('Operator stop');
    const stoppedAt = (await state()).frame;
    await page.waitForTimeout(200);
    expect((await state()).frame).toBe(stoppedAt);
  });

  it('asks for the fps of a CSV whose name states none, keeps the previous clip, then loads it with the fps typed in', async () => {
    const previous = await state();
    // The same rows under a name no convention reads an fps from.
    const unnamed = path.join(tmp(), 'walk_take.csv');
    fs.copyFileSync(LAFAN_CSV, unnamed);
    await page.locator('[data-testid=fps-input]').fill('');
    await openFile(unnamed);
    await expect.poll(shownError, { timeout: 20_000 }).toMatch(/fps/);
    expect(await page.locator('[data-testid=error-banner]').textContent()).toContain('walk_take.csv');
    expect((await state()).clipId).toBe(previous.clipId);
    await screenshot(page, '04-csv-needs-fps');

    const clip = decodeExpected(LAFAN_CSV, 30);
    await page.locator('[data-testid=fps-input]').fill('30');
    await page.locator('[data-testid=reload-clip]').click();
    await expect.poll(async () => (await state()).clipId, { timeout: 20_000 }).toBe(clip.id);
    expect(await shownError()).toBeNull();
    expect(await page.locator('[data-testid=clip-info]').textContent()).toMatch(/30\s*\(stated\)/);

    const target = 1234;
    await page.locator('[data-testid=scrubber]').fill(String(target));
    await expectShowsFrame(clip, target);
    await page.waitForTimeout(300);
    await screenshot(page, '05-lafan-walk');

    const stats = await canvasPixelStats(page, VIEWPORT_BG);
    expect(stats.nonBackground).toBeGreaterThan(0.05); // floor grid and robot were drawn
    expect(stats.bright).toBeGreaterThan(0.003); // the robot's light shell is on screen
  });

  it('takes a LAFAN1-named CSV at 30 fps by its name, as the CLI does', async () => {
    // The same rule as `motionbench clip info` (src/services/motion/loadClipFile.ts, fileNameFpsHint).
    // The clip on display holds the same rows at a stated 30 fps (same id): wait for the inferred rate.
    await page.locator('[data-testid=fps-input]').fill('');
    await openFile(LAFAN_CSV);
    await expect
      .poll(() => page.locator('[data-testid=clip-info]').textContent(), { timeout: 20_000 })
      .toMatch(/30\s*\(inferred\)/);
    expect((await state()).clipId).toBe(decodeExpected(LAFAN_CSV, 30).id);
    expect(await shownError()).toBeNull();
  });

  it('shows a malformed CSV with its file and line, and keeps the clip on display', async () => {
    const previous = await state();
    const good = Array.from({ length: 36 }, (_, i) => (i === 2 ? '0.79' : i === 6 ? '1' : '0')).join(',');
    const bad = good.split(',');
    bad[9] = 'oops';
    const file = path.join(tmp(), 'broken_clip.csv');
    fs.writeFileSync(file, [good, good, good, good, bad.join(','), good].join('\n') + '\n');
    await page.locator('[data-testid=fps-input]').fill('30'); // its rate is stated: the bad cell is the error
    await openFile(file);
    await expect.poll(shownError, { timeout: 20_000 }).not.toBeNull();
    const message = (await shownError())!;
    expect(message).toContain('broken_clip.csv');
    expect(message).toContain('line 5');
    const where = await page.locator('[data-testid=error-location]').textContent();
    expect(where).toContain('broken_clip.csv');
    expect(where).toContain('line 5');
    expect(where).toContain('column 10');
    const now = await state();
    expect(now.clipId).toBe(previous.clipId);
    expect(now.frame).toBe(previous.frame);
    await screenshot(page, '06-malformed-csv');

    await page.getByRole('button', { name: 'Dismiss' }).click();
    expect(await shownError()).toBeNull();
  });

  it('logged no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
