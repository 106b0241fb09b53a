// The qualification result does not depend on how the work is spread: the same small
// qualification (two bindings, one that falls and one held by the root assist, × two clips × two
// seeded rollouts) run on 1 and on 2 simulator workers gives the same admission decisions with
// the same reasons and criteria, and every rollout the same outcome, frame count, trajectory hash,
// mb-metrics/1 readings and admission measures — equal to each other and to the digest recorded
// from the pipeline as it was before the per-episode work was spread (fixture below).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { customPolicy } from '../../src/domain/qualification';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { runQualification } from '../../src/services/qualification';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { loadWorkload } from '../../src/services/workload';
import { qualificationDigest, type QualificationDigest } from '../helpers/qualificationDigest';

const FIXTURE = path.join(import.meta.dirname, '../fixtures/qualification/digestBeforePipelineChange.json');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-qual-workers-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const profile = loadRobotProfile();
const workload = loadWorkload('core-v1', { profile });
const bindings = [makeBuiltinBinding(), makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(2000) })];

async function qualify(workers: number): Promise<QualificationDigest> {
  const dir = path.join(root, `w${workers}`);
  const s = await runQualification({
    campaignDir: dir,
    workload,
    bindings,
    profile,
    policy: customPolicy({ rollouts: 2 }),
    clips: ['dyn_jump_forward', 'ub_wave_right'],
    workers,
  });
  expect(s.pairsDecided).toBe(4);
  expect(s.episodesRecorded).toBe(8);
  return qualificationDigest(dir);
}

describe('qualification on 1 and 2 workers', () => {
  it('gives every decision, reading and trajectory hash bit-identical, and as recorded before', async () => {
    const one = await qualify(1);
    const two = await qualify(2);
    // JSON keeps every double exactly (shortest round-trip form), so equal text is equal bits.
    expect(JSON.stringify(two)).toBe(JSON.stringify(one));
    const before = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as QualificationDigest;
    expect(one.admissions).toEqual(before.admissions);
    expect(one.rollouts).toEqual(before.rollouts);
    expect(JSON.stringify(one)).toBe(JSON.stringify(before));
    // The sample means something: both outcomes and both decisions occur.
    expect(new Set(one.admissions.map((a) => a.admitted))).toEqual(new Set([true, false]));
    expect(one.rollouts.every((r) => r.trajectorySha256 !== null && r.metrics !== null && r.measures !== null)).toBe(
      true,
    );
  }, 600_000);
});
