import { z } from 'zod';
import type { InputLocation, Warning } from '../domain/problems';
import type { ClipFormat, FpsSource } from '../domain/motion/motionClip';
import type { RobotProfile } from '../domain/robot/robotProfile';

// The console API: one typed contract shared by both transports (Electron IPC and the loopback
// WebSocket of `motionbench host`) and by the renderer. Every request is `{ method, params }`;
// params are validated with the zod schemas below where a request enters the Node side
// (main process, host server) before it reaches the handler table in
// src/services/api/consoleApiHandlers.ts. Results are plain JSON: typed arrays travel as
// number[] and are turned back into Float64Array in the renderer (renderer/src/api/clipDto.ts).

/** Largest request accepted by either transport, bytes (a clip's base64 body included). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Largest clip file accepted through clips.decode, bytes (base64 inflates by 4/3). */
export const MAX_CLIP_FILE_BYTES = Math.floor(((MAX_MESSAGE_BYTES - 64 * 1024) * 3) / 4);

/** Frame rates an operator may state for a clip; anything else is a typo. */
const fpsSchema = z.number().finite().gt(0).max(10_000);

export const requestSchemas = {
  'app.info': z.strictObject({}),
  'robot.getProfile': z.strictObject({}),
  /** Reads a clip file from the machine running the services. */
  'clips.load': z.strictObject({
    path: z.string().min(1).max(4096),
    fps: fpsSchema.optional(),
  }),
  /** Decodes clip bytes the user picked in the renderer (browser file input). */
  'clips.decode': z.strictObject({
    fileName: z.string().min(1).max(1024),
    bytesBase64: z
      .string()
      .max(Math.ceil(MAX_CLIP_FILE_BYTES / 3) * 4)
      .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'not base64'),
    fps: fpsSchema.optional(),
  }),
  /** Electron only: the native "Open clip…" dialog, then clips.load on the chosen file. */
  'clips.openDialog': z.strictObject({
    fps: fpsSchema.optional(),
  }),
} as const;

export type ApiMethod = keyof typeof requestSchemas;
export const API_METHODS = Object.keys(requestSchemas) as ApiMethod[];
export type ApiParams<M extends ApiMethod> = z.infer<(typeof requestSchemas)[M]>;

export const isApiMethod = (m: unknown): m is ApiMethod =>
  typeof m === 'string' && Object.prototype.hasOwnProperty.call(requestSchemas, m);

// ---- results -------------------------------------------------------------------------------

export type Transport = 'electron' | 'host';

export interface AppInfo {
  name: string;
  version: string;
  transport: Transport;
  /** The robot model file the services use. */
  modelFile: string;
  /** What this transport can do beyond the common API. */
  capabilities: { nativeOpenDialog: boolean };
}

/** A MotionClip as it crosses the boundary: typed arrays as number[]. */
export interface ClipDto {
  id: string;
  name: string;
  fps: number;
  frameCount: number;
  /** (frameCount - 1) / fps, seconds. */
  durationS: number;
  file: string;
  format: ClipFormat;
  fileSha256: string;
  fpsSource: FpsSource;
  capabilityGroup?: string;
  /** N×3, metres. */
  rootPosM: number[];
  /** N×4, wxyz. */
  rootQuatWxyz: number[];
  /** N×29, radians, canonical G1 order. */
  jointPosRad: number[];
  /** At most MAX_WARNINGS_SENT warnings; warningCount is the full count. */
  warnings: Warning[];
  warningCount: number;
}

export const MAX_WARNINGS_SENT = 200;

export type OpenDialogResult = { cancelled: true } | { cancelled: false; clip: ClipDto };

export interface ApiResults {
  'app.info': AppInfo;
  'robot.getProfile': RobotProfile;
  'clips.load': ClipDto;
  'clips.decode': ClipDto;
  'clips.openDialog': OpenDialogResult;
}

export type ApiResult<M extends ApiMethod> = ApiResults[M];

// ---- errors --------------------------------------------------------------------------------

export type ApiErrorCode =
  /** The message is not valid JSON or not a {id, method, params} object. */
  | 'bad_request'
  | 'unknown_method'
  | 'bad_params'
  | 'too_large'
  /** A user file could not be read or decoded; `location` says where. */
  | 'input_error'
  | 'not_found'
  /** The method exists but this transport does not offer it. */
  | 'unsupported'
  | 'internal';

export interface ApiError {
  code: ApiErrorCode;
  message: string;
  /** The offending request field, dotted (e.g. `params.fps`). */
  field?: string;
  /** For input_error: where in the user's file. */
  location?: InputLocation;
  /** For input_error: what is wrong, without the location. */
  reason?: string;
}

export type ApiOutcome<M extends ApiMethod = ApiMethod> = { ok: true; result: ApiResult<M> } | { ok: false; error: ApiError };

// ---- WebSocket framing (loopback host) -----------------------------------------------------

/** One request frame on the WebSocket. `id` is echoed in the response. */
export const wsRequestSchema = z.strictObject({
  id: z.union([z.string().max(128), z.number().int()]),
  method: z.string().max(128),
  params: z.unknown().optional(),
});

export type WsRequest = z.infer<typeof wsRequestSchema>;
export type WsResponse = { id: string | number | null; result: unknown } | { id: string | number | null; error: ApiError };

/** WebSocket path of the console API on the loopback host. */
export const WS_API_PATH = '/api';

export { IPC_INVOKE_CHANNEL } from './ipcChannel';

/** What the preload exposes on `window.motionbench`. */
export interface MotionbenchBridge {
  invoke<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiOutcome<M>>;
}

/**
 * Validates method and params of one request. Returns the parsed params or a structured error
 * naming the first offending field.
 */
export function parseRequest(
  method: unknown,
  params: unknown,
): { ok: true; method: ApiMethod; params: ApiParams<ApiMethod> } | { ok: false; error: ApiError } {
  if (!isApiMethod(method)) {
    return {
      ok: false,
      error: {
        code: 'unknown_method',
        message: `unknown method ${JSON.stringify(method)}; known: ${API_METHODS.join(', ')}`,
        field: 'method',
      },
    };
  }
  const parsed = requestSchemas[method].safeParse(params ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = (issue?.path ?? []).map(String);
    if (issue?.code === 'unrecognized_keys' && issue.keys.length > 0) path.push(issue.keys[0]);
    const field = ['params', ...path].join('.');
    const code: ApiErrorCode = issue?.code === 'too_big' ? 'too_large' : 'bad_params';
    return { ok: false, error: { code, message: `${method}: ${field}: ${issue?.message ?? 'invalid'}`, field } };
  }
  return { ok: true, method, params: parsed.data };
}
