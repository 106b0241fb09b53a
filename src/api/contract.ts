import { z } from 'zod';
import { connectionIdSchema } from './idSchemas';
import type { InputLocation } from '../domain/problems';
import type { RobotProfile } from '../domain/robot/robotProfile';
import type { ExecutionDomain, Presence, Problem } from '../domain/backend/backend';
import {
  DDS_DOMAIN_ID_MAX,
  DDS_INTERFACE_NAME_MAX_CHARS,
  STANDING_POLICY_PATH_MAX_CHARS,
  DDS_INTERFACE_NAME_RE,
} from '../domain/g1Runner/g1DdsConnection';
import type { ClipDto } from './clipDto';
import { checkBackendUrl, MAX_BACKEND_URL_LENGTH } from './connectionUrl';
import { qualificationRequestSchemas, type QualificationResults } from './qualificationContract';
import { simRequestSchemas, type ApiEvent, type SimRunResult, type SimRunStarted } from './simContract';
import { trialRequestSchemas, type TrialResults } from './trialContract';
import { analysisRequestSchemas, type AnalysisResults } from './analysisContract';
import { gapRequestSchemas, type GapResults } from './gapContract';
import { policyRequestSchemas, type PolicyResults } from './policyContract';

export * from './liveContract';
export * from './simContract';
export * from './qualificationContract';
export * from './trialContract';
export * from './gapContract';
export * from './analysisContract';

// The console API: one typed contract shared by both transports (Electron IPC and the loopback
// WebSocket of `motionbench host`) and by the renderer. Every request is `{ method, params }`;
// params are validated with the zod schemas below where a request enters the Node side
// (main process, host server) before it reaches the handler table in
// src/services/console/consoleApiHandlers.ts. Results are plain JSON: typed arrays travel as
// number[] and are turned back into Float64Array in the renderer (renderer/src/api/clipDto.ts).

/** Largest request accepted by either transport, bytes (a clip's base64 body included). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** What clips.decode's bytesBase64 must match (checked in the file worker, off the services' loop). */
export const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;
/** Largest clip file accepted through clips.decode, bytes (base64 inflates by 4/3). */
export const MAX_CLIP_FILE_BYTES = Math.floor(((MAX_MESSAGE_BYTES - 64 * 1024) * 3) / 4);

/** Frame rates an operator may state for a clip; anything else is a typo. */
const fpsSchema = z.number().finite().gt(0).max(10_000);

/** Largest mesh file robot.getMesh sends, bytes (base64 inflates by 4/3). */
export const MAX_MESH_FILE_BYTES = 40 * 1024 * 1024;

/** Id of a Connections entry: `embedded-sim`, `remote-<n>`. */

/** A ws:// or wss:// URL; the reason for a refusal is the one the Connections panel shows. */
const backendUrlSchema = z
  .string()
  .max(MAX_BACKEND_URL_LENGTH)
  .superRefine((v, ctx) => {
    const r = checkBackendUrl(v);
    if (!r.ok) ctx.addIssue({ code: 'custom', message: r.reason });
  });

