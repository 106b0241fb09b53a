// Campaign analysis: uncertainty, reliability, redundancy, minimal clip set, rankings.
// Pure TypeScript on numbers the services read from a campaign. One file per concern:
//   linearAlgebra.ts    small dense Cholesky and symmetric eigen-decomposition
//   ridge.ts            leave-one-out ridge R² (exact PRESS identity)
//   gini.ts             Gini coefficient
//   scoreMatrix.ts      binding × clip scores, complete sub-matrix
//   redundancy.ts       Spearman ρ matrix with CIs and LOO R² per variable
//   clipSelection.ts    greedy minimal clip set under U = g·(1 − R²), with robustness
//   bradleyTerry.ts     Bradley–Terry ranking with clips as judges, bootstrap CIs
//   gapUncertainty.ts   Table 11 with CIs and HL medians; ICC(A,1) reliability across trials
//   campaignAnalysis.ts all of it for one campaign
//   sensitivity.ts      start-state sensitivity: finite-difference Gram, geometry, held-out WAPE, D_G
//   sensitivityPlan.ts  its axes (by joint name, σ from the calibration) and perturbed start states
export * from './linearAlgebra';
export * from './ridge';
export * from './gini';
export * from './scoreMatrix';
export * from './redundancy';
export * from './clipSelection';
export * from './bradleyTerry';
export * from './gapUncertainty';
export * from './campaignAnalysis';
export * from './sensitivity';
export * from './sensitivityPlan';
