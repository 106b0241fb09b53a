// The binding × clip score matrix the redundancy audit, the clip selection and the ranking work on:
// one reading per (binding, clip), averaged over that pair's counted episodes (see
// src/services/analysis). Cells may be missing; each analysis states which rows and columns it
// could use (complete cases), never fills a gap.

export interface ScoreCell {
  readonly binding: string;
  readonly clip: string;
  readonly value: number;
}

export interface DenseScores {
  /** Bindings (rows) and clips (columns) with every cell present. */
  readonly bindings: readonly string[];
  readonly clips: readonly string[];
  /** values[b][c]. */
  readonly values: readonly Float64Array[];
  /** Clips dropped because some binding has no value for them. */
  readonly droppedClips: readonly string[];
  /** Bindings dropped because they cover fewer than half of the clips (dropping them keeps more clips). */
  readonly droppedBindings: readonly string[];
}

/**
 * The largest complete sub-matrix found greedily: bindings that cover fewer than half of the clips
 * are dropped first (one sparse binding must not empty the clip set), then every clip that some
 * remaining binding lacks. Orders are those of first appearance in `cells`. A (binding, clip) that
 * appears twice is refused: the caller averaged wrongly.
 */
export function denseScores(cells: readonly ScoreCell[]): DenseScores {
  const bindings: string[] = [];
  const clips: string[] = [];
  const map = new Map<string, number>();
  for (const c of cells) {
    if (!Number.isFinite(c.value)) throw new RangeError(`score of ${c.binding} × ${c.clip} is not finite (${c.value})`);
    const k = `${c.binding}\u0000${c.clip}`;
    if (map.has(k)) throw new RangeError(`score of ${c.binding} × ${c.clip} appears twice`);
    map.set(k, c.value);
    if (!bindings.includes(c.binding)) bindings.push(c.binding);
    if (!clips.includes(c.clip)) clips.push(c.clip);
  }
  const has = (b: string, c: string) => map.has(`${b}\u0000${c}`);
  const droppedBindings = bindings.filter((b) => clips.filter((c) => has(b, c)).length * 2 < clips.length);
  const keptB = bindings.filter((b) => !droppedBindings.includes(b));
  const keptC = clips.filter((c) => keptB.every((b) => has(b, c)));
  const droppedClips = clips.filter((c) => !keptC.includes(c));
  return {
    bindings: keptB,
    clips: keptC,
    values: keptB.map((b) => Float64Array.from(keptC, (c) => map.get(`${b}\u0000${c}`)!)),
    droppedClips,
    droppedBindings,
  };
}

/** Column `c` of the dense matrix: one clip's scores across bindings. */
export function clipColumn(d: DenseScores, c: number): Float64Array {
  return Float64Array.from(d.values, (row) => row[c]);
}
