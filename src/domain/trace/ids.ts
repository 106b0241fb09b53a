// Identifiers of the trace store (DESIGN §3, §7). Pure: randomness and clocks come in as
// arguments, so the service decides where they come from and tests can fix them.
//
// run_id     names an episode and its file `episodes/<run_id>.mcap`, so it must be a safe file
//            name on every platform: 1–128 characters from [A-Za-z0-9._-], starting with a letter
//            or digit (no "." or ".." and no hidden files), not ending in ".mcap".
// campaign   `cmp-` + 16 hex; branch `<parent_trace_id>/<sim|real>` (one per execution domain).

import type { ExecutionDomain } from '../backend/backend';

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Why `runId` is not a valid run id, or null when it is. */
export function runIdProblem(runId: string): string | null {
  if (typeof runId !== 'string' || !RUN_ID.test(runId)) {
    return `run id ${JSON.stringify(runId)} must be 1–128 characters from A–Z a–z 0–9 . _ - and start with a letter or digit`;
  }
  if (/\.mcap$/i.test(runId)) return `run id ${JSON.stringify(runId)} must not end in ".mcap"`;
  return null;
}

export function isValidRunId(runId: string): boolean {
  return runIdProblem(runId) === null;
}

const HEX = /^[0-9a-f]+$/;

function checkHex(randomHex: string, minLength: number): void {
  if (!HEX.test(randomHex) || randomHex.length < minLength)
    throw new RangeError(`expected at least ${minLength} lowercase hex digits, got ${JSON.stringify(randomHex)}`);
}

/** Compact UTC timestamp `YYYYMMDDTHHMMSSZ` (sorts in time order). */
export function compactUtc(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

/**
 * A new run id: `<prefix>-<YYYYMMDDTHHMMSSZ>-<8 hex>`, e.g. `sim-20250101T120000Z-1a2b3c4d`.
 * Ids sort by start time; the random part keeps concurrent episodes apart.
 */
export function makeRunId(domain: ExecutionDomain, nowMs: number, randomHex: string): string {
  checkHex(randomHex, 8);
  const id = `${domain === 'simulation' ? 'sim' : 'real'}-${compactUtc(nowMs)}-${randomHex.slice(0, 8)}`;
  return id;
}

export function makeCampaignId(randomHex: string): string {
  checkHex(randomHex, 16);
  return `cmp-${randomHex.slice(0, 16)}`;
}

export function branchId(parentTraceId: string, domain: ExecutionDomain): string {
  return `${parentTraceId}/${domain === 'simulation' ? 'sim' : 'real'}`;
}

/** The episode file of a run, relative to the campaign folder (always with forward slashes). */
export function episodeFileRelative(runId: string): string {
  const p = runIdProblem(runId);
  if (p) throw new RangeError(p);
  return `episodes/${runId}.mcap`;
}

/** Where a rewritten (recovered, indexed) copy of an interrupted episode's file goes. */
export function recoveredFileRelative(runId: string): string {
  const p = runIdProblem(runId);
  if (p) throw new RangeError(p);
  return `episodes/${runId}.recovered.mcap`;
}
