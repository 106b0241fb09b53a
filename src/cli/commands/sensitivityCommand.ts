import path from 'node:path';
import { loadRobotProfile, DEFAULT_MODEL_FILE } from '../../services/robot/loadRobotProfile';
import {
  robotSensitivityJson,
  robotSensitivityText,
  runRobotSensitivity,
} from '../../services/analysis/robotSensitivityRunner';
import {
  runSensitivity,
  sensitivityJson,
  sensitivitySetup,
  sensitivityText,
} from '../../services/analysis/sensitivityRunner';
import { openInterlockFeed } from '../../services/trial/interlockFeed';
import { openTrialRobot } from '../../services/trial/openTrialRobot';
import { EmbeddedSimulator } from '../../services/sim/embeddedSimulator';
import { openCampaign } from '../../services/trace';
import { defineCommand, integerOption, nonNegativeIntegerOption, numberOption, workersOption } from '../cliOptions';
import { onSignal, printJson, UsageError } from '../cliSupport';

const usage = `usage: motionbench sensitivity --campaign <dir> --pair <id> [--scales 1,3,10] [--seconds 2]
                             [--held-out 8] [--seed N] [--axes a,b,…] [--workers N] [--model <mjcf>] [--json]
                             [--robot <ws-url> --interlock <device> --record <dir> --yes [--robot-unit NAME]]
  Start-state sensitivity of a pair in the embedded simulator (docs/ANALYSIS.md §6): its latest
  calibrated start moved along each leg and waist joint and the root's roll and pitch (each in units
  of the stillness noise σ the calibration measured, floored at 1 mrad; roll/pitch σ 2 mrad), ± at
  each scale, plus seeded held-out directions; the finite-difference Gram of the per-frame MPJPE-l
  and of the per-frame joint RMSE over the first seconds; its dominant direction in joint names,
  condition number, held-out-direction WAPE against the isotropic reference with the same trace,
  and how the geometry changes across scales (D_G, angle). The unperturbed run is repeated and
  must be bit-identical (replay audit). Nothing is recorded in the campaign.
  With --robot, the same perturbations also run on the robot emulator as real trials (the safety
  gate, the armed interlock, the start-pose check): the emulator's control channel puts the robot
  down at each perturbed start, the first seconds are qualified as a clip of their own and every
  trial is recorded in the --record campaign (never the pair's); the robot's Gram is fitted by least
  squares on the perturbations it reached, and D_G and the dominant-direction angle between the
  simulator and the robot are reported. A real robot (no control channel) is refused.
  --pair       a qualification pair (as motionbench trial --list prints it) with a stored calibration
  --scales     perturbation scales in σ, comma-separated (default 1,3,10)
  --seconds    seconds of the clip each run covers (default 2)
  --held-out   held-out directions per scale (default 8)
  --axes       only these axes, comma-separated (joint names, root_roll, root_pitch)
  --robot      the robot emulator's g1-bridge/1 endpoint (motionbench emulate-robot)
  --interlock  the interlock box's serial device
  --record     a new campaign directory for the robot's trials
  --yes        confirm every real trial of the study (required with --robot)
  --json       one document (format motionbench-sensitivity/1)
  Progress goes to stderr.`;

