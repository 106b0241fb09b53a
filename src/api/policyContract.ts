import { z } from 'zod';
import { presetIds } from '../domain/wbc/policyPresets';
import type { ClipDto } from './clipDto';
import { POLICY_CHECK_MAX_SECONDS, type PolicyCheckReport } from '../domain/wbc/policyCheck';

// Released tracking policies in the console: `policies.open` reads a policy file
// or folder on the machine running the services (as clips.load reads a clip), registers it under
// a content-derived id, and returns what an operator needs to judge it: family, interface, needs,
// physics, and the baked reference motion (registered as a clip, ready to view and run). The
// renderer then names the policy by that id in sim.run and qualification.start bindings — never
// by a path.

/** A registered policy: `policy-` + the first 16 hex digits of its content hash. */
export const POLICY_ID_RE = /^policy-[0-9a-f]{16}$/;

export const policyRequestSchemas = {
  'policies.open': z.strictObject({
    path: z.string().min(1).max(4096),
    /**
     * A declared preset (src/domain/wbc/policyPresets.ts) for an .onnx export that does not carry
     * its own interface; the services check it against the file and refuse it when it does not fit.
     */
    preset: z
      .string()
      .max(200)
      .refine((v) => presetIds().includes(v), {
        message: `not a declared preset (the declared presets are: ${presetIds().join(', ')})`,
      })
      .optional(),
  }),
  /**
   * The evidence of `motionbench policy check` for an opened policy: its own motion (baked or
   * configured), or the clip `clipId` names (a clip the services hold), for at most `seconds`.
   */
  'policies.check': z.strictObject({
    policyId: z.string().regex(POLICY_ID_RE),
    clipId: z.string().min(1).max(200).optional(),
    seconds: z.number().positive().max(POLICY_CHECK_MAX_SECONDS).optional(),
  }),
} as const;

/** The check's report, as the CLI's --json prints it (src/domain/wbc/policyCheck.ts). */
export type PolicyCheckDto = PolicyCheckReport;

export interface PolicyTermDto {
  /** The family's own name for the term. */
  term: string;
  size: number;
  history: number;
}

export interface PolicyInfoDto {
  /** The id to name it by in bindings (sim.run, qualification.start). */
  policyId: string;
  path: string;
  family: string;
  adapter: string;
  bindingId: string;
  bindingVersion: string;
  /** The declared preset the file was read under (`<id>@<version>`), or null: the files carry the interface. */
  preset: string | null;
  files: string[];
  inputs: { name: string; shape: (number | string)[]; dtype: string }[];
  outputs: { name: string; shape: (number | string)[]; dtype: string }[];
  /** 'canonical' | 'isaaclab' | 'custom': how the file orders its joints (remapped by name). */
  jointOrder: string;
  observation: PolicyTermDto[];
  observationSize: number;
  controlRateHz: number;
  physicsId: string;
  timestepS: number;
  decimation: number;
  actionMode: string;
  anchorBody: string;
  needs: string[];
  notes: string[];
  /** The motion the file carries, or null (the policy tracks the clip it is run on). */
  motion: { frames: number; fps: number; clipId: string; fkResidualMaxM: number | null } | null;
  /** That motion as a clip the services hold (null without one). */
  bakedClip: ClipDto | null;
  /**
   * The motion a configuration beside the policy names for it (not carried in the file: a
   * unitree_rl_lab FSM configuration, a HumanoidVerse config's motion_file), or null. `policies.check`
   * runs on it; a sim run needs the clip opened.
   */
  configuredMotion: { file: string; fps: number; source: string } | null;
}

export interface PolicyResults {
  'policies.open': PolicyInfoDto;
  'policies.check': PolicyCheckDto;
}
