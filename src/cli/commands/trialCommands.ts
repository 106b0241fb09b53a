import readline from 'node:readline';
import { MB_METRICS_1 } from '../../domain/metrics';
import { READING_INFO } from '../../domain/metrics/readings';
import { campaignMinimalClipSet } from '../../services/analysis/campaignAnalysisReader';
import type { EpisodeMetrics } from '../../domain/metrics/readings';
import { sessionBadge } from '../../domain/trial/sessionBadge';
import { loadRobotProfile, DEFAULT_MODEL_FILE } from '../../services/robot/loadRobotProfile';
import { EmbeddedSimulator } from '../../services/sim/embeddedSimulator';
import { openCampaign } from '../../services/trace';
import {
  captureRobotCalibration,
  listAdmittedPairs,
  runMatchedPair,
  type OperatorPrompts,
  type TrialProgressEvent,
} from '../../services/trial';
import { openInterlockFeed } from '../../services/trial/interlockFeed';
import { openTrialRobot } from '../../services/trial/openTrialRobot';
import { clipForPairId } from '../../services/trial/pairClip';
import { loadWorkload } from '../../services/workload';
import { defineCommand, integerOption, numberOption, readingOption, shareOption } from '../cliOptions';
import { onSignal, printJson, promptStreams, UsageError, type CliIo } from '../cliSupport';
import { trialNumber } from '../../domain/trial/trialNumber';

// `motionbench calibrate` and `motionbench trial`: the robot's start-state
// calibration and the matched sim/real pair, from a terminal. The work is src/services/trial; this
// file parses options, connects the robot and the interlock, and asks the operator on the terminal.

const calibrateUsage = `usage: motionbench calibrate --robot <ws-url> --campaign <dir> [--pair <id>] [--robot-unit NAME]
                             [--timeout S] [--workload <core-v1|dir>] [--model <mjcf>] [--json]
  Captures the robot's start state (DESIGN §3 CalibrationRecord): waits until the robot has been still
  for the stillness window (joint velocities, gyro and joint drift under their limits), averages the
  joint angles and the IMU attitude (and the root pose when the robot has motion capture), and stores
  the record in the campaign. With --pair, the record is bound to that pair's clip: the simulator
  initial state and the residuals vs the clip's first frame are computed and printed.
  A capture that never gets a still window is refused with the reasons (exit 1).
  --robot <ws-url>     the robot's g1-bridge/1 endpoint (e.g. motionbench emulate-robot)
  --campaign <dir>     the campaign folder (must exist: run motionbench qualify first)
  --pair <id>          an admitted pair (its parent trace id or a unique prefix)
  --robot-unit NAME    the robot's serial or inventory name (default: the bridge's backend id)
  --timeout S          give up after S seconds without a still window (default 20)
  --json               one document: calibration_id, record, residuals, stillness`;

const trialUsage = `usage: motionbench trial --campaign <dir> --robot <ws-url> --interlock <device> --pair <id>
                         [--trials 3] [--yes] [--calibration <id>] [--robot-unit NAME]
                         [--interlock-runner <socket>]
                         [--workload <core-v1|dir>] [--model <mjcf>] [--json]
       motionbench trial --campaign <dir> --list [--minimal-set [--reading <name>] [--share S]] [--json]
  Runs a matched sim/real pair (docs/TRIALS.md): the pair's calibration (captured now unless
  --calibration names a stored one), the simulation branch from it, then the real-robot trials, each
  behind a human-gated reset, a fresh start-pose check against the calibration, your confirmation,
  the armed interlock and the safety gate. Every trip (e-stop, interlock lost, link lost, Ctrl+C)
  stops the robot at once and ends the trial with its outcome; frames recorded so far are kept.
  Run it again to resume: finished trials count, the rest are run.
  --interlock <device> the interlock box's serial device (e.g. /dev/ttyUSB0 or a pty)
  --interlock-runner S a g1-runner's e-stop socket (g1-runner --interlock-trips S): the interlock
                       keeper sends the box's e-stops there itself (docs/G1_RUNNER.md)
  --trials N           real-robot trials (default 3)
  --yes                confirm each trial and each reset without asking (a trip still ends the
                       session: it never resumes by itself)
  --list               list the campaign's decided pairs with their matched progress
  --minimal-set        with --list: only the pairs of the minimal hardware clip set (docs/ANALYSIS.md:
                       greedy U = Gini·(1 − R²) over the bindings' simulation scores of --reading,
                       default mpjpe_l_mm, reaching --share of the full set's utility, default 0.8),
                       in the order of the selection path
  --json               one document with the pair, the calibration, every episode's outcome and the
                       session's badge (session: text and tone, as the Trial runner shows it)
  Exit status (docs/TRIALS.md):
    0  every real trial of the pair ran to its end: completed, or hard_failure (the controller
       fell: a measured result, recorded with its metrics)
    1  bad input, a refusal or a failure
    2  bad usage
    3  the session stopped early (a trip, an unconfirmed trial): trials remain; run again to resume
    4  every trial ran, but one was cut short (estop, link_lost, intervention,
       aborted_by_operator): the trials are recorded, none remain`;