export const sensitivityCommand = defineCommand({
  name: 'sensitivity',
  summary:
    'start-state sensitivity of a pair in simulation (and on the robot emulator): Gram geometry, held-out WAPE, replay audit',
  usage,
  strings: [
    'campaign',
    'pair',
    'scales',
    'seconds',
    'held-out',
    'seed',
    'workers',
    'model',
    'axes',
    'robot',
    'interlock',
    'record',
    'robot-unit',
  ],
  flags: ['yes', 'json'],
  async run(values, io) {
    if (!values.campaign) throw new UsageError(`--campaign is required\n${usage}`);
    if (!values.pair) throw new UsageError(`--pair is required\n${usage}`);
    const scales = (values.scales ?? '1,3,10').split(',').map((s) => Number(s.trim()));
    if (scales.length === 0 || scales.some((s) => !(Number.isFinite(s) && s > 0)))
      throw new UsageError(`--scales must be positive numbers separated by commas, got "${values.scales}"`);
    const seconds =
      numberOption(values.seconds, 'seconds', (v) => v > 0 && v <= 60, 'a number of seconds in (0, 60]') ?? 2;
    const heldOut = integerOption(values['held-out'], 'held-out', 1, 200) ?? 8;
    const seed = nonNegativeIntegerOption(values.seed, 'seed') ?? 1;
    const workers = workersOption(values.workers);
    const axes = values.axes
      ?.split(',')
      .map((a) => a.trim())
      .filter((a) => a.length > 0);
    const robotOnly = ['interlock', 'record', 'robot-unit', 'yes'] as const;
    if (!values.robot) {
      const stray = robotOnly.filter((k) => values[k] !== undefined);
      if (stray.length > 0) throw new UsageError(`--${stray[0]} needs --robot\n${usage}`);
    } else {
      if (!values.interlock) throw new UsageError(`--robot needs --interlock <device>\n${usage}`);
      if (!values.record)
        throw new UsageError(`--robot needs --record <dir> (a new campaign for the robot's trials)\n${usage}`);
      if (path.resolve(values.record) === path.resolve(values.campaign))
        throw new UsageError(`--record must not be the pair's campaign: its trials would mix with perturbed starts`);
      if (values.yes !== true)
        throw new UsageError(
          `--robot runs every perturbation as a real trial (2 per axis and the held-out directions at each scale, and the repeats); confirm them all with --yes\n${usage}`,
        );
    }
    const modelFile = values.model ?? DEFAULT_MODEL_FILE;
    const profile = loadRobotProfile(modelFile);
    const store = await openCampaign(values.campaign, { readOnly: true });
    const sim = new EmbeddedSimulator({
      modelFile,
      ...(workers !== undefined ? { workers } : {}),
      id: 'sensitivity-sim',
      name: 'embedded simulator (sensitivity)',
    });
    const cleanups: (() => Promise<unknown> | unknown)[] = [() => store.close(), () => sim.close()];
    const abort = new AbortController();
    const onSigint = (): void => {
      io.stderr('\nSTOP (Ctrl+C): stopping the robot…\n');
      abort.abort('operator');
    };
    try {
      await sim.ready();
      const t0 = Date.now();
      const options = {
        pairId: values.pair,
        scales,
        seconds,
        heldOut,
        seed,
        ...(axes && axes.length > 0 ? { axes } : {}),
        progress: (l: string) => io.stderr(`sensitivity: ${l}\n`),
      };
      if (!values.robot) {
        const r = await runSensitivity(store, sim, profile, options);
        io.stderr(`sensitivity: ${r.runs} runs in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
        if (values.json) printJson(io, sensitivityJson(r));
        else io.stdout(`${sensitivityText(r)}\n`);
        return 0;
      }
      // The pair's clip (a built-in workload is regenerated: ≈ 0.6 s of synchronous work) is loaded
      // before the interlock opens: its heartbeats must not wait for that work.
      const setup = sensitivitySetup(store, profile, options);
      cleanups.unshift(onSignal(io, 'SIGINT', onSigint));
      const log = (l: string): void => io.stderr(`${l}\n`);
      const robotUrl = values.robot;
      const connect = async () => {
        const interlock = await openInterlockFeed({ path: values.interlock!, log: (l) => log(`interlock: ${l}`) });
        cleanups.unshift(() => interlock.close());
        const link = await openTrialRobot(robotUrl, { robotUnit: values['robot-unit'], log });
        cleanups.unshift(() => link.close());
        return { link, interlock };
      };
      const r = await runRobotSensitivity(
        store,
        sim,
        profile,
        {
          ...options,
          robotUrl,
          connect,
          recordDir: values.record!,
          signal: abort.signal,
          log,
        },
        setup,
      );
      io.stderr(
        `sensitivity: ${r.sim.runs} simulator runs and ${r.robot.runs} robot trials in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
      );
      if (values.json) printJson(io, robotSensitivityJson(r));
      else io.stdout(`${robotSensitivityText(r, sensitivityText(r.sim))}\n`);
      return 0;
    } finally {
      for (const c of cleanups) await Promise.resolve(c()).catch(() => undefined);
    }
  },
});
