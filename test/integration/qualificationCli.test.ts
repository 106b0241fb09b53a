// `motionbench qualify` and `motionbench report` for real (in this process through the bin's entry, real MuJoCo, real
// SQLite, real MCAP): two core-v1 clips × the builtin tracker without and with 3 kN/m root
// assist. The plain PD tracker falls in the dynamic clip (rejected with its stated reasons),
// everything else is admitted; a second run skips every pair and records nothing; the report in
// md, csv and json names contract, policy and snapshot, labels builtin as a reference tracker,
// and its JSON agrees with the campaign database.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelActuatorLimits } from '../../src/services/qualification';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { motionbenchInProcess as motionbench } from '../helpers/runCli';
import { MENAGERIE_SCENE, OUR_G1 } from '../helpers/sharedData';
import { checkMcapCrcs, readIndexed } from '../helpers/traceMcap';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-qualify-'));
const campaign = path.join(root, 'campaign');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const CLIPS = ['ub_wave_right', 'dyn_fast_punches'];
const qualifyArgs = [
  'qualify',
  '--workload',
  'core-v1',
  '--binding',
  'builtin',
  '--binding',
  'builtin:assist=3000',
  '--campaign',
  campaign,
  ...CLIPS.flatMap((c) => ['--clip', c]),
  '--workers',
  '2',
  '--json',
];

interface PairDoc {
  binding: string;
  clip: string;
  group: string;
  status: string;
  admitted: boolean | null;
  reasons: string[];
  parent_trace_id: string;
}

const db = () => new Database(path.join(campaign, 'campaign.sqlite'), { readonly: true, fileMustExist: true });