/** The value options both commands take. */
const SHARED_STRINGS = ['robot', 'campaign', 'pair', 'robot-unit', 'workload', 'model'] as const;

const mm = (m: EpisodeMetrics | null): string =>
  m && m.mpjpeLMm.available ? `${(m.mpjpeLMm.value / 10).toFixed(2)} cm` : 'n/a';
const rad = (m: EpisodeMetrics | null): string =>
  m && m.jointPosRmseRad.available ? `${m.jointPosRmseRad.value.toFixed(4)} rad` : 'n/a';

export const calibrateCommand = defineCommand({
  name: 'calibrate',
  summary: 'capture the robot’s start-state calibration into a campaign',
  usage: calibrateUsage,
  strings: [...SHARED_STRINGS, 'timeout'],
  flags: ['json'],
  async run(values, io, { required }) {
    const url = required('robot', 'blank');
    const dir = required('campaign', 'blank');
    const timeoutS = numberOption(values.timeout, 'timeout', (v) => v > 0 && v <= 3600, 'seconds in (0, 3600]') ?? 20;
    const profile = loadRobotProfile(values.model ?? DEFAULT_MODEL_FILE);
    const store = await openCampaign(dir);
    try {
      const clip = values.pair
        ? clipForPairId(store, values.pair, values.workload ? loadWorkload(values.workload, { profile }) : undefined)
        : null;
      const link = await openTrialRobot(url, { robotUnit: values['robot-unit'], log: (l) => io.stderr(`${l}\n`) });
      try {
        io.stderr(`calibrate: hold the robot still (${link.backend.name})…\n`);
        let lastLine = 0;
        const r = await captureRobotCalibration({
          link,
          profile,
          clip: clip?.clip ?? null,
          timeoutMs: timeoutS * 1000,
          onProgress: (p) => {
            const now = performance.now();
            if (now - lastLine < 1000) return;
            lastLine = now;
            io.stderr(
              `  ${p.still ? 'still' : 'not still'}: window ${p.windowFilledS.toFixed(2)}/${p.windowNeededS} s${p.reasons[0] ? ` — ${p.reasons[0].message}` : ''}\n`,
            );
          },
        });
        if (!r.ok) {
          store.recordEvent({ kind: 'refusal', reason: r.message, detail: { reasons: r.reasons } });
          if (values.json) printJson(io, { ok: false, message: r.message, reasons: r.reasons, stats: r.stats });
          io.stderr(`motionbench: ${r.message}\n`);
          return 1;
        }
        const stored = store.putCalibration(r.record);
        store.recordEvent({
          kind: 'calibration',
          reason: `captured ${stored.id}`,
          detail: { calibration_id: stored.id, robot_unit: r.record.robotUnit, clip_id: r.record.clipId },
        });
        const res = r.residualsVsClip;
        if (values.json) {
          printJson(io, {
            ok: true,
            calibration_id: stored.id,
            record: r.record,
            residuals_vs_clip_start: res,
            stillness: r.stats,
          });
        } else {
          io.stdout(
            `calibration ${stored.id} (robot ${r.record.robotUnit}, ${r.stats.frames} frames at ${r.stats.rateHz.toFixed(0)} Hz over ${r.stats.spanS.toFixed(2)} s)\n`,
          );
          if (res) {
            io.stdout(
              `  vs the first frame of ${clip!.clip.name}: max |Δq| ${res.maxAbsJointRad.toFixed(4)} rad (${res.maxAbsJoint}), rms ${res.rmsJointRad.toFixed(4)} rad, roll ${res.rollRad.toFixed(4)} rad, pitch ${res.pitchRad.toFixed(4)} rad\n`,
            );
          }
        }
        return 0;
      } finally {
        await link.close();
      }
    } finally {
      store.close();
    }
  },
});

