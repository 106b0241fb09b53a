import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCampaign } from '../../src/services/trace';
import { makePtyPair, type TestPtyPair } from '../helpers/ptyPair';
import { qualifyWavePair } from '../helpers/qualifiedWavePair';
import { startTogether } from '../helpers/startTogether';
import { startEmulatorProcess, type EmulatorProcess } from '../helpers/robotEmulatorProcess';
import { spawnMotionbench, trialCliArgs } from '../helpers/runCli';

// Sessions resume after a restart: `motionbench trial --yes` as a real child
// process is killed (SIGKILL) during its second real trial; the campaign then holds the
// calibration, the simulation episode, the first trial and the interrupted second one. Running
// the same command again resumes: no new calibration, no second simulation episode, trial 1
// kept, the interrupted trial (infrastructure_error after recovery, its frames kept) run again,
// then trial 3. The test plays the human beside the robot: it puts the robot back (emulator
// human_reset) whenever the CLI waits for a reset.
//
// Slow on purpose (a whole-system run): two `motionbench trial` processes (each a start-up of the
// command) run the simulation branch and four real trials of the 8.5 s clip at real time between
// them (trial 2 twice: killed, then run again).

let dir: string;
let pty: TestPtyPair;
let emu: EmulatorProcess;
let pairId: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mb-resume-'));
  // The robot (its own process, with the box on the pty) starts while the pair is qualified here:
  // neither needs the other. Both are kept for afterAll even when one fails.
  const robot = makePtyPair().then(async (p) => {
    pty = p;
    emu = await startEmulatorProcess(['--interlock', pty.devicePath]);
  });
  const qualified = qualifyWavePair(dir, { workers: 1 }).then((q) => {
    pairId = q.pairId;
  });
  await startTogether(qualified, robot);
}, 90_000);

afterAll(async () => {
  await emu?.stop();
  await pty?.dispose();
  await rm(dir, { recursive: true, force: true });
});

interface CliRun {
  child: ChildProcess;
  stderr: () => string;
  stdout: () => string;
  exited: Promise<number | null>;
}

/** Starts `motionbench trial … --yes --json`; resets the robot whenever the CLI waits for one. */
function startTrialCli(onLine?: (line: string, run: CliRun) => void): CliRun {
  const where = { campaign: dir, robot: emu.url, interlock: pty.consolePath, pair: pairId };
  const child = spawnMotionbench([...trialCliArgs(where), '--yes', '--json']);
  let err = '';
  let out = '';
  let partial = '';
  const run: CliRun = {
    child,
    stderr: () => err,
    stdout: () => out,
    exited: new Promise((r) => child.once('exit', (code) => r(code))),
  };
  child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => {
    const s = d.toString('utf8');
    err += s;
    partial += s;
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('[waiting_reset]'))
        void emu.control({ action: 'human_reset' }).catch((e: Error) => console.error(`human_reset: ${e.message}`));
      onLine?.(line, run);
    }
  });
  return run;
}

describe('a matched pair session resumes after the trial process is killed', () => {
  it('kill -9 during trial 2, run again: trial 1 kept, trial 2 re-run, trial 3 run; no second calibration or simulation', async () => {
    let killed = false;
    const first = startTrialCli((line, run) => {
      if (!killed && line.startsWith('[running] trial 2 of 3')) {
        killed = true;
        // Let the second trial record a couple of seconds, then kill the console without warning.
        setTimeout(() => run.child.kill('SIGKILL'), 2000);
      }
    });
    const code1 = await first.exited;
    expect(killed, first.stderr()).toBe(true);
    expect(code1).toBeNull(); // killed by the signal

    let store = await openCampaign(dir); // recovery marks the interrupted trial
    const parents = store.findParentTraces({}).filter((p) => p.identity.calibrationId !== null);
    expect(parents).toHaveLength(1);
    const matched = parents[0];
    const realBefore = store.findEpisodes({ parentTraceId: matched.id, executionDomain: 'real_robot' });
    expect(realBefore.map((e) => [e.rolloutIndex, e.outcome])).toEqual([
      [0, 'completed'],
      [1, 'infrastructure_error'],
    ]);
    const interrupted = realBefore[1];
    expect(interrupted.status).toBe('interrupted');
    expect(interrupted.frameCount).toBeGreaterThan(500); // its fsync'ed chunks were kept
    const calibrationsBefore = store.listEvents({ parentTraceId: matched.id, kind: 'calibration' }).length;
    store.close();

    const second = startTrialCli();
    const code2 = await second.exited;
    expect(code2, second.stderr()).toBe(0);
    const doc = JSON.parse(second.stdout()) as {
      parentTraceId: string;
      calibrationId: string;
      sim: { resumed: boolean };
      real: { trialIndex: number; outcome: string; resumed: boolean }[];
      remaining: number;
    };
    expect(doc.parentTraceId).toBe(matched.id);
    expect(doc.calibrationId).toBe(matched.identity.calibrationId);
    expect(doc.sim.resumed).toBe(true);
    expect(doc.remaining).toBe(0);
    expect(doc.real.map((t) => [t.trialIndex, t.resumed])).toEqual([
      [0, true],
      [1, false],
      [2, false],
    ]);
    for (const t of doc.real) expect(['completed', 'hard_failure']).toContain(t.outcome);
    // The operator sees the pair's history at the start of the resumed session: the simulation
    // branch and trial 1 from the first run, each once, before the trials of this one.
    const err2 = second.stderr();
    expect(err2.match(/^\(earlier session\) simulation episode /gm), err2).toHaveLength(1);
    expect(err2.match(/^\(earlier session\) real_robot episode .* \(trial 1\): /gm), err2).toHaveLength(1);
    expect(err2).not.toMatch(/^\(earlier session\) real_robot episode .* \(trial [23]\)/m);
    expect(err2.indexOf('(earlier session) simulation episode')).toBeLessThan(
      err2.search(/^real_robot episode .* \(trial 2\)/m),
    );

    store = await openCampaign(dir);
    try {
      expect(store.findEpisodes({ parentTraceId: matched.id, executionDomain: 'simulation' })).toHaveLength(1);
      const real = store.findEpisodes({ parentTraceId: matched.id, executionDomain: 'real_robot' });
      expect(real).toHaveLength(4); // 3 counted + the interrupted one, kept
      expect(store.listEvents({ parentTraceId: matched.id, kind: 'calibration' })).toHaveLength(calibrationsBefore);
    } finally {
      store.close();
    }
  }, 180_000);
});
