import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT_FATAL } from '../../src/services/safety/lastResort';
import { startHostileBridge, type HostileBridge } from '../helpers/hostileBridge';
import { REPO_ROOT } from '../helpers/sharedData';
import { sleep } from './bridgeTestClient';
import { nodeArgsFor } from '../helpers/tsChild';

// The contract: "the services have a last-resort handler that stops every robot before the
// process exits". A console process (lastResortChild.ts) holds a robot link to a robot-like
// server in another process and dies of an uncaught exception; the robot must have received
// stop and damp. Negative control: the same process without the handler leaves the robot
// without either.

let bridge: HostileBridge | null = null;
afterEach(async () => {
  await bridge?.stop();
  bridge = null;
});

async function crashChild(url: string, args: string[] = []): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(
    process.execPath,
    [...nodeArgsFor(path.join(REPO_ROOT, 'test/integration/lastResortChild.ts')), url, ...args],
    { cwd: REPO_ROOT },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += String(d)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { code, stderr };
}

describe('last-resort handler', () => {
  it('an uncaught exception sends stop and damp to every robot link, then exits 70', async () => {
    bridge = await startHostileBridge(500);
    const { code, stderr } = await crashChild(bridge.url);
    await sleep(200);
    expect(code, stderr).toBe(EXIT_FATAL);
    expect(stderr).toMatch(/fatal uncaught exception: TypeError: chs is not iterable/);
    expect(stderr).toMatch(/last resort: stop and damp sent to 1 link\(s\): robot at ws:/);
    const got = bridge.commands.filter((c) => c.command === 'stop' || c.command === 'damp');
    expect(got.map((c) => c.command)).toEqual(['stop', 'damp']);
    expect(got[0].reason).toMatch(/console process failed \(uncaught exception\): chs is not iterable/);
  });

  it('negative control: without the handler the process dies and the robot hears nothing', async () => {
    bridge = await startHostileBridge(500);
    const { code } = await crashChild(bridge.url, ['--no-last-resort']);
    await sleep(200);
    expect(code).not.toBe(0);
    expect(code).not.toBe(EXIT_FATAL);
    expect(bridge.commands.filter((c) => c.command === 'stop' || c.command === 'damp')).toEqual([]);
  });
});
