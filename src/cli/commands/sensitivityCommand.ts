import { loadRobotProfile, DEFAULT_MODEL_FILE } from '../../services/robot/loadRobotProfile';
import { runSensitivity, sensitivityJson, sensitivityText } from '../../services/analysis/sensitivityRunner';
import { EmbeddedSimulator } from '../../services/sim/embeddedSimulator';
import { openCampaign } from '../../services/trace';
import { numberOption, parse, printJson, UsageError, type Command } from '../cliSupport';

const usage = `usage: motionbench sensitivity --campaign <dir> --pair <id> [--scales 1,3,10] [--seconds 2]
                             [--held-out 8] [--seed N] [--workers N] [--model <mjcf>] [--json]
  Start-state sensitivity of a pair in the embedded simulator (docs/ANALYSIS.md): its latest
  calibrated start moved along each leg and waist joint and the root's roll and pitch (each in units
  of the stillness noise σ the calibration measured, floored at 1 mrad; roll/pitch σ 2 mrad), ± at
  each scale, plus seeded held-out directions; the finite-difference Gram of the per-frame MPJPE-l
  and of the per-frame joint RMSE over the first seconds; its dominant direction in joint names,
  condition number, held-out-direction WAPE against the isotropic reference with the same trace,
  and how the geometry changes across scales (D_G, angle). The unperturbed run is repeated and
  must be bit-identical (replay audit). Nothing is recorded in the campaign.
  --pair      a qualification pair (as motionbench trial --list prints it) with a stored calibration
  --scales    perturbation scales in σ, comma-separated (default 1,3,10)
  --seconds   seconds of the clip each run covers (default 2)
  --held-out  held-out directions per scale (default 8)
  --json      one document (format motionbench-sensitivity/1)
  Progress goes to stderr.`;

export const sensitivityCommand: Command = {
  name: 'sensitivity',
  summary: 'start-state sensitivity of a pair in simulation: Gram geometry, held-out WAPE, replay audit',
  usage,
  async run(argv, io) {
    const { values } = parse(
      argv,
      {
        campaign: { type: 'string' },
        pair: { type: 'string' },
        scales: { type: 'string' },
        seconds: { type: 'string' },
        'held-out': { type: 'string' },
        seed: { type: 'string' },
        workers: { type: 'string' },
        model: { type: 'string' },
        json: { type: 'boolean' },
      },
      usage,
    );
    if (!values.campaign) throw new UsageError(`--campaign is required\n${usage}`);
    if (!values.pair) throw new UsageError(`--pair is required\n${usage}`);
    const scales = (values.scales ?? '1,3,10').split(',').map((s) => Number(s.trim()));
    if (scales.length === 0 || scales.some((s) => !(Number.isFinite(s) && s > 0)))
      throw new UsageError(`--scales must be positive numbers separated by commas, got "${values.scales}"`);
    const seconds =
      numberOption(values.seconds, 'seconds', (v) => v > 0 && v <= 60, 'a number of seconds in (0, 60]') ?? 2;
    const heldOut =
      numberOption(
        values['held-out'],
        'held-out',
        (v) => Number.isInteger(v) && v >= 1 && v <= 200,
        'an integer in 1..200',
      ) ?? 8;
    const seed = numberOption(values.seed, 'seed', (v) => Number.isSafeInteger(v) && v >= 0, 'an integer ≥ 0') ?? 1;
    const workers = numberOption(
      values.workers,
      'workers',
      (v) => Number.isInteger(v) && v >= 1 && v <= 64,
      'an integer in 1..64',
    );
    const modelFile = values.model ?? DEFAULT_MODEL_FILE;
    const profile = loadRobotProfile(modelFile);
    const store = await openCampaign(values.campaign, { readOnly: true });
    const sim = new EmbeddedSimulator({
      modelFile,
      ...(workers !== undefined ? { workers } : {}),
      id: 'sensitivity-sim',
      name: 'embedded simulator (sensitivity)',
    });
    try {
      await sim.ready();
      const t0 = Date.now();
      const r = await runSensitivity(store, sim, profile, {
        pairId: values.pair,
        scales,
        seconds,
        heldOut,
        seed,
        progress: (l) => io.stderr(`sensitivity: ${l}\n`),
      });
      io.stderr(`sensitivity: ${r.runs} runs in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
      if (values.json) printJson(io, sensitivityJson(r));
      else io.stdout(`${sensitivityText(r)}\n`);
      return 0;
    } finally {
      await sim.close();
      store.close();
    }
  },
};
