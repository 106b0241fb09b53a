// The one error map at the console API edge: whatever a handler throws becomes the ApiError the
// operator sees, chosen by the error's TYPE (`instanceof`), never by probing for properties — a
// TraceStoreError has `code` and `path` too, and is not a file-read error. Each typed error keeps
// its own message verbatim and carries its structured details: an InputError's location, a
// refusal's reasons, a store error's own code. Both transports (Electron IPC, the loopback
// WebSocket) answer through this map, and the CLI prints the same messages (src/cli/cliSupport.ts).
// Errors from the file worker come back as their own types first (src/services/console/workerErrors.ts).
// The table, in words, is in docs/CONSOLE.md ("Errors"); change both together.

import { z } from 'zod';
import type { ApiError, ApiErrorCode, ApiErrorOrigin } from '../../api/contract';
import { NotARobotBackendError, WatchOnlyLinkError } from '../../domain/backend/backend';
import { Ros2DefinitionBoundsError } from '../../domain/robotLink/ros2DefinitionBounds';
import { UnitreeDefinitionError } from '../../domain/robotLink/unitreeLowState';
import { InputError, issueKey } from '../../domain/problems';
import { StatsError } from '../../domain/stats/result';
import { ListenerTakenError } from '../../domain/backend/backend';
import { BakedMotionError } from '../../domain/wbc/bakedMotion';
import { JointOrderError } from '../../domain/robot/jointOrder';
import { IkError } from '../../domain/workload/bodyModel';
import { CommandRefusedError } from '../bridge/bridgeClientBackend';
import { EmulatorControlError } from '../robotEmulator/emulatorControlClient';
import { EpisodeFileError } from '../episode/chunkedMcapWriter';
import { FolderRefusedError } from '../files/folders';
import { isSystemError, systemErrorMessage, systemErrorReason, type SystemError } from '../files/systemErrors';
import { QualificationCancelled, QualificationRequestError } from '../qualification/runQualification';
import { RobotSensitivityRefused } from '../analysis/robotSensitivityRunner';
import { BindingSpecError } from '../sim/bindingSpec';
import { ControllerUnavailableError } from '../sim/controllerFactory';
import { OnnxPolicyError } from '../sim/onnxController';
import { SimModelError } from '../sim/simEngine';
import { TraceStoreError, type TraceStoreErrorCode } from '../trace/errors';
import { TrialRefusedError } from '../trial/matchedTrialRunner';
import { PairClipError } from '../trial/pairClip';
import { ClipMismatchError } from '../wbc/policyRun';
import { TrackingPolicyError } from '../wbc/trackingPolicyController';
import { StandingPolicyError } from '../wbc/standingPolicy';
import { FrozenSnapshotMismatchError } from '../workload/coreV1Frozen';
import { WorkloadInputError } from '../workload/folderWorkload';
import { Ros2DefinitionCheckError } from '../robotLink/ros2DefinitionOffThread';
import { ApiFailure, FieldError, UnsupportedError } from './apiFailure';

/** What each trace-store code means at the API: the campaign folder is the operator's input. */
const TRACE_STORE_CODES: Record<TraceStoreErrorCode, ApiErrorCode> = {
  not_found: 'not_found',
  not_a_campaign: 'input_error',
  read_only: 'input_error',
  corrupt: 'input_error',
  schema_too_new: 'unsupported',
  conflict: 'conflict',
  state: 'conflict',
  invalid: 'bad_params',
  busy: 'busy',
  disk_full: 'storage',
  io: 'storage',
};

/**
 * An errno's API code. On a file the operator named (`onFile`), anything not listed is that file's
 * problem (input_error: permission, a folder where a file was expected, …); elsewhere it is internal.
 */
function codeOfErrno(errno: string, onFile: boolean): ApiErrorCode {
  switch (errno) {
    case 'ENOENT':
    case 'ENOTDIR':
      return 'not_found';
    case 'EEXIST':
      return 'conflict';
    case 'ENOSPC':
    case 'EDQUOT':
    case 'EFBIG':
    case 'EIO':
      return 'storage';
    default:
      return onFile ? 'input_error' : 'internal';
  }
}

const origin = (type: string, code: string, path?: string): ApiErrorOrigin => ({
  type,
  code,
  ...(path !== undefined && { path }),
});

const plain = (code: ApiErrorCode) => (e: Error) => ({ code, message: e.message });

function fromSystemError(e: SystemError): ApiError {
  const message = systemErrorMessage(e);
  if (typeof e.path !== 'string')
    return { code: codeOfErrno(e.code, false), message, origin: origin('SystemError', e.code) };
  const reason = systemErrorReason(e.code);
  return {
    code: codeOfErrno(e.code, true),
    message,
    location: { file: e.path },
    reason,
    origin: origin('SystemError', e.code, e.path),
  };
}

function fromZodError(e: z.core.$ZodError): ApiError {
  const reasons = e.issues.map((i) => `${issueKey(i.path)}: ${i.message}`);
  return { code: 'internal', message: reasons.join('; ') || 'schema check failed', reasons };
}

