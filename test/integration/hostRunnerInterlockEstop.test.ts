// The console's own wiring of the interlock e-stop to the runner it starts, through the console's
// API as the Trial runner panel calls it (test/helpers/g1ConsoleRig.ts): the console's services in
// their own process (test/helpers/hostChild.ts, default backends), the interlock box emulated on a
// real socat pty (its own process), "G1 over DDS" (the services start `motionbench g1-runner` on the
// console's e-stop socket; their interlock keeper writes to it), the emulated G1
// (`emulate-robot --dds --gantry`, its own process) on real Cyclone DDS over loopback, and a matched
// pair of a released policy (BeyondMimic Jump_wose, qualified by `motionbench qualify`). Once the
// runner tracks a real trial, the services' process is SIGSTOPped, and 300 ms later the box's e-stop
// is pressed: the first damping LowCmd_ on the wire (read here by a G1DdsRobot end, stamped at DDS
// receipt) must come within 100 ms of the press. Negative control: the same services given no
// runner e-stop socket (MB_HOST_NO_RUNNER_ESTOP=1) → no damping LowCmd_ within 500 ms of the press.
//
// Slow on purpose (a whole-system run): each press is a real trial of the policy on the emulated G1
// at real time, after the robot is stood up and has settled on its gantry. One rig per
// configuration (with and without the runner's socket) carries both the wiring check and the
// presses: the wiring is read from the same services' log the presses then rely on. The two rigs
// run one after the other (one DDS domain, one runner at a time); the qualification runs while the
// first rig starts.
import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrialQueueDto } from '../../src/api/contract';
import { DAMPING_KD } from '../../src/domain/g1Runner/g1RunnerSafety';
import { G1_NUM_JOINTS } from '../../src/domain/robot/g1Joints';
import type { LowCmd } from '../../src/domain/robotLink/unitreeHgWire';
import { G1DdsRobot } from '../../src/services/dds/g1DdsEndpoints';
import { setAutogroupNice } from '../../src/services/os/threadPriority';
import { G1ConsoleRig, sleep } from '../helpers/g1ConsoleRig';
import { motionbench } from '../helpers/runCli';
import { sharedData } from '../helpers/sharedData';
import { claimDdsDomains } from '../helpers/ddsDomain';

const DOMAIN = claimDdsDomains();
/** The issue's budget: interlock e-stop → damping on the wire. */
const LIMIT_MS = 100;
/** The services are stopped this long before the press (below the runner's 1 s console-silent hold). */
const STOPPED_BEFORE_PRESS_MS = 300;
/** The negative control waits this long for a damping LowCmd_ that must not come. */
const NEGATIVE_WINDOW_MS = 500;

let dir: string;
let base: string;
let reader: G1DdsRobot;
let dampingReceipts: bigint[] = [];
/** DDS receipt of the newest LowCmd_ that was not damping (holding, ramping or tracking). */
let lastStiffNs: bigint | null = null;

function isDamping(c: LowCmd): boolean {
  for (let j = 0; j < G1_NUM_JOINTS; j++) if (c.kp[j] !== 0 || Math.abs(c.kd[j] - DAMPING_KD) > 1e-6) return false;
  return true;
}

