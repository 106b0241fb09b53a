import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clipFromDto, clipToDto } from '../../src/api/clipDto';
import { decodeMotionFile } from '../../src/domain/motion/decodeMotionFile';
import { resampleClip } from '../../src/domain/motion/resample';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { ERROR_STOPS, errorColorHex } from '../../renderer/src/overlay/errorScale';
import { nextRunColorSlot, RUN_COLORS, runColor, runColorHex, runColorRgb } from '../../renderer/src/overlay/runColors';
import { seekFrame } from '../../renderer/src/playback/playback';
import { useClipStore } from '../../renderer/src/playback/clipStore';
import { setRobotProfile } from '../../renderer/src/robot/robotStore';
import { addRun, clearRuns, removeRun, setColorMode, startOverlayEngine } from '../../renderer/src/overlay/runActions';
import { MAX_RUNS, useRunStore } from '../../renderer/src/overlay/runStore';
import { GHOST_COLOR } from '../../renderer/src/viewport/geomObjects';
import { OUR_G1, sharedData } from '../helpers/sharedData';

// The identity colours of the overlay's "by run" mode: a palette that stays distinct for normal
// and colour-blind vision, never looks like the error scale or the reference ghost, and slots
// that stay with a run while it is overlaid.

// ---- colour science for the checks: sRGB → CIELAB (D65), and dichromat simulation (Machado,
// Oliveira & Fernandes 2009, severity 1.0, applied to linear RGB).

type Rgb = [number, number, number];
const rgbOf = (hex: string): Rgb => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255) as Rgb;
const toLinear = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);

const VISION: Record<string, number[][]> = {
  normal: [
    [1, 0, 0],
    [0, 1, 0],
    [0, 0, 1],
  ],
  protanopia: [
    [0.152286, 1.052583, -0.204868],
    [0.114503, 0.786281, 0.099216],
    [-0.003882, -0.048116, 1.051998],
  ],
  deuteranopia: [
    [0.367322, 0.860646, -0.227968],
    [0.280085, 0.672501, 0.047413],
    [-0.01182, 0.04294, 0.968881],
  ],
  tritanopia: [
    [1.255528, -0.076749, -0.178779],
    [-0.078411, 0.930809, 0.147602],
    [0.004733, 0.691367, 0.3039],
  ],
};

function lab(hex: string, vision: string): Rgb {
  const lin = rgbOf(hex).map(toLinear);
  const [r, g, b] = VISION[vision].map((row) =>
    Math.min(1, Math.max(0, row[0] * lin[0] + row[1] * lin[1] + row[2] * lin[2])),
  );
  const x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}

/** CIE76 colour difference of two sRGB colours as seen with `vision`. */
const deltaE = (a: string, b: string, vision = 'normal') => {
  const p = lab(a, vision);
  const q = lab(b, vision);
  return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
};

/** Hue in degrees, NaN for a grey. */
function hueDeg(hex: string): number {
  const [r, g, b] = rgbOf(hex);
  const max = Math.max(r, g, b);
  const d = max - Math.min(r, g, b);
  if (d < 0.02) return Number.NaN;
  const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return (h * 60 + 360) % 360;
}

const minPairwise = (hexes: readonly string[], vision: string) => {
  let min = Infinity;
  for (let i = 0; i < hexes.length; i++)
    for (let j = i + 1; j < hexes.length; j++) min = Math.min(min, deltaE(hexes[i], hexes[j], vision));
  return min;
};

const HEXES = RUN_COLORS.map((c) => c.hex);
const DICHROMATS = ['protanopia', 'deuteranopia', 'tritanopia'];