type ErrorClass<E> = abstract new (...args: never[]) => E;
interface Entry<E> {
  type: ErrorClass<E>;
  map(e: E): ApiError;
}
const entry = <E>(type: ErrorClass<E>, map: (e: E) => ApiError): Entry<unknown> => ({ type, map }) as Entry<unknown>;

/** An input error with its location in the file or message (a ROS 2 definition: the schema's line and field). */
const locatedInput = (e: InputError): ApiError => ({
  code: 'input_error',
  message: e.message,
  location: { ...e.location },
  reason: e.reason,
});

/**
 * The table, first match wins: a subclass before its base (WorkloadInputError before InputError).
 * FieldError and system errors are handled before it (a wrapper; no class to match).
 */
const TABLE: readonly Entry<unknown>[] = [
  // The API layer's own.
  entry(ApiFailure, (e) => ({ code: e.code, message: e.message, ...(e.field !== undefined && { field: e.field }) })),
  entry(UnsupportedError, plain('unsupported')),
  // A file the operator named, and where in it.
  entry(WorkloadInputError, (e) => ({
    code: 'input_error',
    message: e.message,
    location: { ...e.location },
    reason: e.reason,
    reasons: e.problems.map((p) => p.message),
  })),
  entry(Ros2DefinitionBoundsError, locatedInput),
  entry(InputError, locatedInput),
  entry(FolderRefusedError, (e) => ({
    code: 'input_error',
    message: e.message,
    origin: origin('FolderRefusedError', e.code, e.path),
  })),
  // The campaign store and its episode files.
  entry(TraceStoreError, (e) => ({
    code: TRACE_STORE_CODES[e.code] ?? 'internal',
    message: e.message,
    origin: origin('TraceStoreError', e.code, e.path),
  })),
  entry(EpisodeFileError, (e) => ({
    code: e.code === 'EINVAL' ? 'internal' : codeOfErrno(e.code, true),
    message: e.message,
    origin: origin('EpisodeFileError', e.code, e.file),
  })),
  // Refusals: a rule said no, and why.
  entry(TrialRefusedError, (e) => ({ code: 'refused', message: e.message, reasons: [...e.reasons] })),
  entry(CommandRefusedError, (e) => ({ code: 'refused', message: e.message, reasons: [] })),
  // The emulator's control channel did not answer, or refused (e.g. a human reset under e-stop).
  entry(EmulatorControlError, (e) => ({ code: 'conflict', message: e.message })),
  entry(NotARobotBackendError, (e) => ({ code: 'refused', message: e.message, reasons: [] })),
  entry(WatchOnlyLinkError, (e) => ({ code: 'refused', message: e.message, reasons: [e.reason] })),
  // A start-state study on the robot that cannot be run as asked (no control channel, a plan beyond
  // the start-pose check, a trial the gate ended): the CLI's today, the console's when it drives one.
  entry(RobotSensitivityRefused, (e) => ({ code: 'refused', message: e.message, reasons: [] })),
  // Requests that cannot run as given.
  entry(QualificationRequestError, plain('bad_params')),
  entry(BindingSpecError, plain('bad_params')),
  entry(ClipMismatchError, plain('bad_params')),
  entry(RangeError, plain('bad_params')),
  entry(PairClipError, plain('conflict')),
  entry(QualificationCancelled, plain('conflict')),
  entry(ControllerUnavailableError, plain('unsupported')),
  // A model or policy file that cannot be used as it is.
  entry(SimModelError, plain('input_error')),
  entry(OnnxPolicyError, plain('input_error')),
  entry(TrackingPolicyError, plain('input_error')),
  entry(StandingPolicyError, plain('input_error')),
  entry(JointOrderError, plain('input_error')),
  // A ROS 2 robot link whose advertised LowState definition is not unitree_hg's (it stays unsubscribed).
  entry(UnitreeDefinitionError, plain('input_error')),
  entry(Ros2DefinitionCheckError, plain('input_error')),
  entry(BakedMotionError, plain('input_error')),
  // The program's own state: not the operator's input.
  entry(FrozenSnapshotMismatchError, (e) => ({ code: 'internal', message: e.message, reasons: [...e.differences] })),
  entry(StatsError, (e) => ({ code: 'internal', message: e.message, origin: origin('StatsError', e.code) })),
  // A second owner of a backend's listener is a wiring fault of the services, never the caller's.
  entry(ListenerTakenError, (e) => ({
    code: 'internal',
    message: e.message,
    origin: origin('ListenerTakenError', e.backendId),
  })),
  entry(IkError, plain('internal')),
  entry(z.core.$ZodError, fromZodError),
];

/** Every error class the map knows by type (FieldError included), for the table's completeness check. */
export const MAPPED_ERROR_TYPES: readonly ErrorClass<unknown>[] = [FieldError, ...TABLE.map((e) => e.type)];

/** Maps anything a handler throws to the ApiError the operator sees. Never throws. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof FieldError) return { ...toApiError(err.error), field: err.field };
  if (isSystemError(err)) return fromSystemError(err);
  for (const { type, map } of TABLE) if (err instanceof type) return map(err);
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'internal', message: message || 'internal error' };
}
