import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionInfo } from '../../src/api/contract';
import { defaultBackendFactories } from '../../src/services/console/backendFactories';
import { startHostServer } from '../../src/services/host/hostServer';
import { SCREENSHOT_DIR, screenshot } from '../helpers/browserHarness';
import { startDdsG1Emulator, type DdsG1EmulatorProcess } from '../helpers/ddsG1EmulatorProcess';
import { withConsole } from './consoleSession';

// "G1 over DDS" in the console, end to end: the emulated G1 on real Cyclone DDS over loopback
// (`motionbench emulate-robot --dds`, its own process), the console services in this process with
// their default backends, Chromium at 1366×768. The operator picks "G1 over DDS", types `lo` and a
// domain, declares the gantry and presses Start: the services start `motionbench g1-runner` as a
// child process and connect to it as the robot; the Trial runner shows the runner's own state.
// Removing the entry stops the runner. A domain of its own keeps other DDS tests on `lo` apart.

const DOMAIN = 57;
let emu: DdsG1EmulatorProcess;
const serviceLog: string[] = [];
beforeAll(async () => {
  emu = await startDdsG1Emulator(DOMAIN, ['--gantry']);
}, 120_000);
afterAll(async () => {
  await emu?.stop();
});
const ui = withConsole(
  () => startHostServer({ port: 0, backends: defaultBackendFactories(), log: (l) => serviceLog.push(l) }),
  { viewport: { width: 1366, height: 768 } },
);
const { page, tid } = ui;
const pageErrors = ui.errors;

const entries = (): Promise<ConnectionInfo[]> => page.evaluate(() => window.__motionbench!.connections());
const ddsEntry = async (): Promise<ConnectionInfo | undefined> => (await entries()).find((e) => e.dds !== undefined);

const portOpen = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

describe('console: G1 over DDS (runner started by the services) against emulate-robot --dds on lo', () => {
  it('refuses a bad interface name and an undeclared gantry in the form (negative controls)', async () => {
    await tid('endpoint-kind').selectOption('g1_dds');
    await expect(tid('endpoint-kind').locator('option').allTextContents()).resolves.toEqual([
      'sim',
      'runner at URL',
      'G1 over DDS',
    ]);
    await tid('endpoint-dds-interface').fill('eth0;reboot');
    await expect(tid('endpoint-error').textContent()).resolves.toContain('letters, digits');
    await expect(tid('endpoint-add').isDisabled()).resolves.toBe(true);
    await tid('endpoint-dds-interface').fill('lo');
    await tid('endpoint-dds-domain').fill(String(DOMAIN));
    await expect(tid('endpoint-error').textContent()).resolves.toContain('gantry');
    await expect(tid('endpoint-add').isDisabled()).resolves.toBe(true);
    await expect(tid('endpoint-dds-interface').getAttribute('aria-invalid')).resolves.toBe('false');
    await screenshot(page, 'g1-dds-form-gantry-undeclared');
    expect((await entries()).some((e) => e.dds)).toBe(false);
  });

  it('starts the runner, connects to it as the robot, and the Trial runner shows its state', async () => {
    await tid('endpoint-dds-gantry').check();
    await expect(tid('endpoint-error').count()).resolves.toBe(0);
    const t0 = performance.now();
    await tid('endpoint-add').click();
    await expect.poll(async () => (await ddsEntry())?.presence, { timeout: 90_000, interval: 250 }).toBe('present');
    const presentMs = performance.now() - t0;
    const e = (await ddsEntry())!;
    expect(e).toMatchObject({
      kind: 'robot',
      name: `G1 over DDS (lo, domain ${DOMAIN})`,
      url: null,
      executionDomain: 'real_robot',
    });
    expect(e.dds).toMatchObject({ interface: 'lo', domain: DOMAIN });
    expect(e.dds!.runnerUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+/);
    await expect(tid(`endpoint-runner-${e.id}`).textContent()).resolves.toBe(
      `runner ${e.dds!.runnerUrl!.replace(/^ws:\/\/|\/$/g, '')}`,
    );
    // The declaration is made again for every runner started.
    await expect(tid('endpoint-dds-gantry').isChecked()).resolves.toBe(false);

    // The runner's own state, through wbc_status.runner → safety.status → the Trial runner.
    await expect
      .poll(
        () =>
          tid('runner-lowcmd')
            .textContent()
            .catch(() => ''),
        { timeout: 20_000 },
      )
      .toMatch(/^LowCmd \d+ Hz$/);
    await expect(tid('runner-mode').textContent()).resolves.toBe('motors DAMPING');
    await expect(tid('runner-crc').textContent()).resolves.toBe('CRC errors 0');
    await expect(tid('runner-remote').textContent()).resolves.toBe('remote released');
    await expect(tid('runner-dds').textContent()).resolves.toBe(`DDS lo · ${DOMAIN}`);
    const hz = Number((await tid('runner-lowcmd').textContent())!.match(/(\d+) Hz/)![1]);
    expect(hz).toBeGreaterThan(300);
    expect(hz).toBeLessThan(600);
    const age = (await tid('runner-lowstate').textContent())!;
    expect(age).toMatch(/^lowstate \d+(\.\d)? ms$/);

    // Readable at 1366×768: the runner row lies inside the viewport's width, nothing cut off.
    const box = (await tid('runner-status').boundingBox())!;
    const panel = (await tid('trial-panel').boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(panel.x);
    expect(box.x + box.width).toBeLessThanOrEqual(panel.x + panel.width + 0.5);
    const overflow = await tid('runner-status').evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);

    await tid('runner-status').scrollIntoViewIfNeeded();
    await screenshot(page, 'g1-dds-connected');
    await tid('trial-panel').screenshot({ path: path.join(SCREENSHOT_DIR, 'g1-dds-trial-runner-panel.png') });
    await tid('connections-panel').screenshot({ path: path.join(SCREENSHOT_DIR, 'g1-dds-connections-panel.png') });
    console.log(
      `G1 over DDS: present ${presentMs.toFixed(0)} ms after Start; runner ${e.dds!.runnerUrl}; LowCmd ${hz} Hz; ${age}`,
    );
    expect(pageErrors).toEqual([]);
  }, 120_000);

  it('a second entry for the same interface and domain is refused by the services', async () => {
    await tid('endpoint-dds-interface').fill('lo');
    await tid('endpoint-dds-gantry').check();
    await tid('endpoint-add').click();
    await expect.poll(() => tid('endpoint-error').textContent(), { timeout: 10_000 }).toContain('already listed');
    expect((await entries()).filter((e) => e.dds).length).toBe(1);
  });

  it('removing the entry stops the runner (its port closes)', async () => {
    const e = (await ddsEntry())!;
    const port = Number(new URL(e.dds!.runnerUrl!).port);
    expect(await portOpen(port)).toBe(true);
    const t0 = performance.now();
    await tid(`endpoint-remove-${e.id}`).click();
    await expect.poll(async () => (await ddsEntry()) === undefined, { timeout: 15_000 }).toBe(true);
    await expect.poll(() => portOpen(port), { timeout: 10_000 }).toBe(false);
    console.log(`G1 over DDS: runner stopped ${(performance.now() - t0).toFixed(0)} ms after Remove`);
  }, 30_000);
});
