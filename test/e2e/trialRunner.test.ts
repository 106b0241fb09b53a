import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import type { TrialJobStatus } from '../../src/api/contract';
import { SERVICES_NICE } from '../../src/services/console/consoleApiHandlers';
import { openCampaign } from '../../src/services/trace';
import { loadWorkload } from '../../src/services/workload';
import { G1_JOINT_NAMES } from '../../src/domain/robot/g1Joints';
import type { EmulatorControlAction } from '../../src/domain/robotEmulator/emulatorControl';
import { screenshot, SCREENSHOT_DIR } from '../helpers/browserHarness';
import { makePtyPair, type TestPtyPair } from '../helpers/ptyPair';
import { startEmulatorProcess } from '../helpers/robotEmulatorProcess';
import { withConsole, withTempDir } from './consoleSession';
import { hostApiCall, pressThroughTimingWarning, startHostCommand } from './e2eSupport';
import { assistQualifiedCampaign } from './projectFixtures';

// The Trial runner and Calibration panels against the real services and real
// parts — the robot emulator (`motionbench emulate-robot`, 500 Hz g1-bridge/1, MuJoCo G1, no
// motion capture) with the interlock box emulated on the far end of a socat PTY, `motionbench
// host` as its own process (embedded MuJoCo simulator, SQLite + MCAP campaign: the services'
// event loop carries the interlock heartbeats, so it is not shared with the test runner) and the
// console in Chromium. A campaign with one admitted pair is made first (runQualification: ub_wave_right ×
// builtin:assist=3000). Through the UI: connect the robot and the interlock (lights), capture a
// calibration (hold-still meter, residuals vs the clip start), accept it, start the matched pair,
// confirm the real trial, watch the live readings move, press the box's e-stop → the trial ends
// `estop`; resume the pair (its simulation branch listed from the first session, a human reset),
// confirm the next trial, press Space → the trial ends aborted_by_operator with its frames kept.

const CLIP = 'ub_wave_right';

/** The robot under test. Swap this one helper to run against another robot (an in-process emulator, a bridge). */
interface RobotUnderTest {
  url: string;
  /** The human beside the robot puts it back at its standing start pose. */
  humanReset(): Promise<void>;
  /** Someone presses the interlock box's e-stop, and later releases it. */
  pressEstop(): Promise<void>;
  releaseEstop(): Promise<void>;
  /** The robot publishes no lowstate for `ms` (a stalled link: TIMING's measured gap). */
  dropLowstate(ms: number): Promise<void>;
  /** The human puts the robot down standing at this pose (every G1 joint by name, rad). */
  place(jointPosRad: Record<string, number>): Promise<void>;
  stop(): Promise<void>;
}

async function startRobot(interlockDevice: string, dir: string): Promise<RobotUnderTest> {
  // A separate process, as on the real robot PC: its 500 Hz loop does not share an event loop
  // with the services (a blocked loop here would show as a stale link there). The default
  // perturbations, but quieter velocity encoders: with the default σ = 0.02 rad/s the largest of
  // 14,500 velocity samples in a 1 s window exceeds the 0.05 rad/s stillness limit, so a capture
  // could never pass.
  const profile = path.join(dir, 'robot-profile.json');
  fs.writeFileSync(
    profile,
    JSON.stringify({ format: 'motionbench-robot-emulator/1', encoderNoise: { qRad: 0.0005, dqRadS: 0.005 } }),
  );
  const emu = await startEmulatorProcess(['--interlock', interlockDevice, '--seed', '3', '--profile', profile]);
  // Each action is applied (or refused, which fails the test) before its promise resolves.
  const act = async (a: EmulatorControlAction): Promise<void> => {
    const r = await emu.control(a);
    if (!r.ok) throw new Error(`emulate-robot refused ${a.action}: ${r.message}`);
  };
  return {
    url: emu.url,
    humanReset: () => act({ action: 'human_reset' }),
    pressEstop: () => act({ action: 'estop' }),
    releaseEstop: () => act({ action: 'release_estop' }),
    dropLowstate: (ms) => act({ action: 'drop', ms }),
    place: (jointPosRad) => act({ action: 'place', joint_pos_rad: jointPosRad, root_quat_wxyz: [1, 0, 0, 0] }),
    stop: () => emu.stop(),
  };
}