describe('motionbench qualify + report (real simulator, trace store, MCAP)', () => {
  let first: Record<string, unknown>;
  let firstStderr: string;
  let plain: string;
  let assisted: string;

  beforeAll(async () => {
    const r = await motionbench(...qualifyArgs);
    expect(r.code, r.stderr).toBe(0);
    first = JSON.parse(r.stdout);
    firstStderr = r.stderr;
    const bindings = first.bindings as { key: string; label: string; note: string }[];
    plain = bindings.find((b) => !b.label.includes('assist'))!.key;
    assisted = bindings.find((b) => b.label.includes('assist'))!.key;
  }, 120_000);

  it('decides every pair: the plain PD tracker is rejected on the dynamic clip for stated reasons, the rest admitted', () => {
    expect(first).toMatchObject({
      pairs_total: 4,
      pairs_skipped: 0,
      pairs_decided: 4,
      admitted: 3,
      rejected: 1,
      episodes_recorded: 12,
      cancelled: false,
      contract: 'mb-metrics/1',
    });
    expect(first.policy).toEqual({ id: 'mb-admission', version: '1', key: 'mb-admission/1' });
    for (const b of first.bindings as { note: string }[]) expect(b.note).toBe('reference tracker, not a policy');
    const pairs = first.pairs as PairDoc[];
    const rejected = pairs.filter((p) => p.admitted === false);
    expect(rejected.map((p) => [p.binding, p.clip])).toEqual([[plain, 'dyn_fast_punches']]);
    const reasons = rejected[0].reasons;
    expect(reasons[0]).toMatch(
      /^success_rate: SR 0\.0% \(0 of 3 rollouts without hard failure\) < 100%: rollout 0: \w+ of \w+ [\d.]+ (m|rad) > [\d.]+ (m|rad) at t = [\d.]+ s/,
    );
    expect(reasons.some((r) => /^progress_soft: min [\d.]+ < 1\.000/.test(r))).toBe(true);
    expect(
      reasons.some((r) =>
        /^unexpected_contacts: \d+ frame\(s\) > 0 with a non-foot body on the floor \(dynamic clip\): \w+ in \d+ frame\(s\) from t = [\d.]+ s \(up to \d+ N\)/.test(
          r,
        ),
      ),
    ).toBe(true);
    expect(pairs.filter((p) => p.admitted).every((p) => p.reasons.length === 0)).toBe(true);
  });

  it('reports progress on stderr (done/total, clip-seconds per second, time left), stdout keeps only the JSON document', () => {
    const lines = firstStderr.split('\n');
    expect(lines).toContain('qualify: 4 pairs, 0 already decided, 12 rollouts to run (108 clip-seconds)');
    const progress = lines.filter((l) => / rollouts · /.test(l));
    expect(progress.length).toBeGreaterThanOrEqual(1);
    for (const l of progress)
      expect(l).toMatch(
        /^qualify: ([1-9]|1[0-2])\/12 rollouts · [0-4]\/4 pairs · \d+\/108 clip-s · \d+\.\d clip-s\/s · \d+:\d\d left$/,
      );
    // The last rollout's line is always printed, with nothing left.
    expect(progress.at(-1)).toMatch(
      /^qualify: 12\/12 rollouts · [34]\/4 pairs · 108\/108 clip-s · \d+\.\d clip-s\/s · 0:00 left$/,
    );
    const done = progress.map((l) => Number(/^qualify: (\d+)\//.exec(l)![1]));
    expect(done).toEqual([...done].sort((a, b) => a - b));
    expect(lines.filter((l) => /^qualify: \d\/4 builtin/.test(l))).toHaveLength(4);
  });

  it('records every rollout as an episode under its pair (simulation branch, intact MCAP, metrics row) and stores each decision with its evidence', async () => {
    const d = db();
    try {
      const eps = d
        .prepare(
          `SELECT e.*, b.parent_trace_id, b.execution_domain FROM episodes e JOIN branches b ON b.id = e.branch_id ORDER BY e.started_at`,
        )
        .all() as Record<string, unknown>[];
      expect(eps).toHaveLength(12);
      expect(new Set(eps.map((e) => e.execution_domain))).toEqual(new Set(['simulation']));
      expect(
        eps.every((e) => e.status === 'finished' && (e.outcome === 'completed' || e.outcome === 'hard_failure')),
      ).toBe(true);
      const perPair = new Map<string, number[]>();
      for (const e of eps)
        perPair.set(
          e.parent_trace_id as string,
          [...(perPair.get(e.parent_trace_id as string) ?? []), e.rollout_index as number].sort(),
        );
      expect([...perPair.values()]).toEqual([
        [0, 1, 2],
        [0, 1, 2],
        [0, 1, 2],
        [0, 1, 2],
      ]);
      expect(new Set(eps.map((e) => e.seed)).size).toBe(12);
      expect(
        (d.prepare(`SELECT count(*) AS n FROM metrics WHERE contract_id = 'mb-metrics/1'`).get() as { n: number }).n,
      ).toBe(12);
      // One episode file checked in full with an independent reader.
      const e0 = eps[0];
      const bytes = fs.readFileSync(path.join(campaign, e0.mcap_path as string));
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(e0.mcap_sha256);
      expect(checkMcapCrcs(bytes)).toEqual({ dataSection: true, summary: true });
      const idx = await readIndexed(path.join(campaign, e0.mcap_path as string));
      expect(idx.topics['/executed/state']).toBe(e0.frame_count);
      expect(idx.metadata.episode.admission_policy).toBe('mb-admission/1');
      const adm = d.prepare(`SELECT * FROM admissions`).all() as {
        parent_trace_id: string;
        policy_id: string;
        policy_version: string;
        admitted: number;
        reasons_json: string;
        evidence_json: string;
      }[];
      expect(adm).toHaveLength(4);
      const snapshotHash = (first.snapshot as { hash: string }).hash;
      for (const a of adm) {
        expect([a.policy_id, a.policy_version]).toEqual(['mb-admission', '1']);
        const ev = JSON.parse(a.evidence_json);
        expect(ev).toMatchObject({ policy: 'mb-admission/1', contract: 'mb-metrics/1', snapshot_hash: snapshotHash });
        expect([plain, assisted]).toContain(ev.binding);
        expect(ev.rollouts).toHaveLength(3);
        expect(ev.criteria).toHaveLength(9);
        expect(JSON.parse(a.reasons_json)).toEqual(
          ev.criteria.filter((c: { passed: boolean }) => !c.passed).map((c: { text: string }) => c.text),
        );
      }
    } finally {
      d.close();
    }
  });

  it('a second run skips every pair: no new episode, no new decision', async () => {
    const d = db();
    const before = d.prepare(`SELECT parent_trace_id, decided_at FROM admissions ORDER BY parent_trace_id`).all();
    d.close();
    const r = await motionbench(...qualifyArgs);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({
      pairs_total: 4,
      pairs_skipped: 4,
      pairs_decided: 0,
      episodes_recorded: 0,
      admitted: 3,
      rejected: 1,
    });
    expect((doc.pairs as PairDoc[]).every((p) => p.status === 'skipped')).toBe(true);
    const d2 = db();
    try {
      expect((d2.prepare(`SELECT count(*) AS n FROM episodes`).get() as { n: number }).n).toBe(12);
      expect(d2.prepare(`SELECT parent_trace_id, decided_at FROM admissions ORDER BY parent_trace_id`).all()).toEqual(
        before,
      );
    } finally {
      d2.close();
    }
  }, 60_000);

  it('report --format json agrees with the database', async () => {
    const r = await motionbench('report', '--campaign', campaign, '--format', 'json');
    expect(r.code, r.stderr).toBe(0);
    const rep = JSON.parse(r.stdout);
    expect(rep).toMatchObject({
      format: 'motionbench-qualification-report/2',
      contract: 'mb-metrics/1',
      policy: { key: 'mb-admission/1' },
    });
    expect(rep.snapshots).toEqual([
      expect.objectContaining({
        id: 'core-v1',
        version: '1',
        snapshot_hash: (first.snapshot as { hash: string }).hash,
        clips: 47,
      }),
    ]);
    expect(rep.bindings.map((b: { key: string; note: string }) => [b.key, b.note])).toEqual(
      expect.arrayContaining([
        [plain, 'reference tracker, not a policy'],
        [assisted, 'reference tracker, not a policy'],
      ]),
    );
    const d = db();
    try {
      for (const row of rep.matrix) {
        const q = d
          .prepare(
            `SELECT count(*) AS n, sum(m.failed = 0) AS ok, avg(m.mpjpe_l_mm) AS mpjpe FROM episodes e JOIN branches b ON b.id = e.branch_id JOIN parent_traces p ON p.id = b.parent_trace_id
              JOIN metrics m ON m.run_id = e.run_id WHERE p.binding_id || '@' || p.binding_version = ?`,
          )
          .get(row.binding) as { n: number; ok: number; mpjpe: number };
        const a = d
          .prepare(
            `SELECT sum(a.admitted) AS adm, count(*) AS n FROM admissions a JOIN parent_traces p ON p.id = a.parent_trace_id WHERE p.binding_id || '@' || p.binding_version = ?`,
          )
          .get(row.binding) as { adm: number; n: number };
        expect(row.overall).toMatchObject({
          pairs: a.n,
          admitted: a.adm,
          rejected: a.n - a.adm,
          pending: 0,
          episodes: q.n,
        });
        expect(row.overall.sr).toBeCloseTo(q.ok / q.n, 12);
        // Equal clip counts per pair, so the macro-average equals the pooled mean here.
        expect(row.overall.mpjpe_l_mm).toBeCloseTo(q.mpjpe, 9);
        expect(row.by_group.upper_body.pairs + row.by_group.dynamic.pairs).toBe(2);
      }
      const adm = d.prepare(`SELECT parent_trace_id, admitted, reasons_json FROM admissions`).all() as {
        parent_trace_id: string;
        admitted: number;
        reasons_json: string;
      }[];
      expect(rep.pairs).toHaveLength(4);
      for (const p of rep.pairs) {
        const a = adm.find((x) => x.parent_trace_id === p.parent_trace_id)!;
        expect(p.decision).toBe(a.admitted ? 'admitted' : 'rejected');
        expect(p.reasons).toEqual(JSON.parse(a.reasons_json));
        expect(p.rollouts).toHaveLength(3);
      }
    } finally {
      d.close();
    }
  });

  it('report as Markdown and CSV: matrix, admitted pairs, every rejection with its reasons; names contract, policy and snapshot', async () => {
    const md = await motionbench('report', '--campaign', campaign);
    expect(md.code, md.stderr).toBe(0);
    for (const s of [
      'mb-metrics/1',
      'mb-admission/1',
      'core-v1@1',
      'reference tracker, not a policy',
      '## Qualification matrix',
      '## Admitted pairs (3)',
      '## Rejections (1)',
      `### \`${plain}\` × dyn_fast_punches (dynamic)`,
      '- success_rate: SR 0.0%',
    ]) {
      expect(md.stdout).toContain(s);
    }
    expect(md.stdout).toMatch(/\| \*\*all\*\* \| 2 \| 1 \| 1 \| 0 \| 6 \| 50\.0% \|/);
    const csv = await motionbench('report', '--campaign', campaign, '--format', 'csv');
    expect(csv.code, csv.stderr).toBe(0);
    const lines = csv.stdout.trim().split('\n');
    expect(lines[0]).toBe(
      'level,contract,policy,snapshot,snapshot_hash,binding,binding_kind,binding_note,group,clip,clip_id,pairs,admitted,rejected,pending,rollouts,sr,progress_soft,mpjpe_l_mm,decision,reasons,reading,unit,sim,real,gap_percent,clips_used,excluded,calibration_id,sim_trials,real_trials,sim_failed,real_failed,excluded_trials,unavailable',
    );
    const pairRows = lines.filter((l) => l.startsWith('pair,'));
    expect(pairRows).toHaveLength(4);
    expect(pairRows.filter((l) => l.includes(',rejected,')).join('\n')).toContain('success_rate: SR 0.0%');
    expect(lines.filter((l) => l.startsWith('binding,'))).toHaveLength(2);
    const bad = await motionbench('report', '--campaign', campaign, '--format', 'xml');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format must be md, csv or json');
  });

  it("saturation limits come from the compiled model: our actuator forcerange, Menagerie's joint actuatorfrcrange", async () => {
    const expected = [
      88, 139, 88, 139, 50, 50, 88, 139, 88, 139, 50, 50, 88, 50, 50, 25, 25, 25, 25, 25, 5, 5, 25, 25, 25, 25, 25, 5,
      5,
    ];
    for (const f of [OUR_G1, MENAGERIE_SCENE]) {
      const l = await modelActuatorLimits(loadRobotProfile(f));
      expect(l.forceLimitNm).toEqual(expected);
      expect(l.ctrlRangeRad.every((r) => r !== null)).toBe(true);
    }
  });
});
