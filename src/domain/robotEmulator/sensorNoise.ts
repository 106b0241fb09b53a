import { Xoshiro128StarStar } from '../stats/prng';

// Seeded sensor noise of the robot emulator: standard normal draws (Box–Muller on the stats
// module's xoshiro128**), so a profile seed gives the same noise sequence on every run.

export class GaussianNoise {
  private readonly rng: Xoshiro128StarStar;
  private spare: number | null = null;

  constructor(readonly seed: number) {
    this.rng = new Xoshiro128StarStar(seed);
  }

  /** One standard normal draw. */
  next(): number {
    if (this.spare !== null) {
      const s = this.spare;
      this.spare = null;
      return s;
    }
    // u1 in (0, 1]: log never sees 0.
    const u1 = 1 - this.rng.nextFloat();
    const u2 = this.rng.nextFloat();
    const r = Math.sqrt(-2 * Math.log(u1));
    this.spare = r * Math.sin(2 * Math.PI * u2);
    return r * Math.cos(2 * Math.PI * u2);
  }

  /** Adds N(0, σ²) to each element of `a` (nothing when σ = 0, not even a draw). */
  perturb(a: Float64Array, sigma: number): void {
    if (sigma === 0) return;
    for (let i = 0; i < a.length; i++) a[i] += sigma * this.next();
  }

  /**
   * Rotates the wxyz quaternion q[0..4) by a small random rotation (rotation vector with N(0, σ²)
   * components, applied on the left, in the world frame) and renormalises it.
   */
  perturbAttitude(q: Float64Array, sigmaRad: number): void {
    if (sigmaRad === 0) return;
    const rx = sigmaRad * this.next();
    const ry = sigmaRad * this.next();
    const rz = sigmaRad * this.next();
    const angle = Math.hypot(rx, ry, rz);
    const h = angle / 2;
    const s = angle > 1e-12 ? Math.sin(h) / angle : 0.5;
    const dw = Math.cos(h);
    const dx = rx * s;
    const dy = ry * s;
    const dz = rz * s;
    const [w, x, y, z] = [q[0], q[1], q[2], q[3]];
    const nw = dw * w - dx * x - dy * y - dz * z;
    const nx = dw * x + dx * w + dy * z - dz * y;
    const ny = dw * y - dx * z + dy * w + dz * x;
    const nz = dw * z + dx * y - dy * x + dz * w;
    const n = Math.hypot(nw, nx, ny, nz);
    q[0] = nw / n;
    q[1] = nx / n;
    q[2] = ny / n;
    q[3] = nz / n;
  }
}