/** Terminal prompts, or --yes. */
function terminalPrompts(io: CliIo, yes: boolean): OperatorPrompts & { close(): void } {
  let rl: readline.Interface | null = null;
  const ask = (q: string): Promise<string> => {
    rl ??= readline.createInterface(promptStreams(io));
    return new Promise((resolve) => rl!.question(q, resolve));
  };
  return {
    async confirmTrial(info) {
      const line = `trial ${trialNumber(info.trialIndex)}/${info.trials}: ${info.clipName} × ${info.bindingName}, run ${info.runId}; start pose within ${info.calibrationCheck.maxJointDiffRad.toFixed(3)} rad of the calibration`;
      if (yes) {
        io.stderr(`${line}: confirmed by --yes\n`);
        return true;
      }
      return (await ask(`${line}\n  type "yes" to arm and start: `)).trim().toLowerCase() === 'yes';
    },
    async confirmReset(info) {
      if (yes) {
        // A trip is never confirmed by a flag: a human must look at the robot first.
        if (info.tripped) return null;
        io.stderr(
          `trial ${trialNumber(info.trialIndex)}: waiting for the robot at its start pose (reset confirmed by --yes; the start-pose check follows)\n`,
        );
        return 'reset confirmed by --yes; start pose checked against the calibration';
      }
      const a = (
        await ask(
          `put the robot back at its start pose for trial ${trialNumber(info.trialIndex)}${info.tripped ? ' (after a TRIP: check the robot first)' : ''}, then type a note (or "no" to stop): `,
        )
      ).trim();
      return a === '' || a.toLowerCase() === 'no' ? null : a;
    },
    close: () => rl?.close(),
  };
}

function reportProgress(io: CliIo): (e: TrialProgressEvent) => void {
  let lastLive = 0;
  return (e) => {
    switch (e.type) {
      case 'phase':
        io.stderr(`[${e.phase}] ${e.message}\n`);
        break;
      case 'refusal':
        io.stderr(`REFUSED${e.runId ? ` (${e.runId})` : ''}: ${e.reasons.map((r) => r.message).join('; ')}\n`);
        break;
      case 'trip':
        io.stderr(`TRIP ${e.trip.cause}: ${e.trip.reason} → ${e.trip.outcome}\n`);
        break;
      case 'episode_end':
        io.stderr(
          `${e.resumed ? '(earlier session) ' : ''}${e.domain} episode ${e.runId}${e.trialIndex !== null ? ` (trial ${trialNumber(e.trialIndex)})` : ''}: ${e.outcome} after ${e.frames} frames — ${e.reason}\n`,
        );
        break;
      case 'live': {
        const now = performance.now();
        if (now - lastLive < 1000 && !e.failed) return;
        lastLive = now;
        io.stderr(
          `  t ${e.timeS.toFixed(1)} s  MPJPE-l ${e.mpjpeLMm === null ? 'n/a' : `${(e.mpjpeLMm / 10).toFixed(1)} cm`}  joint RMSE ${e.jointRmseRad === null ? 'n/a' : `${e.jointRmseRad.toFixed(3)} rad`}${e.failed ? `  FAILED: ${e.failure}` : ''}\n`,
        );
        break;
      }
      case 'stillness':
        break;
    }
  };
}

/**
 * Exit status 0 only when every real trial ran to its end (completed, or hard_failure: the
 * controller's own result, which the metrics describe); 3 when trials remain; 4 when one was cut
 * short by a stop (e-stop, link loss, intervention, operator) — its numbers do not describe the
 * controller, and a script must not read the session as clean.
 */
function trialExitCode(
  r: {
    stoppedEarly: string | null;
    remaining: number;
    real: { trialIndex: number; outcome: string; reason: string }[];
  },
  io: CliIo,
): number {
  if (r.stoppedEarly || r.remaining > 0 || r.real.length === 0) return 3;
  const notCompleted = r.real.filter((t) => t.outcome !== 'completed' && t.outcome !== 'hard_failure');
  if (notCompleted.length === 0) return 0;
  io.stderr(
    `motionbench: not every real trial ran to its end: ${notCompleted.map((t) => `trial ${trialNumber(t.trialIndex)} ${t.outcome} (${t.reason})`).join('; ')}\n`,
  );
  return 4;
}

