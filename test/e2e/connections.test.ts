import { describe, expect, it } from 'vitest';
import type { ConnectionInfo } from '../../src/api/contract';
import { startHostServer } from '../../src/services/host/hostServer';
import { screenshot } from '../helpers/browserHarness';
import { FakeBackend } from '../helpers/fakeBackend';
import { withConsole } from './consoleSession';

// The Connections panel (DESIGN §8) against the real host and API, with scripted backends behind
// the registry's factories: the embedded simulator listed first and started on demand, remote
// simulators added by URL (validated in the page and by the services), presence, measured rate,
// age and latency, problems, removal.

const made: FakeBackend[] = [];

const ui = withConsole(
  () =>
    startHostServer({
      port: 0,
      backends: {
        embeddedSimulator: () =>
          made[made.push(new FakeBackend({ id: 'embedded', presentAfterMs: 300, streamHz: 50 })) - 1],
        remoteSimulator: ({ id, url }) =>
          made[
            made.push(
              url.includes(':9999')
                ? new FakeBackend({ id, lostAfterMs: 600 })
                : new FakeBackend({
                    id,
                    presentAfterMs: 200,
                    streamHz: 100,
                    latencyMs: 3.2,
                    executionDomain: url.includes('robot') ? 'real_robot' : 'simulation',
                  }),
            ) - 1
          ],
      },
    }),
  { viewport: { width: 1600, height: 960 } },
);
const page = ui.page;
const pageErrors = ui.errors;

const entries = (): Promise<ConnectionInfo[]> => page.evaluate(() => window.__motionbench!.connections());
const entry = async (id: string): Promise<ConnectionInfo | undefined> => (await entries()).find((e) => e.id === id);

describe('console: Connections panel', () => {
  it('lists the embedded simulator first, not started until asked', async () => {
    await expect.poll(async () => (await entries()).map((e) => e.id)).toEqual(['embedded-sim']);
    const panel = page.locator('[data-testid=connections-panel]');
    await expect(panel.locator('.endpoint-name').first().textContent()).resolves.toBe('Embedded simulator (MuJoCo)');
    await expect(page.locator('[data-testid=endpoint-presence-embedded-sim]').textContent()).resolves.toBe(
      'disconnected',
    );
    expect(made).toHaveLength(0);

    await page.locator('[data-testid=endpoint-connect-embedded-sim]').click();
    await expect
      .poll(() => page.locator('[data-testid=endpoint-presence-embedded-sim]').textContent(), { timeout: 10_000 })
      .toBe('present');
    // 50 Hz measured over the last 2 s, shown at ~2 Hz.
    await expect.poll(async () => (await entry('embedded-sim'))?.rateHz ?? 0, { timeout: 10_000 }).toBeGreaterThan(45);
    const e = (await entry('embedded-sim'))!;
    expect(e.rateHz).toBeLessThan(55);
    expect(e.lastFrameAgeMs).toBeLessThan(600);
    await expect
      .poll(() => page.locator('[data-testid=endpoint-rate-embedded-sim]').textContent())
      .toMatch(/^(4[5-9]|5[0-4])\.\d Hz$/);
  });

  it('validates the URL as it is typed and refuses what the services refuse', async () => {
    const input = page.locator('[data-testid=endpoint-url]');
    const add = page.locator('[data-testid=endpoint-add]');
    const error = page.locator('[data-testid=endpoint-error]');
    await input.fill('http://10.0.0.2:8765');
    await expect(error.textContent()).resolves.toContain('use ws:// or wss:// (got http://)');
    await expect(add.isDisabled()).resolves.toBe(true);
    await expect(input.getAttribute('aria-invalid')).resolves.toBe('true');
    await input.fill('ws://');
    await expect(error.textContent()).resolves.toContain('not a URL');
    await input.fill('ws://operator:secret@10.0.0.2:8765');
    await expect(error.textContent()).resolves.toContain('credentials');
    await input.press('Enter'); // submitting anyway shows the reason and sends nothing
    await expect(error.textContent()).resolves.toContain('credentials');
    await screenshot(page, '30-connections-bad-url');
    expect((await entries()).length).toBe(1);
  });

  it('adds remote simulators by URL: presence, rate, latency; a dead one shows lost with its problem', async () => {
    const input = page.locator('[data-testid=endpoint-url]');
    await input.fill('ws://127.0.0.1:8765');
    await expect(page.locator('[data-testid=endpoint-error]').count()).resolves.toBe(0);
    await page.locator('[data-testid=endpoint-add]').click();
    await expect.poll(async () => (await entries()).map((e) => e.id)).toEqual(['embedded-sim', 'remote-1']);
    await expect(input.inputValue()).resolves.toBe('');
    await expect.poll(async () => (await entry('remote-1'))?.presence).toBe('present');
    await expect.poll(async () => (await entry('remote-1'))?.rateHz ?? 0, { timeout: 10_000 }).toBeGreaterThan(90);
    const r = (await entry('remote-1'))!;
    expect(r).toMatchObject({ url: 'ws://127.0.0.1:8765/', name: '127.0.0.1:8765', latencyMs: 3.2, removable: true });
    await expect.poll(() => page.locator('[data-testid=endpoint-remote-1]').textContent()).toContain('rtt 3 ms');

    // The same URL again: refused by the services, reason shown.
    await input.fill('ws://127.0.0.1:8765/');
    await page.locator('[data-testid=endpoint-add]').click();
    await expect.poll(() => page.locator('[data-testid=endpoint-error]').textContent()).toContain('already listed');

    await input.fill('ws://127.0.0.1:9999');
    await page.locator('[data-testid=endpoint-add]').click();
    await expect.poll(async () => (await entry('remote-2'))?.presence, { timeout: 10_000 }).toBe('lost');
    await expect
      .poll(() => page.locator('[data-testid=endpoint-problem-remote-2]').textContent())
      .toContain('nothing from');
    // A link that is lost now reads as an error, not as an earlier problem.
    await expect(page.locator('[data-testid=endpoint-problem-remote-2]').getAttribute('data-tone')).resolves.not.toBe(
      'past',
    );
    await expect(page.locator('[data-testid=endpoint-remote-2]').getAttribute('class')).resolves.toContain(
      'presence-lost',
    );
    await page.waitForTimeout(600);
    await screenshot(page, '31-connections-three-endpoints');
  });

  it('removes a remote entry and disconnects the embedded simulator; STOP stays visible', async () => {
    await page.locator('[data-testid=endpoint-remove-remote-2]').click();
    await expect.poll(async () => (await entries()).map((e) => e.id)).toEqual(['embedded-sim', 'remote-1']);
    expect(made.find((b) => b.id === 'remote-2')!.closed).toBe(true);
    await expect(page.locator('[data-testid=endpoint-remove-embedded-sim]').count()).resolves.toBe(0);
    await page.locator('[data-testid=endpoint-disconnect-embedded-sim]').click();
    await expect.poll(async () => (await entry('embedded-sim'))?.presence).toBe('disconnected');
    expect(made.find((b) => b.id === 'embedded')!.closed).toBe(true);
    await expect(page.locator('[data-testid=stop-button]').isVisible()).resolves.toBe(true);
  });

  it('logged no page errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