export const requestSchemas = {
  'app.info': z.strictObject({}),
  'robot.getProfile': z.strictObject({}),
  /**
   * The bytes of one mesh the loaded robot model references (by its MJCF asset name, as in
   * GeomSpec.mesh.name). Never an arbitrary path: names the profile does not use are not_found.
   */
  'robot.getMesh': z.strictObject({ name: z.string().min(1).max(256) }),
  /** Reads a clip file from the machine running the services. */
  'clips.load': z.strictObject({
    path: z.string().min(1).max(4096),
    fps: fpsSchema.optional(),
  }),
  /** Decodes clip bytes the user picked in the renderer (browser file input). */
  'clips.decode': z.strictObject({
    fileName: z.string().min(1).max(1024),
    // Only its length is judged here (on the services' event loop, a regex over 64 MB takes ~120 ms);
    // its alphabet is checked where it is decoded, in the file worker (BASE64_RE).
    bytesBase64: z.string().max(Math.ceil(MAX_CLIP_FILE_BYTES / 3) * 4),
    fps: fpsSchema.optional(),
  }),
  /** Electron only: the native "Open clip…" dialog, then clips.load on the chosen file. */
  'clips.openDialog': z.strictObject({
    fps: fpsSchema.optional(),
  }),
  /** Every endpoint with its status; the embedded simulator is always first. */
  'connections.list': z.strictObject({}),
  /**
   * Adds a remote endpoint (g1-bridge/1 over foxglove.websocket.v1) and starts connecting: a
   * simulator (default) or the physical robot (`kind: 'robot'`: robot link limits, stale 50 ms, lost 100 ms).
   */
  'connections.add': z.strictObject({ url: backendUrlSchema, kind: z.enum(['remote_simulator', 'robot']).optional() }),
  /**
   * Adds "G1 over DDS": the services start `motionbench g1-runner` on a free loopback port for this
   * network interface and DDS domain, with what the operator declares keeps the robot up after a
   * clip (`gantry`: it hangs on one; `standing_policy`: the standing controller in the folder
   * `standingPolicy`), and connect to it as the robot (robot link limits). Removing or
   * disconnecting the entry stops the runner.
   */
  'connections.addG1Dds': z.strictObject({
    interface: z
      .string()
      .min(1)
      .max(DDS_INTERFACE_NAME_MAX_CHARS)
      .regex(DDS_INTERFACE_NAME_RE, 'letters, digits, _ . - (e.g. lo, eth0, enp3s0)'),
    domain: z.number().int().min(0).max(DDS_DOMAIN_ID_MAX),
    afterClip: z.enum(['gantry', 'standing_policy']),
    /** Required with standing_policy: unitree_rl_lab's G1 velocity policy folder on the console's machine. */
    standingPolicy: z.string().min(1).max(STANDING_POLICY_PATH_MAX_CHARS).optional(),
  }),
  /** Disconnects and forgets a remote entry (the embedded simulator cannot be removed). */
  'connections.remove': z.strictObject({ id: connectionIdSchema }),
  /** Creates the entry's backend if needed (starts the embedded simulator, dials a remote one). */
  'connections.connect': z.strictObject({ id: connectionIdSchema }),
  /** Closes the entry's backend; the entry stays listed. */
  'connections.disconnect': z.strictObject({ id: connectionIdSchema }),
  // sim.run, sim.stop, sim.result, events.ack: see simContract.ts.
  ...simRequestSchemas,
  // qualification.*: see qualificationContract.ts.
  ...qualificationRequestSchemas,
  // interlock.*, calibration.*, trial.*: see trialContract.ts.
  ...trialRequestSchemas,
  // gap.*: see gapContract.ts.
  ...gapRequestSchemas,
  // analysis.run: see analysisContract.ts.
  ...analysisRequestSchemas,
  ...policyRequestSchemas,
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

// The clip's wire form (ClipDto, MAX_WARNINGS_SENT) is declared beside its conversions in clipDto.ts,
// which the sub-contracts import without importing this file.
export { MAX_WARNINGS_SENT, type ClipDto } from './clipDto';

export type OpenDialogResult = { cancelled: true } | { cancelled: false; clip: ClipDto };

export type MeshFormat = 'stl' | 'obj';

/** One mesh file of the loaded model, as robot.getMesh returns it. */
export interface MeshDto {
  /** MJCF asset name. */
  name: string;
  format: MeshFormat;
  byteLength: number;
  bytesBase64: string;
}

export type ConnectionKind = 'embedded_simulator' | 'remote_simulator' | 'robot';

/** One endpoint in the Connections panel (DESIGN §8). */
export interface ConnectionInfo {
  id: string;
  kind: ConnectionKind;
  /** "Embedded simulator (MuJoCo)", or the remote URL's host:port. */
  name: string;
  /** Remote endpoints: the normalised ws:// or wss:// URL; null for the embedded simulator and G1 over DDS. */
  url: string | null;
  /**
   * "G1 over DDS" entries: the interface and domain the services' runner drives, and the ws:// URL
   * of that runner while it runs (else null). Absent for every other entry.
   */
  dds?: { interface: string; domain: number; runnerUrl: string | null };
  executionDomain: ExecutionDomain;
  /** The backend's link state; 'disconnected' while no backend exists for the entry. */
  presence: Presence;
  /** A backend instance exists (the embedded simulator is created on first use). */
  active: boolean;
  /** False when this build has no backend implementation for the entry's kind. */
  available: boolean;
  /** Measured state-frame rate over the last 2 s, Hz; null when no frames arrived. */
  rateHz: number | null;
  /** The rate the backend declares, Hz; null while there is no backend. */
  declaredRateHz: number | null;
  /** Milliseconds since the last state frame; null when none arrived yet. */
  lastFrameAgeMs: number | null;
  /** Link round-trip latency, ms, when the backend measures it; else null. */
  latencyMs: number | null;
  /** The run holding the backend's lease, if any. */
  leasedRunId: string | null;
  /**
   * Current problems only, at most MAX_PROBLEMS_SENT: the conditions that hold (newest first), then
   * incidents of the last 10 s (newest first). `code` is a BackendProblemCode
   * (src/domain/backend/problemCodes.ts), typed as string here so that a newer backend's code reads.
   */
  problems: Problem[];
  /** Remote entries can be removed; the embedded simulator cannot. */
  removable: boolean;
}

export const MAX_PROBLEMS_SENT = 8;

export interface ApiResults extends QualificationResults, TrialResults, GapResults, AnalysisResults, PolicyResults {
  'app.info': AppInfo;
  'robot.getProfile': RobotProfile;
  'robot.getMesh': MeshDto;
  'clips.load': ClipDto;
  'clips.decode': ClipDto;
  'clips.openDialog': OpenDialogResult;
  'connections.list': ConnectionInfo[];
  'connections.add': ConnectionInfo;
  'connections.addG1Dds': ConnectionInfo;
  'connections.remove': { removed: string };
  'connections.connect': ConnectionInfo;
  'connections.disconnect': ConnectionInfo;
  'sim.run': SimRunStarted;
  /** The runs a stop reached (already-ended runs are not listed). */
  'sim.stop': { stopped: string[] };
  'sim.result': SimRunResult;
  'events.ack': { seq: number };
}

export type ApiResult<M extends ApiMethod> = ApiResults[M];

// ---- errors --------------------------------------------------------------------------------

/**
 * Every code an ApiError may carry. The services' typed errors are mapped to these in one place,
 * by error type (src/services/console/apiErrorMap.ts; the table is in docs/CONSOLE.md, "Errors").
 */
export const API_ERROR_CODES = [
  /** The message is not valid JSON or not a {id, method, params} object. */
  'bad_request',
  'unknown_method',
  /** The params do not fit the method (or, past validation, contradict each other). */
  'bad_params',
  'too_large',
  /** A user file or folder could not be read, decoded or used; `location` says where when known. */
  'input_error',
  'not_found',
  /** The method exists but this transport (or this build) does not offer it. */
  'unsupported',
  /** The request contradicts the current state (a URL already listed, an entry that cannot be removed). */
  'conflict',
  /** Another process holds what the request needs (the campaign database's lock): try again later. */
  'busy',
  /** A rule refused the request (a trial on a pair not admitted, a command the robot declined); `reasons` says why. */
  'refused',
  /** The disk failed the request: no space left, a file-size limit, an I/O error. */
  'storage',
  'internal',
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/** The typed error behind an ApiError, where it has a code of its own (TraceStoreError 'busy', errno 'ENOENT'). */
export interface ApiErrorOrigin {
  /** The error's type: TraceStoreError, FolderRefusedError, EpisodeFileError, StatsError, SystemError (errno). */
  type: string;
  /** Its own code: a TraceStoreErrorCode, a FolderRefusal, an errno name, a StatsErrorCode. */
  code: string;
  /** The file or folder concerned, where the error names one. */
  path?: string;
}

export interface ApiError {
  code: ApiErrorCode;
  /** The error's own message, verbatim. */
  message: string;
  /** The offending request field, dotted (e.g. `params.fps`). */
  field?: string;
  /** For input_error: where in the user's file. */
  location?: InputLocation;
  /** For input_error: what is wrong, without the location. */
  reason?: string;
  /** Every reason, verbatim and in order: a refusal's (always, for refused), a folder's several problems. */
  reasons?: string[];
  origin?: ApiErrorOrigin;
}

/** ApiError as a schema: what either transport may answer (tests hold every mapped error to it). */
export const apiErrorSchema = z.strictObject({
  code: z.enum(API_ERROR_CODES),
  message: z.string(),
  field: z.string().optional(),
  location: z
    .strictObject({
      file: z.string(),
      line: z.number().int().optional(),
      column: z.number().int().optional(),
      key: z.string().optional(),
    })
    .optional(),
  reason: z.string().optional(),
  reasons: z.array(z.string()).optional(),
  origin: z.strictObject({ type: z.string(), code: z.string(), path: z.string().optional() }).optional(),
}) satisfies z.ZodType<ApiError>;

export type ApiOutcome<M extends ApiMethod = ApiMethod> =
  { ok: true; result: ApiResult<M> } | { ok: false; error: ApiError };

// ---- WebSocket framing (loopback host) -----------------------------------------------------

/** One request frame on the WebSocket. `id` is echoed in the response. */
export const wsRequestSchema = z.strictObject({
  id: z.union([z.string().max(128), z.number().int()]),
  method: z.string().max(128),
  params: z.unknown().optional(),
});

export type WsRequest = z.infer<typeof wsRequestSchema>;
export type WsResponse =
  { id: string | number | null; result: unknown } | { id: string | number | null; error: ApiError };
/** A server→client push on the WebSocket (no id: it answers no request). */
export interface WsEventMessage {
  event: ApiEvent;
}
export type WsServerMessage = WsResponse | WsEventMessage;

/** WebSocket path of the console API on the loopback host. */
export const WS_API_PATH = '/api';

export { IPC_EVENT_CHANNEL, IPC_INVOKE_CHANNEL } from './ipcChannel';

/** What the preload exposes on `window.motionbench`. */
export interface MotionbenchBridge {
  invoke<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiOutcome<M>>;
  /** Server→client pushes (live.frames, sim.end, …); unvalidated here, the renderer checks them. Returns an unsubscribe. */
  onEvent(listener: (event: unknown) => void): () => void;
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