function procState(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

/** The rig started with `hostEnv` for a configuration, and when its start returned. */
interface StartedRig {
  rig: G1ConsoleRig;
  startedAtMs: number;
}

function startRig(withSocket: boolean, log?: (l: string) => void): Promise<StartedRig> {
  return G1ConsoleRig.start({
    domainId: DOMAIN,
    host: 'child',
    hostEnv: withSocket ? {} : { MB_HOST_NO_RUNNER_ESTOP: '1' },
    ...(log && { log }),
  }).then((rig) => ({ rig, startedAtMs: Date.now() }));
}

/** The first configuration's rig, started while the pair is qualified. */
let socketRig: Promise<StartedRig> | null = null;

beforeAll(async () => {
  setAutogroupNice(-10);
  dir = await mkdtemp(path.join(tmpdir(), 'mb-host-estop-'));
  base = path.join(dir, 'base');
  socketRig = startRig(true, (l) => console.log(l));
  // Settled before the qualification's outcome is asserted: a failed start is reported by the
  // describe that uses it, never left unhandled.
  socketRig.catch(() => {});
  const q = await motionbench(
    'qualify',
    '--binding',
    sharedData('policies/beyondmimic/Jump_wose.onnx'),
    '--campaign',
    base,
  );
  expect(q.code, q.stderr).toBe(0);
  reader = new G1DdsRobot({ interfaceName: 'lo', domainId: DOMAIN });
  reader.onMessage((r) => {
    if (!isDamping(r.message)) {
      lastStiffNs = r.receiptNs;
      return;
    }
    dampingReceipts.push(r.receiptNs);
    if (dampingReceipts.length > 100_000) dampingReceipts = dampingReceipts.slice(-1000);
  });
}, 300_000);

afterAll(async () => {
  // A describe that never ran (a filtered run) leaves the first rig to be closed here.
  await socketRig?.then((r) => r.rig.close()).catch(() => {});
  reader?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Presses: ms from each press to the first damping LowCmd_ on the wire, or null within the window. */
async function estopsWhileServicesStopped(
  rig: G1ConsoleRig,
  withSocket: boolean,
  presses: number,
): Promise<(number | null)[]> {
  const out: (number | null)[] = [];
  const stiffAtPress: boolean[] = [];
  const campaign = path.join(dir, `trials-${withSocket ? 'socket' : 'none'}`);
  fs.cpSync(base, campaign, { recursive: true });
  const pair = (await rig.api.call<TrialQueueDto>('trial.queue', { campaignDir: campaign })).pairs.find(
    (p) => p.admitted,
  )!;
  expect(pair).toBeDefined();
  for (let i = 0, attempt = 0; i < presses;) {
    await rig.placeOnGantry();
    const r = await rig.runPair(campaign, pair.pairId, presses, async () => {
      await sleep(300);
      const pid = rig.host.pid!;
      process.kill(pid, 'SIGSTOP');
      try {
        while (procState(pid) !== 'T') await sleep(2);
        await sleep(STOPPED_BEFORE_PRESS_MS);
        const pressNs = process.hrtime.bigint();
        // The runner was still commanding stiff gains at the press (not damped by anything else).
        stiffAtPress.push(lastStiffNs !== null && pressNs - lastStiffNs < 20_000_000n);
        rig.box.pressEstop();
        const deadline = Date.now() + NEGATIVE_WINDOW_MS;
        const first = (): bigint | undefined => dampingReceipts.find((t) => t >= pressNs);
        while (Date.now() < deadline && first() === undefined) await sleep(2);
        expect(procState(pid), 'the services ran during the window').toBe('T');
        const t = first();
        out.push(t === undefined ? null : Number(t - pressNs) / 1e6);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
    });
    const last = r.trials.at(-1);
    if (out.length < i + 1) {
      const st = r.status;
      // A job that ended before motion on a loaded machine (the interlock not arming in time):
      // started again, at most twice per press.
      if (r.trials.length === 0 && attempt++ < 2) {
        console.log(`press ${i + 1}: the job ended before a real trial (${st.phaseMessage}); started again`);
        await rig.rearm();
        continue;
      }
      throw new Error(
        `the trial never reached tracking: job ${st.state}, phase ${st.phase} (${st.phaseMessage}); refusals ${JSON.stringify(st.refusals)}; last trip ${JSON.stringify(st.lastTrip)}; error ${st.error}; episodes ${JSON.stringify(st.episodes)}; services: ${rig.hostErr.slice(-1500)}`,
      );
    }
    console.log(
      `${withSocket ? 'socket' : 'no socket'} press ${i + 1}: damping ${out.at(-1) === null ? `not seen within ${NEGATIVE_WINDOW_MS} ms` : `${out.at(-1)!.toFixed(1)} ms`} after the press; trial ${last?.outcome} (${last?.reason})`,
    );
    expect(out).toHaveLength(i + 1);
    expect(stiffAtPress[i], 'the runner was damping already when the e-stop was pressed').toBe(true);
    await rig.rearm();
    i++;
    attempt = 0;
  }
  return out;
}

/** The services' log once their keeper has reached the runner's socket, and the runner's own line. */
const KEEPER_CONNECTED = /runner e-stop socket \S+runner-estop\.sock: connected/;
const RUNNER_LISTENING = /g1-runner: listening for the interlock keeper's e-stops on \S+runner-estop\.sock/;

/** How long after its start a rig's log is read for the wiring (the negative control waits it out). */
const WIRING_WINDOW_MS = 10_000;

async function wiringSeen({ rig, startedAtMs }: StartedRig): Promise<{ keeper: boolean; runner: boolean }> {
  const end = startedAtMs + WIRING_WINDOW_MS;
  while (Date.now() < end && !(KEEPER_CONNECTED.test(rig.hostErr) && RUNNER_LISTENING.test(rig.hostErr)))
    await sleep(50);
  return { keeper: KEEPER_CONNECTED.test(rig.hostErr), runner: RUNNER_LISTENING.test(rig.hostErr) };
}

describe('console host with the runner e-stop socket: the keeper reaches the runner, the e-stop damps', () => {
  let started: StartedRig;
  beforeAll(async () => {
    started = await socketRig!;
  }, 300_000);
  afterAll(async () => {
    socketRig = null;
    await started?.rig.close();
  });

  it('the runner listens on the console’s e-stop socket and the keeper of the opened box connects to it', async () => {
    expect(await wiringSeen(started)).toEqual({ keeper: true, runner: true });
  }, 300_000);

  it('the services give their runner the console’s e-stop socket: damping within 100 ms of each press (services SIGSTOPped)', async () => {
    const figures = await estopsWhileServicesStopped(started.rig, true, 2);
    console.log(
      `interlock e-stop → damping LowCmd_ on the wire (services SIGSTOPped): ${figures.map((f) => f?.toFixed(1)).join(', ')} ms`,
    );
    for (const f of figures) {
      expect(f, 'no damping LowCmd_ after the press').not.toBeNull();
      expect(f!).toBeLessThanOrEqual(LIMIT_MS);
    }
  }, 900_000);
});

describe('negative control: console host without a runner e-stop socket', () => {
  let started: StartedRig;
  beforeAll(async () => {
    started = await startRig(false, (l) => console.log(l));
  }, 300_000);
  afterAll(async () => {
    await started?.rig.close();
  });

  it('the runner listens for no keeper', async () => {
    expect(await wiringSeen(started)).toEqual({ keeper: false, runner: false });
  }, 300_000);

  it('no damping within 500 ms of the press (services SIGSTOPped)', async () => {
    expect(await estopsWhileServicesStopped(started.rig, false, 1)).toEqual([null]);
  }, 600_000);
});
