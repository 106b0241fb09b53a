// Workloads (DESIGN §3): snapshots, the built-in core-v1 generator and the physical checks.
export * from './snapshot';
export {
  CORE_V1_FPS,
  CORE_V1_ID,
  CORE_V1_VERSION,
  coreV1Catalogue,
  generateCoreV1,
  type CoreV1Options,
  type GeneratedCoreV1,
} from './coreV1';
export { BodyModel } from './bodyModel';
export type { RecipeMeta } from './clipBuilder';
export {
  DYNAMIC_LIMITS,
  STANDARD_LIMITS,
  limitsForGroup,
  measureClip,
  physicsViolations,
  type ClipPhysicsReport,
  type Extreme,
  type PhysicsLimits,
  type PhysicsViolation,
} from './physicalChecks';