describe('run identity palette', () => {
  it('has a colour for every run the overlay can hold, all different', () => {
    expect(RUN_COLORS.length).toBeGreaterThanOrEqual(MAX_RUNS);
    expect(new Set(HEXES).size).toBe(HEXES.length);
    for (const h of HEXES) expect(h).toMatch(/^#[0-9a-f]{6}$/);
  });

  it('stays distinct for normal and colour-blind vision, most of all in the first four slots', () => {
    // ΔE76 ≈ 2 is a just-noticeable difference; 20 reads as a different colour at a glance.
    expect(minPairwise(HEXES.slice(0, MAX_RUNS), 'normal')).toBeGreaterThan(20);
    for (const v of DICHROMATS) expect(minPairwise(HEXES.slice(0, MAX_RUNS), v), v).toBeGreaterThan(12);
    // A replay: sim branch + three real trials.
    for (const v of ['normal', ...DICHROMATS]) expect(minPairwise(HEXES.slice(0, 4), v), v).toBeGreaterThan(20);
  });

  it('holds no green, yellow or red, and nothing near the error scale or the reference ghost', () => {
    for (const h of HEXES) {
      const hue = hueDeg(h);
      // Greys, or hues from cyan over blue and violet to magenta (the error scale spans 0°–142°).
      if (!Number.isNaN(hue)) expect(hue >= 180 && hue <= 335, `${h}: hue ${hue.toFixed(0)}°`).toBe(true);
      const scale = [
        ...ERROR_STOPS.map((s) => `#${s.rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`),
        errorColorHex(0.175),
      ];
      for (const v of ['normal', 'protanopia', 'deuteranopia']) {
        for (const e of scale) expect(deltaE(h, e, v), `${h} vs error colour ${e} (${v})`).toBeGreaterThan(20);
        expect(deltaE(h, GHOST_COLOR, v), `${h} vs ghost (${v})`).toBeGreaterThan(20);
      }
    }
  });

  it('gives a slot the same colour every time, wrapping past the palette', () => {
    expect(runColorHex(0)).toBe(HEXES[0]);
    expect(runColorHex(1)).toBe(HEXES[1]);
    expect(runColor(RUN_COLORS.length + 2)).toBe(runColor(2));
    expect(runColor(-1)).toBe(runColor(RUN_COLORS.length - 1));
    const rgb = runColorRgb(3, [0, 0, 0]);
    expect(rgb.map((v) => Math.round(v * 255))).toEqual(rgbOf(HEXES[3]).map((v) => Math.round(v * 255)));
    const out: [number, number, number] = [9, 9, 9];
    expect(runColorRgb(0, out)).toBe(out); // written in place
  });

  it('hands out the lowest free slot: distinct for up to 8 runs, a freed slot is reused', () => {
    const used: number[] = [];
    for (let k = 0; k < MAX_RUNS; k++) used.push(nextRunColorSlot(used));
    expect(used).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(nextRunColorSlot([0, 2, 3])).toBe(1);
    expect(nextRunColorSlot([1, 2])).toBe(0);
    expect(nextRunColorSlot([])).toBe(0);
    // Every slot taken: repeat in turn rather than fail.
    expect(nextRunColorSlot(used)).toBe(0);
  });
});

describe('run store colour slots and colour mode', () => {
  let stop: () => void;
  beforeAll(() => {
    const profile = loadRobotProfile(OUR_G1);
    setRobotProfile(profile);
    const file = sharedData('motions/g1_moves/npz/B_HandsUp.npz');
    const clip = decodeMotionFile(new Uint8Array(fs.readFileSync(file)), { file: path.basename(file) });
    useClipStore.setState({ loaded: clipFromDto(clipToDto(clip)) });
    stop = startOverlayEngine();
    seekFrame(0);
  });
  afterAll(() => {
    clearRuns();
    stop();
  });

  const slots = () => Object.fromEntries(useRunStore.getState().runs.map((r) => [r.id, r.colorSlot]));

  it('gives each run its own slot, kept while others come and go', () => {
    expect(useRunStore.getState().colorMode).toBe('error'); // the default for ordinary runs
    for (const id of ['sim', 'real0', 'real1', 'real2']) addRun({ id, live: false });
    expect(slots()).toEqual({ sim: 0, real0: 1, real1: 2, real2: 3 });
    removeRun('real0');
    expect(slots()).toEqual({ sim: 0, real1: 2, real2: 3 });
    addRun({ id: 'late', live: false });
    expect(slots()).toEqual({ sim: 0, real1: 2, real2: 3, late: 1 });
    for (let k = 0; useRunStore.getState().runs.length < MAX_RUNS; k++) addRun({ id: `more${k}`, live: false });
    expect(new Set(Object.values(slots())).size).toBe(MAX_RUNS);
  });

  it('switches colour mode, and returns to by-error when the runs are cleared or another clip is loaded', () => {
    setColorMode('run');
    expect(useRunStore.getState().colorMode).toBe('run');
    clearRuns();
    expect(useRunStore.getState().colorMode).toBe('error');
    addRun({ id: 'x', live: false });
    expect(slots()).toEqual({ x: 0 });
    setColorMode('run');
    const clip = useClipStore.getState().loaded!.clip;
    useClipStore.setState({ loaded: clipFromDto(clipToDto(resampleClip(clip, 30))) });
    expect(useRunStore.getState().runs).toEqual([]);
    expect(useRunStore.getState().colorMode).toBe('error');
  });
});
