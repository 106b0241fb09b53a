// The colour scale of per-body position error: green at 0, yellow at 0.10 m, red from 0.25 m,
// the mb-metrics/1 hard-failure threshold (|Δz| of the root or an end-effector > 0.25 m; a unit
// test keeps the two equal). Linear in sRGB between the stops.

/** Error at which the scale turns fully red, metres (= MB_METRICS_1.thresholds.endEffectorHeightM). */
export const ERROR_RED_M = 0.25;
export const ERROR_YELLOW_M = 0.1;

export interface ErrorStop {
  errM: number;
  /** sRGB 0..255 */
  rgb: readonly [number, number, number];
}

export const ERROR_STOPS: readonly ErrorStop[] = [
  { errM: 0, rgb: [0x22, 0xc5, 0x5e] },
  { errM: ERROR_YELLOW_M, rgb: [0xfa, 0xcc, 0x15] },
  { errM: ERROR_RED_M, rgb: [0xef, 0x44, 0x44] },
];

/** Upper end of the legend bar, metres: a little past red so "≥ 0.25" has room. */
export const LEGEND_MAX_M = 0.3;

/** sRGB components 0..1 of the colour for `errM` metres, written to `out` (reused, no allocation). */
export function errorColorRgb(errM: number, out: [number, number, number]): [number, number, number] {
  const e = Number.isFinite(errM) ? Math.max(0, errM) : ERROR_RED_M;
  let i = 0;
  while (i < ERROR_STOPS.length - 2 && e > ERROR_STOPS[i + 1].errM) i++;
  const a = ERROR_STOPS[i];
  const b = ERROR_STOPS[i + 1];
  const t = Math.min(1, Math.max(0, (e - a.errM) / (b.errM - a.errM)));
  for (let c = 0; c < 3; c++) out[c] = (a.rgb[c] + (b.rgb[c] - a.rgb[c]) * t) / 255;
  return out;
}

/** '#rrggbb' of the colour for `errM`, rounded as a 24-bit colour is. */
export function errorColorHex(errM: number): string {
  const rgb = errorColorRgb(errM, [0, 0, 0]);
  return `#${rgb
    .map((v) =>
      Math.round(v * 255)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}

/** CSS gradient of the scale over 0..LEGEND_MAX_M, for the legend bar. */
export function errorLegendGradient(): string {
  const stops = ERROR_STOPS.map((s) => `rgb(${s.rgb.join(' ')}) ${((s.errM / LEGEND_MAX_M) * 100).toFixed(2)}%`);
  return `linear-gradient(to right, ${stops.join(', ')}, rgb(${ERROR_STOPS[ERROR_STOPS.length - 1].rgb.join(' ')}) 100%)`;
}
