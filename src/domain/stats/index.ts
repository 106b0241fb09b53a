// Statistics for published MotionBench results. Pure TypeScript, no I/O.
// One file per concern:
//   result.ts         StatsError (caller bugs: NaN input, bad arguments) and Unavailable (undefined results)
//   prng.ts           xoshiro128** seeded through SplitMix64 — bit-identical streams on every platform
//   resampling.ts     reproducible bootstrap draws, grouping values into clusters
//   descriptive.ts    mean, median, sample std, numpy-"linear" percentiles
//   bootstrap.ts      mean/median with (episode-)cluster bootstrap percentile CIs
//   spearman.ts       Spearman ρ (average ranks) with bootstrap CI over pairs or clusters
//   incompleteBeta.ts lnΓ (Lanczos) and the regularized incomplete beta function
//   fDistribution.ts  F CDF, survival function and quantiles
//   icc.ts            ICC(A,1) = S&F ICC(2,1) with F test and McGraw & Wong CI; ICC(C,1), ICC(1,1)
//   signedRank.ts     exact Wilcoxon signed-rank null distribution
//   paired.ts         paired median difference (bootstrap CI), Hodges–Lehmann with exact CI
export * from './result';
export * from './prng';
export * from './resampling';
export * from './descriptive';
export * from './bootstrap';
export * from './spearman';
export * from './incompleteBeta';
export * from './fDistribution';
export * from './icc';
export * from './signedRank';
export * from './paired';
