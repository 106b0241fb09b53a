// Identity colours of executed runs, for the overlay's "by run" colour mode: every run on display
// gets its own colour, so the sim branch and the real trials of a Gap review replay can be told
// apart in the viewport without "solo".
//
// The palette is built for a dark viewport and for colour-blind operators: Okabe–Ito's reddish
// purple plus blues, violets, magentas and neutrals chosen to stay apart under simulated protan,
// deutan and tritan vision (test/unit/rendererRunColors.test.ts checks the distances). It holds
// no green, yellow or red — those mean "error" in the other colour mode — and nothing close to
// the light blue of the reference ghost. The first colours are the most distinct ones, since a
// replay usually shows four runs (sim branch + three real trials).
//
// A run keeps its slot for as long as it is overlaid (addRun in runActions.ts assigns the lowest
// free one when the run is added), so its colour does not change when other runs come or go.

export interface RunColor {
  /** '#rrggbb', sRGB. */
  hex: string;
  /** What an operator would call it (tooltips, docs). */
  name: string;
}

export const RUN_COLORS: readonly RunColor[] = [
  { hex: '#3388dd', name: 'blue' },
  { hex: '#cc79a7', name: 'reddish purple' },
  { hex: '#e0e0e0', name: 'white' },
  { hex: '#8855ff', name: 'violet' },
  { hex: '#66eeff', name: 'light cyan' },
  { hex: '#9966aa', name: 'mauve' },
  { hex: '#bb22bb', name: 'magenta' },
  { hex: '#777777', name: 'grey' },
];

const slotIndex = (slot: number): number => {
  const n = RUN_COLORS.length;
  const i = Number.isInteger(slot) ? slot : 0;
  return ((i % n) + n) % n;
};

/** The identity colour of colour slot `slot` (wraps past the palette's end). */
export function runColor(slot: number): RunColor {
  return RUN_COLORS[slotIndex(slot)];
}

/** '#rrggbb' of slot `slot`. */
export const runColorHex = (slot: number): string => runColor(slot).hex;

/** sRGB components 0..1 of slot `slot`, written to `out` (reused, no allocation). */
export function runColorRgb(slot: number, out: [number, number, number]): [number, number, number] {
  const hex = RUN_COLORS[slotIndex(slot)].hex;
  for (let c = 0; c < 3; c++) out[c] = Number.parseInt(hex.slice(1 + 2 * c, 3 + 2 * c), 16) / 255;
  return out;
}

/**
 * The slot for a run added beside runs holding `used`: the lowest slot no run holds, so up to
 * RUN_COLORS.length runs all differ and a slot freed by a removed run is the next one given.
 * With every slot taken, slots repeat in turn.
 */
export function nextRunColorSlot(used: readonly number[]): number {
  const taken = new Set(used.map(slotIndex));
  for (let s = 0; s < RUN_COLORS.length; s++) if (!taken.has(s)) return s;
  return used.length % RUN_COLORS.length;
}