let campaignDir: string;
let pty: TestPtyPair;
let robot: RobotUnderTest;
let server: { port: number; token: string };
const tmp = withTempDir('mb-trial-e2e-');
beforeAll(async () => {
  campaignDir = path.join(tmp(), 'campaign');
  const q = await assistQualifiedCampaign(campaignDir, CLIP);
  expect(q.admitted).toBe(1);
  pty = await makePtyPair();
  robot = await startRobot(pty.devicePath, tmp());
}, 120_000);
afterAll(async () => {
  await robot?.stop();
  await pty?.dispose();
});
const ui = withConsole(
  async () => {
    // The services' session above the others (SERVICES_NICE, as their main thread): while a real
    // trial runs, no batch runs in it (the simulation branch is over), and the heartbeat kicks and
    // the gate's watchdog are what it does. With a busy loop in the test's session, one run at
    // session nice 0 tripped `interlock_lost` once (118 ms); at -5, none did.
    const host = await startHostCommand([], SERVICES_NICE);
    const u = new URL(host.url);
    server = { port: Number(u.port), token: u.searchParams.get('token')! };
    return host;
  },
  { viewport: { width: 1600, height: 1100 }, eventWarnings: true },
);
const { page, tid, attr } = ui;
const pageErrors = ui.errors;

const apiCall = <T>(method: string, params: unknown): Promise<T> => hostApiCall<T>(server, method, params);

/** Makes TIMING read BAD for real: the robot publishes no lowstate for 250 ms (over the 100 ms trip). */
async function stallLowstate(): Promise<number> {
  await robot.dropLowstate(250);
  await expect.poll(() => attr('timing-health', 'data-label'), { timeout: 5_000 }).toBe('BAD');
  return Number(/robot lowstate: max gap (\d+) ms/.exec((await attr('timing-health', 'title')) ?? '')?.[1]);
}

/** The gap a timing warning names, ms (the lowstate's). */
async function warnedGapMs(testId: string): Promise<number> {
  const text = (await tid(`${testId}-figure`).textContent()) ?? '';
  expect(text).toMatch(
    /^TIMING BAD: robot lowstate max gap \d+ ms.* over the last 5 s \(the link and the interlock trip at 100 ms of silence\)$/,
  );
  return Number(/robot lowstate max gap (\d+) ms/.exec(text)![1]);
}

/**
 * Start while TIMING reads BAD: a warning with the measured gap, no job; Cancel leaves no job; the
 * second press's "Start anyway" starts the pair. While TIMING is not BAD the press starts at once.
 */
async function timingWarningAtStart(): Promise<void> {
  const lightGapMs = await stallLowstate();
  expect(lightGapMs).toBeGreaterThanOrEqual(100);
  await tid('trial-start').click();
  await tid('trial-start-timing').waitFor({ timeout: 2_000 });
  expect(await warnedGapMs('trial-start-timing')).toBeGreaterThanOrEqual(100);
  await tid('trial-start-timing').screenshot({ path: path.join(SCREENSHOT_DIR, 'trial-start-timing-warning.png') });
  await tid('trial-panel').screenshot({ path: path.join(SCREENSHOT_DIR, 'trial-start-timing-panel.png') });
  expect(await tid('trial-job').count(), 'the first press while BAD starts nothing').toBe(0);
  await tid('trial-start-timing-cancel').click();
  expect(await tid('trial-start-timing').count()).toBe(0);
  await new Promise((r) => setTimeout(r, 300));
  expect(await tid('trial-job').count(), 'Cancel starts nothing').toBe(0);
  // Asked again while BAD (stalled again: the screenshots above can outlast the 5 s window), then
  // started on the explicit "anyway".
  await stallLowstate();
  await tid('trial-start').click();
  await tid('trial-start-timing-go').click();
  console.log(`trial e2e: Start warned with TIMING BAD (light ${lightGapMs} ms), started on "Start anyway"`);
}

