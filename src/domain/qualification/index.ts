// Qualification (DESIGN §1 step 2): the admission policy, per-rollout measures,
// the decision with its reasons, seeded start perturbations and the qualification matrix. Pure.
// See docs/QUALIFICATION.md.
export * from './policy';
export * from './measures';
export * from './perturbation';
export * from './decision';
export * from './matrix';
export * from './pairing';
export * from './campaignProgress';
