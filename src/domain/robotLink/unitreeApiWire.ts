// Unitree's request/response services over DDS (the RPC under unitree_sdk2's Client/Server and
// unitree_sdk2_python's rpc package), and the motion switcher's CheckMode on top of it.
//
// Sources (read, not copied): unitree_sdk2 include/unitree/robot/channel/channel_namer.hpp (topic
// prefix "rt/api/", client sends on "/request", receives on "/response"),
// include/unitree/robot/internal/internal_idl_decl/*.hpp (the types and their fields),
// include/unitree/robot/client/client_base.hpp (ROBOT_CLIENT_TIMEOUT = 1 s),
// include/unitree/robot/b2/motion_switcher/motion_switcher_api.hpp (service "motion_switcher",
// API ids 1001..1005, the {"name", "form"} JSON); unitree_sdk2_python unitree_sdk2py/rpc/
// client_base.py and client_stub.py (request id = a monotonic ns clock; a response is matched to
// its request by header.identity.id, a mismatched api_id is an error, a status code ≠ 0 is the
// service's error), unitree_sdk2py/rpc/internal.py (error codes),
// example/motionSwitcher/motion_switcher_example.py (mode names "ai", "normal", "advanced",
// "ai-w"); unitree_sdk2 example/g1/low_level/*.cpp (a low-level program may run only while
// CheckMode's name is empty: they release the mode and re-check until it is).

import { InputError } from '../problems';

export const API_REQUEST_TYPE_NAME = 'unitree_api::msg::dds_::Request_';
export const API_RESPONSE_TYPE_NAME = 'unitree_api::msg::dds_::Response_';
/** Bounds the addon enforces on the unbounded string and octet sequence (native/dds/ddsLink.c). */
export const API_TEXT_MAX_BYTES = 65536;
export const API_BINARY_MAX_BYTES = 65536;

/** unitree_api Request_: header {identity {id, api_id}, lease {id}, policy {priority, noreply}}, parameter, binary. */
export interface ApiRequest {
  identityId: bigint;
  apiId: bigint;
  leaseId: bigint;
  priority: number;
  noreply: boolean;
  /** JSON text, as the SDK's clients write it. */
  parameter: string;
  binary: Uint8Array;
}

/** unitree_api Response_: header {identity {id, api_id} (copied from the request), status {code}}, data, binary. */
export interface ApiResponse {
  identityId: bigint;
  apiId: bigint;
  code: number;
  /** JSON text, as the SDK's servers write it. */
  data: string;
  binary: Uint8Array;
}

/** The DDS topics of a service, as a client sees them: it writes `request`, reads `response`. */
export function serviceTopics(serviceName: string): { request: string; response: string } {
  return { request: `rt/api/${serviceName}/request`, response: `rt/api/${serviceName}/response` };
}

export const MOTION_SWITCHER_SERVICE = 'motion_switcher';
export const MOTION_SWITCHER_TOPICS = serviceTopics(MOTION_SWITCHER_SERVICE);
export const MOTION_SWITCHER_API_ID = {
  checkMode: 1001,
  selectMode: 1002,
  releaseMode: 1003,
  setSilent: 1004,
  getSilent: 1005,
} as const;
/** The SDK client's default timeout (ROBOT_CLIENT_TIMEOUT, 1 s). */
export const SDK_CLIENT_TIMEOUT_MS = 1000;
/** unitree_sdk2py rpc/internal.py: the server has no handler for the api id. */
export const RPC_ERR_SERVER_API_NOT_IMPL = 3203;

/** CheckMode's request, as MotionSwitcherClient.CheckMode writes it: parameter "{}", lease 0, priority 0. */
export function checkModeRequest(identityId: bigint): ApiRequest {
  return {
    identityId,
    apiId: BigInt(MOTION_SWITCHER_API_ID.checkMode),
    leaseId: 0n,
    priority: 0,
    noreply: false,
    parameter: '{}',
    binary: new Uint8Array(0),
  };
}

/** CheckMode's answer: the high-level mode that owns the motors ("" = none) and the robot's form. */
export interface MotionMode {
  name: string;
  form: string;
}

/** The response a motion switcher gives to `request` (the emulated robot's service). */
export function checkModeResponse(request: ApiRequest, mode: MotionMode): ApiResponse {
  const body: Record<string, string> = { name: mode.name };
  if (mode.form !== '') body.form = mode.form;
  return {
    identityId: request.identityId,
    apiId: request.apiId,
    code: 0,
    data: JSON.stringify(body),
    binary: new Uint8Array(0),
  };
}

/**
 * CheckMode's `data` read as the SDK's JsonizeModeName does: `name` required (a string), `form`
 * optional. Throws InputError naming the field.
 */
export function parseCheckModeData(data: string): MotionMode {
  const where = { file: `${MOTION_SWITCHER_TOPICS.response} Response_.data` };
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch (err) {
    throw new InputError(where, `not JSON: ${(err as Error).message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InputError(where, 'not a JSON object');
  const o = v as Record<string, unknown>;
  if (typeof o.name !== 'string') throw new InputError({ ...where, key: 'name' }, 'missing or not a string');
  if (o.form !== undefined && typeof o.form !== 'string')
    throw new InputError({ ...where, key: 'form' }, 'not a string');
  return { name: o.name, form: typeof o.form === 'string' ? o.form : '' };
}
