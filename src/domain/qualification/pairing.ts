// Which binding × clip combinations of a qualification run are pairs (docs/QUALIFICATION.md
// "Pairing"). A policy whose family declares it tracks only its own motion (FAMILY_MOTION_SCOPE
// in src/domain/wbc/trackingPolicy.ts) is paired with that motion only; with every other clip
// of the workload it is *not paired* — nothing is run or decided, and the run says why — rather
// than run and rejected on motions it was never meant to track. Every other binding is paired
// with every clip. Pure.

/** The motion(s) a single-motion binding tracks, and where they were declared. */
export interface OwnMotion {
  /** Content ids of its own motion clips. */
  clipIds: readonly string[];
  /** What the motion is and where it comes from, e.g. "the motion baked into Violin.onnx". */
  source: string;
  /** Why the policy tracks only that motion (the family's declaration). */
  basis: string;
}

/** A binding × clip combination that is not a pair, with the reason. */
export interface NotPaired {
  binding: string;
  clipId: string;
  clipName: string;
  why: string;
}

/** null when the binding is paired with the clip, else the reason it is not. */
export function notPairedReason(own: OwnMotion | undefined, clipId: string): string | null {
  if (!own || own.clipIds.includes(clipId)) return null;
  return `a single-motion policy: it tracks only ${own.source} (${own.basis})`;
}

/**
 * One line per binding that has combinations left unpaired: how many clips, and why, e.g.
 * "unitree-rl-lab/dance_102@…: not paired with 46 clips — a single-motion policy: …".
 */
export function summarizeNotPaired(notPaired: readonly NotPaired[]): string[] {
  const by = new Map<string, { n: number; why: string }>();
  for (const p of notPaired) {
    const e = by.get(p.binding);
    if (e) e.n++;
    else by.set(p.binding, { n: 1, why: p.why });
  }
  return [...by].map(([b, e]) => `${b}: not paired with ${e.n} clip${e.n === 1 ? '' : 's'} — ${e.why}`);
}