/** Confirm while TIMING reads BAD: a warning with the measured gap; the trial runs on "Confirm anyway". */
async function timingWarningAtConfirm(): Promise<void> {
  await stallLowstate();
  const promptId = (await apiCall<TrialJobStatus>('trial.status', {})).prompt?.promptId;
  await tid('trial-confirm').click();
  await tid('trial-confirm-timing').waitFor({ timeout: 2_000 });
  const gap = await warnedGapMs('trial-confirm-timing');
  expect(gap).toBeGreaterThanOrEqual(100);
  await tid('trial-prompt').screenshot({ path: path.join(SCREENSHOT_DIR, 'trial-confirm-timing-warning.png') });
  // Not answered yet: the same prompt is still waiting in the services.
  expect((await apiCall<TrialJobStatus>('trial.status', {})).prompt?.promptId).toBe(promptId);
  await tid('trial-confirm-timing-go').click();
  console.log(`trial e2e: Confirm warned with TIMING BAD (${gap} ms), confirmed on "Confirm anyway"`);
}

describe('console: Trial runner and Calibration', () => {
  it('connects the robot and the interlock: the lights follow', async () => {
    await tid('endpoint-kind').selectOption('robot');
    await tid('endpoint-url').fill(robot.url);
    await tid('endpoint-add').click();
    await expect.poll(() => tid('endpoint-presence-robot-1').textContent(), { timeout: 10_000 }).toBe('present');
    await expect.poll(() => attr('light-link', 'data-colour'), { timeout: 5_000 }).toBe('green');

    await tid('trial-dir').fill(campaignDir);
    await tid('trial-load').click();
    await tid(`trial-pair-${CLIP}`).waitFor();
    await expect(tid(`trial-pair-progress-${CLIP}`).textContent()).resolves.toBe('new');

    await tid('interlock-path').fill(pty.consolePath);
    await tid('interlock-open').click();
    await expect.poll(() => attr('light-interlock', 'data-label'), { timeout: 5_000 }).toBe('SAFE');
    expect(await attr('light-interlock', 'data-colour')).toBe('amber'); // green only when armed
    // A second box is refused with the reason, verbatim.
    await expect(apiCall('interlock.open', { path: pty.consolePath })).rejects.toThrow(/is open: close it first/);
  });

  it('flags a start pose far from the clip start: Accept asks first, Cancel stores nothing', async () => {
    // The human puts the robot down at the clip's first frame but with the left shoulder rolled 0.5 rad (28.6°) out.
    const clip = loadWorkload('core-v1').clips.find((c) => c.name === CLIP)!;
    const pose = Object.fromEntries(G1_JOINT_NAMES.map((n, j) => [n, clip.jointPosRad[j]]));
    pose.left_shoulder_roll_joint += 0.5;
    await robot.place(pose);
    await new Promise((r) => setTimeout(r, 1500)); // let it settle before the capture
    await tid('cal-capture').click();
    await tid('cal-result').waitFor({ timeout: 25_000 });
    expect(await attr('cal-verdict', 'data-within')).toBe('false');
    expect(await tid('cal-verdict').textContent()).toMatch(
      /^start pose OUTSIDE tolerance: \d+ joints? beyond 2\.9° of the clip's first frame: left_shoulder_roll 2[6-9]\.\d°/,
    );
    await tid('cal-accept').click();
    await tid('cal-accept-confirm').waitFor({ timeout: 2_000 });
    await tid('cal-panel').screenshot({ path: path.join(SCREENSHOT_DIR, 'trial-calibration-outside-tolerance.png') });
    await tid('cal-accept-cancel').click();
    expect(await tid('cal-accept-confirm').count()).toBe(0);
    expect(await tid('cal-accepted').count(), 'nothing accepted').toBe(0);
    // Put back at the start pose for the capture the pair uses.
    await robot.humanReset();
    await new Promise((r) => setTimeout(r, 1500));
  }, 60_000);

  it('captures a calibration while the robot holds still, shows the residuals vs the clip start, accepts it', async () => {
    await tid('cal-capture').click();
    // The Redo of the capture above: wait for this capture's own result.
    await expect.poll(() => attr('cal-verdict', 'data-within'), { timeout: 25_000 }).toBe('true');
    await tid('cal-result').waitFor({ timeout: 25_000 });
    expect(Number(await attr('cal-window-fill', 'data-fill'))).toBe(1);
    const rows = page.locator('[data-testid=cal-table] tbody tr');
    await expect(rows.count()).resolves.toBe(29);
    // Sorted by |Δ|: the first row's Δ is the summary's max.
    const firstDelta = (await rows.first().locator('td').nth(3).textContent())!.replace('°', '').replace('-', '');
    const max = (await tid('cal-max').textContent())!.replace('°', '');
    expect(Number(firstDelta)).toBeCloseTo(Number(max), 1);
    await tid('cal-panel').screenshot({ path: path.join(SCREENSHOT_DIR, 'trial-calibration-panel.png') });
    await tid('cal-accept').click(); // within tolerance: stored at once, no confirmation
    expect(await tid('cal-accept-confirm').count()).toBe(0);
    await expect.poll(() => tid('cal-accepted').textContent(), { timeout: 5_000 }).toMatch(/^cal-[0-9a-f]{24}$/);
    const calId = (await tid('cal-accepted').textContent())!;
    const store = await openCampaign(campaignDir, { readOnly: true });
    try {
      expect(store.getCalibration(calId)?.record.measured.jointPosRad).toHaveLength(29);
    } finally {
      store.close();
    }
  }, 40_000);

  it('runs the matched pair: sim branch, confirm, live readings move, e-stop → estop, resume, Space → aborted_by_operator', async () => {
    onTestFailed(async () => {
      await screenshot(page, 'trial-runner-failed').catch(() => undefined);
      console.log(
        `trial e2e failed; the job: ${JSON.stringify(await apiCall('trial.status', {}).catch((e: unknown) => String(e)))}`,
      );
    });
    const jobState = () => attr('trial-job', 'data-state');
    const outcomeOf = (index: number) =>
      page.locator(`[data-testid=trial-episode-real-${index}]`).getAttribute('data-outcome');
    let resets = 0;
    let trips = 0;
    /** Trials that reached the end of the clip before the test pressed their stop (a slow test, not a trip). */
    let lateStops = 0;
    let estopped: { index: number; ms: number } | null = null;
    let stopped: { index: number; stopMs: number } | null = null;
    // Why each session that did not reach Space ended (job state, phase, last trip, refusals,
    // error, real episodes' outcomes): printed in the assertion, which is what CI's tail shows.
    const endings: string[] = [];
    /** ms from seeing the trial live to pressing its stop (e-stop or Space), per trial that got that far. */
    const stopLag: number[] = [];
    let liveShots = false;
    let confirmWarned = false;
    let simRefused = false;
    const recordEnding = async (session: number, where: string) => {
      const st = await apiCall<TrialJobStatus>('trial.status', {}).catch((e: unknown) => String(e));
      if (typeof st === 'string') return void endings.push(`#${session} ${where}: status failed: ${st}`);
      const real = st.episodes
        .filter((e) => e.domain === 'real_robot' && !e.resumed)
        .map((e) => `${e.trialIndex}:${e.outcome}(${e.reason})`);
      endings.push(
        `#${session} ${where}: ${st.state}/${st.phase} "${st.phaseMessage}" trip=${JSON.stringify(st.lastTrip)} ` +
          `refusals=${JSON.stringify(st.refusals.map((r) => r.message))} error=${st.error} real=[${real.join(', ')}]`,
      );
    };
    // One real trial per session. The first trial that runs is ended by the box's e-stop, the next
    // by Space. A session a spontaneous gate trip ended (an interlock silence when the services'
    // process starves for CPU on this shared machine: the box e-stops, the robot goes limp, the
    // trial ends link_lost) is resumed with one more trial, as an operator would.
    for (let session = 1; stopped === null; session++) {
      // Up to 7 sessions: one CI run of this machine saw 4 sessions in a row tripped by interlock
      // silences of 100–139 ms (the services' loop starved). Each such trip is still a real,
      // recorded trip: the test only keeps going.
      expect(
        session,
        `sessions ended by trips before the e-stop and Space could be pressed; how each ended: ${endings.join(' | ')}; ms from live to each stop: ${stopLag.join(', ')}`,
      ).toBeLessThan(8);
      // The real trials earlier sessions recorded: a session a trip ended before its trial started
      // records none. The runner counts those (any outcome but infrastructure_error) as done and runs
      // the rest, so each session asks for exactly one more; with `session` trials after such a
      // session it would go on to a reset prompt for another trial instead of ending.
      const recorded =
        session === 1
          ? 0
          : new Set(
              (await apiCall<TrialJobStatus>('trial.status', {})).episodes
                .filter((e) => e.domain === 'real_robot' && e.outcome !== 'infrastructure_error')
                .map((e) => e.trialIndex),
            ).size;
      await tid('trial-count').fill(String(recorded + 1));
      if (session === 1) await timingWarningAtStart();
      else await pressThroughTimingWarning(page, 'trial-start', 'trial-start-timing');
      await expect.poll(jobState, { timeout: 5_000 }).toBe('running');
      // The simulation branch (first session), the fresh-calibration check, then the prompt. After
      // a trip (or a previous trial) the runner asks for a human reset first: the human puts the
      // robot back, the operator confirms it with a note.
      let live = false;
      while (!live) {
        await expect
          .poll(async () => (await tid('trial-prompt').count()) > 0 || (await jobState()) !== 'running', {
            timeout: 40_000,
          })
          .toBe(true);
        if ((await jobState()) !== 'running') break;
        const kind = await attr('trial-prompt', 'data-kind');
        if (kind === 'confirm_reset') {
          // A reset comes before the next trial after a real trial, a trip (one that ended a session
          // before its trial, or one during the simulation branch) or a refused start-pose check.
          const st = await apiCall<TrialJobStatus>('trial.status', {});
          const why = st.prompt?.reset;
          console.log(
            `trial e2e: reset asked before trial ${why?.trialIndex} (after ${why?.afterOutcome}, tripped ${why?.tripped}; last trip ${JSON.stringify(st.lastTrip)}; refusals ${JSON.stringify(st.refusals)})`,
          );
          expect(why?.trialIndex, 'the reset is for the next trial to run').toBe(recorded);
          expect(recorded > 0 || why?.tripped === true || st.refusals.length > 0, 'a reason for the reset').toBe(true);
          expect(++resets).toBeLessThan(9);
          await robot.humanReset();
          await new Promise((r) => setTimeout(r, 1500)); // let it settle before the fresh-calibration check
          await tid('trial-reset-note').fill('robot put back at its start pose by the e2e operator');
          await tid('trial-confirm').click(); // "Robot is reset": the robot does not move, no timing question
          await expect.poll(() => tid('trial-prompt').count(), { timeout: 5_000 }).toBe(0);
          continue;
        }
        expect(kind).toBe('confirm_trial');
        await expect(tid('trial-episode-sim').getAttribute('data-outcome')).resolves.toBe('completed');
        // A resumed session lists the simulation branch of the first one (it is not run again).
        await expect(tid('trial-episode-sim').getAttribute('data-resumed')).resolves.toBe(
          session === 1 ? 'false' : 'true',
        );
        if (recorded > 0) await expect(tid('trial-episode-real-0').getAttribute('data-resumed')).resolves.toBe('true');
        if (!simRefused) {
          // A simulation on this machine while the trial job runs (here at its prompt): refused by the
          // services, with the override named.
          const clipId = (await apiCall<TrialJobStatus>('trial.status', {})).clip!.id;
          await expect(
            apiCall('sim.run', { connectionId: 'embedded-sim', clipId, binding: 'builtin' }),
          ).rejects.toThrow(/is running .* on this machine: .* set allowDuringRealTrial to run anyway/);
          // The Sim trial panel: the override offered while the job runs; Run without it is refused, the reason shown.
          await tid('sim-allow-during-trial').waitFor({ timeout: 2_000 });
          expect(await tid('sim-allow-during-trial').isChecked()).toBe(false);
          await tid('sim-run').click();
          await expect
            .poll(() => tid('sim-error').textContent(), { timeout: 5_000 })
            .toMatch(
              /is running .* on this machine: a simulation here would take the cores its robot's timing needs; wait for its end, or tick "run anyway" above$/,
            );
          await tid('sim-panel').screenshot({ path: path.join(SCREENSHOT_DIR, 'trial-sim-refused.png') });
          simRefused = true;
        }
        if (!confirmWarned) {
          await timingWarningAtConfirm();
          confirmWarned = true;
        } else await pressThroughTimingWarning(page, 'trial-confirm', 'trial-confirm-timing');
        // Running: the interlock armed, readings arriving.
        await expect
          .poll(async () => (await attr('trial-job', 'data-phase')) === 'running' || (await jobState()) !== 'running', {
            timeout: 10_000,
          })
          .toBe(true);
        await expect
          .poll(async () => Number(await attr('trial-live', 'data-samples')) > 25 || (await jobState()) !== 'running', {
            timeout: 10_000,
          })
          .toBe(true);
        live = (await jobState()) === 'running' && (await attr('trial-job', 'data-phase')) === 'running';
        const liveAt = Date.now();
        // The trial's index, read while it runs: a trip can end the trial at any await below, and
        // the job's trialIndex is null once it has (the CI failure of af8897f read it after a trip).
        const index = live ? (await apiCall<TrialJobStatus>('trial.status', {})).trialIndex : null;
        if (index === null) {
          live = false;
          break;
        }
        // Both lights green while it runs; a light that is not is a trip ending the trial, so the
        // job must stop (this is no pass: the session is counted as tripped and another runs).
        const lightsGreen =
          (await attr('light-interlock', 'data-colour')) === 'green' &&
          (await attr('light-link', 'data-colour')) === 'green';
        if (!lightsGreen) {
          await expect.poll(jobState, { timeout: 5_000 }).not.toBe('running');
          live = false;
          break;
        }
        // The reading at full precision: its three displayed decimals can stay put over 20 frames.
        const r1 = await attr('trial-rmse', 'data-value');
        const s1 = Number(await attr('trial-live', 'data-samples'));
        await expect
          .poll(
            async () => Number(await attr('trial-live', 'data-samples')) > s1 + 20 || (await jobState()) !== 'running',
            { timeout: 5_000 },
          )
          .toBe(true);
        if ((await jobState()) !== 'running') break;
        const r2 = await attr('trial-rmse', 'data-value');
        expect(r1).toMatch(/^\d/);
        expect(r2).toMatch(/^\d/);
        await expect(tid('trial-rmse').textContent()).resolves.toMatch(/^\d+\.\d{3}$/);
        expect(r2).not.toBe(r1); // the readings move
        // Without motion capture MPJPE-l is unavailable (shown as —, never as 0) and the robot is drawn at the reference root.
        await expect(tid('trial-root-note').textContent()).resolves.toMatch(/drawn at the reference root/);
        await expect(tid('trial-mpjpe').textContent()).resolves.toBe('n/a');

        // The live screenshots, once: under software rendering on a loaded 2-core machine the two
        // take seconds, and with them before every stop an 8.5 s trial could end `completed` before
        // the e-stop or Space arrived in every session (the CI failure of b874050: 8 sessions).
        if (!liveShots) {
          const t0 = Date.now();
          await screenshot(page, 'trial-runner-live');
          const t1 = Date.now();
          await tid('trial-panel').screenshot({ path: path.join(SCREENSHOT_DIR, 'trial-runner-panel-live.png') });
          liveShots = true;
          console.log(`trial e2e: live screenshots took ${t1 - t0} ms (page) and ${Date.now() - t1} ms (panel)`);
        }
        if (estopped === null) {
          // E-STOP on the box: the trial ends `estop`, its frames kept; the light shows it.
          const at = Date.now();
          stopLag.push(at - liveAt);
          await robot.pressEstop();
          await expect.poll(() => outcomeOf(index), { timeout: 5_000 }).toMatch(/./);
          const outcome = await outcomeOf(index);
          if (outcome === 'estop') {
            estopped = { index, ms: Date.now() - at };
            await expect.poll(() => attr('light-interlock', 'data-label'), { timeout: 2_000 }).toBe('ESTOP');
            expect(await attr('light-interlock', 'data-colour')).toBe('red');
            // The trip is the console's interlock (estop) or the robot reporting the box's e-stop (backend_stop), whichever lands first.
            await expect(tid('trial-trip').textContent()).resolves.toMatch(/^TRIP (estop|backend_stop): .*→ estop$/);
            await screenshot(page, 'trial-runner-estop');
          } else if (outcome === 'completed') lateStops++;
          else trips++; // a spontaneous trip raced the e-stop
          await robot.releaseEstop();
          await expect.poll(() => attr('light-interlock', 'data-label'), { timeout: 2_000 }).toBe('SAFE');
          await expect.poll(jobState, { timeout: 10_000 }).not.toBe('running');
          break;
        }

        // STOP: Space, with focus anywhere.
        const stopAt = Date.now();
        stopLag.push(stopAt - liveAt);
        await page.keyboard.press('Space');
        await expect.poll(() => outcomeOf(index), { timeout: 5_000 }).toMatch(/./);
        const outcome = await outcomeOf(index);
        if (outcome === 'aborted_by_operator') stopped = { index, stopMs: Date.now() - stopAt };
        else if (outcome === 'completed') lateStops++;
        else trips++; // a trip raced the key
      }
      if (stopped === null && !live) {
        trips++;
        await expect.poll(jobState, { timeout: 10_000 }).not.toBe('running');
      }
      if (stopped === null) await recordEnding(session, live ? 'ended after going live' : 'ended before going live');
    }
    await expect.poll(jobState, { timeout: 10_000 }).toBe('stopped');
    const status = await apiCall<TrialJobStatus>('trial.status', {});
    const real = status.episodes.find((e) => e.domain === 'real_robot' && e.trialIndex === stopped!.index)!;
    expect(real.outcome).toBe('aborted_by_operator');
    expect(real.frames).toBeGreaterThan(100); // the frames recorded before the stop are kept
    expect(status.stopRequested?.reason).toBe('operator stop (key:Space)');
    // The e-stopped trial of the earlier session is listed with its outcome and frames, as history.
    expect(estopped, 'the e-stop ended a trial').not.toBeNull();
    const estop = status.episodes.find((e) => e.domain === 'real_robot' && e.trialIndex === estopped!.index)!;
    expect(estop).toMatchObject({ outcome: 'estop', resumed: true });
    expect(estop.frames).toBeGreaterThan(100);
    expect(status.episodes.find((e) => e.domain === 'simulation')).toMatchObject({
      outcome: 'completed',
      resumed: true,
    });
    await expect(tid('last-stop').textContent()).resolves.toContain('Space');
    console.log(
      `trial e2e: e-stop → estop shown in ${estopped?.ms} ms; Space → aborted_by_operator shown in ${stopped.stopMs} ms; ${real.frames} robot frames kept; ${resets} human reset(s), ${trips} spontaneous gate trip(s), ${lateStops} trial(s) completed before their stop${status.lastTrip ? ` (last: ${status.lastTrip.cause}: ${status.lastTrip.reason})` : ''}; ms from live to each stop: ${stopLag.join(', ')}; sessions: ${endings.join(' | ')}`,
    );
    await screenshot(page, 'trial-runner-stopped');
    await tid('trial-panel').screenshot({ path: path.join(SCREENSHOT_DIR, 'trial-runner-panel-stopped.png') });
    expect(simRefused, 'a sim.run was tried while a real trial ran').toBe(true);
    // One id per calibration: the Calibration panel names the record the pair was bound to (the
    // job's and the Gap review's id) beside the one accepted, and does not call it another pair's.
    expect(status.calibrationId).toMatch(/^cal-[0-9a-f]{24}$/);
    if (status.calibrationId !== (await tid('cal-accepted').textContent())) {
      await expect(tid('cal-bound').textContent()).resolves.toContain(status.calibrationId!);
      expect(await tid('cal-pair-calibration').count()).toBe(0);
    }
    await tid('cal-panel').screenshot({ path: path.join(SCREENSHOT_DIR, 'trial-calibration-after-pair.png') });
    expect(pageErrors).toEqual([]);
  }, 240_000);
});
