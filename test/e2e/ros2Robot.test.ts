import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { openCampaign } from '../../src/services/trace';
import { screenshot, SCREENSHOT_DIR } from '../helpers/browserHarness';
import { startRos2LowStateBridge, type Ros2LowStateBridge } from '../helpers/ros2LowStateBridge';
import { withConsole, withTempDir } from './consoleSession';
import { startHostCommand } from './e2eSupport';
import { assistQualifiedCampaign } from './projectFixtures';

// The console (`motionbench host` + Chromium) connects to a ROS 2 G1
// through foxglove_bridge — here the loopback stand-in of test/helpers/ros2LowStateBridge.ts,
// which advertises unitree_hg/msg/LowState as ros2msg and publishes 500 Hz CDR built from
// Unitree's own .msg files — shows it as a watch-only robot link, draws it live, and captures
// and accepts a calibration from its lowstate. The captured joints are what the bridge sent. The
// Trial runner then offers no start on it: "Start matched pair" is disabled with the link's reason
// beside it.

const CLIP = 'ub_wave_right';

let campaignDir: string;
let bridge: Ros2LowStateBridge;
const tmp = withTempDir('mb-ros2-e2e-');
beforeAll(async () => {
  campaignDir = path.join(tmp(), 'campaign');
  const q = await assistQualifiedCampaign(campaignDir, CLIP);
  expect(q.admitted).toBe(1);
  bridge = await startRos2LowStateBridge();
}, 120_000);
afterAll(async () => {
  await bridge?.stop();
});
const ui = withConsole(() => startHostCommand([]), { viewport: { width: 1600, height: 1100 } });
const { page, tid, attr, liveRobots: live } = ui;
const pageErrors = ui.errors;

describe('console: a ROS 2 G1 through foxglove_bridge', () => {
  it('connects as a watch-only robot link: present, the reason shown, drawn live, nothing advertised to the robot', async () => {
    onTestFailed(() => void screenshot(page, 'ros2-fail-connect'));
    await tid('endpoint-kind').selectOption('robot');
    await tid('endpoint-url').fill(bridge.url);
    await tid('endpoint-add').click();
    await expect.poll(() => tid('endpoint-presence-robot-1').textContent(), { timeout: 10_000 }).toBe('present');
    await expect
      .poll(() => attr('endpoint-problem-robot-1', 'title'), { timeout: 10_000 })
      .toMatch(/watch_only: .*ROS 2 foxglove_bridge: it has no g1-bridge\/1 runner/);
    await expect.poll(async () => (await live())[0]?.drawn ?? false, { timeout: 10_000 }).toBe(true);
    const [r] = await live();
    // the live model's joints are the bridge's motor_state[i].q (a still pose, ±1e-4 rad of wobble)
    for (let j = 0; j < 29; j++) expect(Math.abs(r.jointPosRad[j] - 0.02 * (j - 17))).toBeLessThan(2e-4);
    expect(bridge.clientAdvertisements).toEqual([]);
    await screenshot(page, 'ros2-connected');
  });

  it('captures a calibration from the ROS 2 lowstate and accepts it: the stored joints are what the bridge sent', async () => {
    onTestFailed(() => void screenshot(page, 'ros2-fail-calibration'));
    await tid('trial-dir').fill(campaignDir);
    await tid('trial-load').click();
    await tid(`trial-pair-${CLIP}`).waitFor();
    await tid('cal-capture').click();
    await tid('cal-result').waitFor({ timeout: 25_000 });
    expect(Number(await attr('cal-window-fill', 'data-fill'))).toBe(1);
    await expect(page.locator('[data-testid=cal-table] tbody tr').count()).resolves.toBe(29);
    await tid('cal-panel').screenshot({ path: path.join(SCREENSHOT_DIR, 'ros2-calibration-panel.png') });
    // The bridge's still pose (0.02·(j − 17) rad) is far from the clip's first frame: flagged, and
    // Accept asks before storing it.
    expect(await attr('cal-verdict', 'data-within')).toBe('false');
    await tid('cal-accept').click();
    await tid('cal-accept-anyway').click();
    await expect.poll(() => tid('cal-accepted').textContent(), { timeout: 5_000 }).toMatch(/^cal-[0-9a-f]{24}$/);
    const calId = (await tid('cal-accepted').textContent())!;
    const store = await openCampaign(campaignDir, { readOnly: true });
    try {
      const rec = store.getCalibration(calId)!.record;
      expect(rec.measured.jointPosRad).toHaveLength(29);
      rec.measured.jointPosRad.forEach((q, j) => expect(Math.abs(q - 0.02 * (j - 17))).toBeLessThan(2e-4));
      expect(rec.measured.rootPosM).toBeNull(); // no motion capture on a ROS 2 lowstate
    } finally {
      store.close();
    }
    await screenshot(page, 'ros2-calibrated');
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it('the Trial runner disables "Start matched pair" on the watch-only link and says why beside it', async () => {
    onTestFailed(() => void screenshot(page, 'ros2-fail-start-blocked'));
    // everything else a start needs is there: the queue loaded, its admitted pair picked, a calibration accepted
    expect(await tid(`trial-pair-pick-${CLIP}`).isChecked()).toBe(true);
    await expect.poll(() => tid('trial-start-blocked').isVisible(), { timeout: 5_000 }).toBe(true);
    expect(await tid('trial-start').isDisabled()).toBe(true);
    const why = (await tid('trial-start-blocked').textContent()) ?? '';
    expect(why).toContain('is a watch-only robot link — ');
    expect(why).toContain(
      'this robot link is a ROS 2 foxglove_bridge: it has no g1-bridge/1 runner, so a clip cannot be prepared, started or stopped here',
    );
    expect(await attr('trial-start', 'title')).toMatch(/is a watch-only robot link: this robot link is a ROS 2/);
    await tid('trial-panel').screenshot({ path: path.join(SCREENSHOT_DIR, 'ros2-trial-start-blocked.png') });
    expect(pageErrors).toEqual([]);
  });
});