export const trialCommand = defineCommand({
  name: 'trial',
  summary: 'run a matched sim/real pair: calibration, simulation branch, real-robot trials',
  usage: trialUsage,
  strings: [...SHARED_STRINGS, 'interlock', 'interlock-runner', 'trials', 'calibration', 'reading', 'share'],
  flags: ['json', 'yes', 'list', 'minimal-set'],
  async run(values, io, { required }) {
    const dir = required('campaign', 'blank');
    const trials = integerOption(values.trials, 'trials', 1, 20) ?? 3;
    if (!values.list && (values['minimal-set'] || values.reading !== undefined || values.share !== undefined))
      throw new UsageError('--minimal-set, --reading and --share go with --list');
    if (!values['minimal-set'] && (values.reading !== undefined || values.share !== undefined))
      throw new UsageError('--reading and --share choose the minimal set: give --minimal-set');
    if (values.list) {
      const store = await openCampaign(dir);
      try {
        let pairs = listAdmittedPairs(store, trials);
        if (values['minimal-set']) {
          const reading = readingOption(values.reading);
          const share = shareOption(values.share);
          const sel = campaignMinimalClipSet(store, { reading, share });
          if (!sel.available) throw new RangeError(`no minimal clip set for this campaign: ${sel.reason}`);
          const order = new Map(sel.minimalSet.map((c, i) => [c, i]));
          pairs = pairs
            .filter((p) => order.has(p.clipId))
            .sort((a, b) => order.get(a.clipId)! - order.get(b.clipId)! || a.bindingName.localeCompare(b.bindingName));
          io.stderr(
            `minimal set: ${sel.minimalSet.length} of ${sel.path.length} clips, ${(100 * sel.minimalShare).toFixed(1)} % of the full set's utility (${READING_INFO[reading].label}, target ${(100 * share).toFixed(0)} %)\n`,
          );
        }
        if (values.json) printJson(io, { pairs });
        else
          for (const p of pairs) {
            const m = p.matched;
            io.stdout(
              `${p.pairId}  ${p.admitted ? 'admitted' : 'rejected'}  ${p.clipName} × ${p.bindingName}${m ? `  matched: sim ${m.simDone ? 'done' : 'pending'}, real ${m.realDone} counted of ${trials} wanted${m.realDone > trials ? ` (${m.realDone - trials} more than wanted)` : ''}` : ''}\n`,
            );
          }
        return 0;
      } finally {
        store.close();
      }
    }
    const url = required('robot', 'blank');
    const device = required('interlock', 'blank');
    const pairId = required('pair', 'blank');
    const modelFile = values.model ?? DEFAULT_MODEL_FILE;
    const profile = loadRobotProfile(modelFile);
    const store = await openCampaign(dir);
    const cleanups: (() => Promise<unknown> | unknown)[] = [() => store.close()];
    const abort = new AbortController();
    const onSigint = (): void => {
      io.stderr('\nSTOP (Ctrl+C): stopping the robot…\n');
      abort.abort('operator');
    };
    const offSigint = onSignal(io, 'SIGINT', onSigint);
    const prompts = terminalPrompts(io, values.yes === true);
    cleanups.unshift(() => prompts.close());
    try {
      // A bad --pair fails before anything connects; the clip (and its workload, regenerated for
      // core-v1) is loaded before the interlock opens: its heartbeats must not wait for that work.
      const { workload } = clipForPairId(
        store,
        pairId,
        values.workload ? loadWorkload(values.workload, { profile }) : undefined,
      );
      const log = (l: string): void => io.stderr(`${l}\n`);
      const sim = new EmbeddedSimulator({
        modelFile,
        workers: 1,
        id: 'trial-sim',
        name: 'embedded simulator (matched pair)',
      });
      cleanups.unshift(() => sim.close());
      await sim.ready();
      const interlock = await openInterlockFeed({
        path: device,
        log: (l) => log(`interlock: ${l}`),
        ...(values['interlock-runner'] ? { runnerTripSocket: values['interlock-runner'] } : {}),
      });
      cleanups.unshift(() => interlock.close());
      const link = await openTrialRobot(url, { robotUnit: values['robot-unit'], log });
      cleanups.unshift(() => link.close());
      const r = await runMatchedPair({
        store,
        link,
        interlock,
        sim,
        profile,
        pairId,
        trials,
        ...(values.calibration ? { calibrationId: values.calibration } : {}),
        workload,
        operator: prompts,
        onProgress: reportProgress(io),
        signal: abort.signal,
        log,
      });
      // The console's badge, word for word: "completed" only when every real trial completed.
      const session = sessionBadge({ state: r.stoppedEarly ? 'stopped' : 'completed', trials, real: r.real });
      if (values.json) {
        printJson(io, { contract: MB_METRICS_1.id, ...r, session });
      } else {
        io.stdout(
          `matched pair ${r.parentTraceId}: ${r.clip.name} × ${r.binding.name}, calibration ${r.calibrationId}\n`,
        );
        io.stdout(
          `  sim   ${r.sim.runId}  ${r.sim.outcome.padEnd(20)} MPJPE-l ${mm(r.sim.metrics)}  joint RMSE ${rad(r.sim.metrics)}\n`,
        );
        for (const t of r.real)
          io.stdout(
            `  real${trialNumber(t.trialIndex)}  ${t.runId}  ${t.outcome.padEnd(20)} MPJPE-l ${mm(t.metrics)}  joint RMSE ${rad(t.metrics)}\n`,
          );
        if (r.stoppedEarly)
          io.stdout(
            `  stopped early: ${r.stoppedEarly} (${r.remaining} trial(s) remain; run the command again to resume)\n`,
          );
        io.stdout(`  session: ${session.text}\n`);
      }
      return trialExitCode(r, io);
    } finally {
      offSigint();
      for (const c of cleanups) await Promise.resolve(c()).catch(() => undefined);
    }
  },
});
