// Errors across the file worker's thread boundary (offThread.ts ⇄ fileWorker.ts). A structured
// clone keeps only the message of a custom Error, so each error the worker's tasks can throw is
// sent as its type and its fields, and rebuilt on the main thread as THE SAME TYPE: the API's error
// map (src/services/console/apiErrorMap.ts) works by `instanceof`, and a TraceStoreError must not come
// back as an Error that merely has `code` and `path`. What the tasks throw: InputError (clip
// decoding, policy files), BakedMotionError and JointOrderError (policy files), ApiFailure, FieldError, TraceStoreError, FolderRefusedError, EpisodeFileError (the
// campaign open), Node's system errors, and the standard JS errors. Anything else comes back as an
// Error with its name and message.

import type { ApiErrorCode } from '../../api/contract';
import { InputError, type InputLocation } from '../../domain/problems';
import { BakedMotionError } from '../../domain/wbc/bakedMotion';
import { JointOrderError } from '../../domain/robot/jointOrder';
import { ApiFailure, FieldError, UnsupportedError } from './apiFailure';
import { EpisodeFileError } from '../episode/chunkedMcapWriter';
import { TraceStoreError, type TraceStoreErrorCode } from '../trace/errors';
import { FolderRefusedError, type FolderRefusal } from '../files/folders';
import { isSystemError } from '../files/systemErrors';

export type SerializedError =
  | { type: 'InputError'; location: InputLocation; reason: string }
  | { type: 'ApiFailure'; code: ApiErrorCode; message: string; field?: string }
  | { type: 'UnsupportedError'; message: string }
  | { type: 'BakedMotionError' | 'JointOrderError'; message: string }
  | { type: 'FieldError'; field: string; error: SerializedError }
  | { type: 'TraceStoreError'; code: TraceStoreErrorCode; path: string; message: string }
  | { type: 'FolderRefusedError'; code: FolderRefusal; path: string; message: string }
  | { type: 'EpisodeFileError'; file: string; code: string; action: string }
  | { type: 'SystemError'; message: string; errno: number; code: string; syscall: string; path?: string; dest?: string }
  /** Any other error: a standard constructor (RangeError, TypeError, …) by name, else Error keeping the name. */
  | { type: 'Error'; name: string; message: string };

/** The JS constructors rebuilt by name. */
const STANDARD: Record<string, ErrorConstructor> = {
  Error,
  RangeError,
  TypeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

/** An error as it crosses the thread boundary (worker → main): its type and the fields that rebuild it. */
export function serializeError(err: unknown): SerializedError {
  if (err instanceof InputError) return { type: 'InputError', location: { ...err.location }, reason: err.reason };
  if (err instanceof ApiFailure)
    return {
      type: 'ApiFailure',
      code: err.code,
      message: err.message,
      ...(err.field !== undefined && { field: err.field }),
    };
  if (err instanceof UnsupportedError) return { type: 'UnsupportedError', message: err.message };
  if (err instanceof BakedMotionError) return { type: 'BakedMotionError', message: err.message };
  if (err instanceof JointOrderError) return { type: 'JointOrderError', message: err.message };
  if (err instanceof FieldError) return { type: 'FieldError', field: err.field, error: serializeError(err.error) };
  if (err instanceof TraceStoreError)
    return { type: 'TraceStoreError', code: err.code, path: err.path, message: err.message };
  if (err instanceof FolderRefusedError)
    return { type: 'FolderRefusedError', code: err.code, path: err.path, message: err.message };
  if (err instanceof EpisodeFileError)
    return { type: 'EpisodeFileError', file: err.file, code: err.code, action: err.action };
  if (isSystemError(err))
    return {
      type: 'SystemError',
      message: err.message,
      errno: err.errno,
      code: err.code,
      syscall: err.syscall,
      ...(typeof err.path === 'string' && { path: err.path }),
      ...(typeof err.dest === 'string' && { dest: err.dest }),
    };
  if (err instanceof Error) return { type: 'Error', name: err.name, message: err.message };
  return { type: 'Error', name: 'Error', message: String(err) };
}

/** The error again on this side, as the type it was in the worker. */
export function reviveError(s: SerializedError): Error {
  switch (s.type) {
    case 'InputError':
      return new InputError(s.location, s.reason);
    case 'ApiFailure':
      return new ApiFailure(s.code, s.message, s.field);
    case 'UnsupportedError':
      return new UnsupportedError(s.message);
    case 'BakedMotionError':
      return new BakedMotionError(s.message);
    case 'JointOrderError':
      return new JointOrderError(s.message);
    case 'FieldError':
      return new FieldError(s.field, reviveError(s.error));
    case 'TraceStoreError':
      return new TraceStoreError(s.code, s.path, s.message);
    case 'FolderRefusedError':
      return new FolderRefusedError(s.code, s.path, s.message);
    case 'EpisodeFileError':
      return new EpisodeFileError(s.file, s.code, s.action);
    case 'SystemError': {
      const { type: _type, message, ...fields } = s;
      return Object.assign(new Error(message), fields);
    }
    case 'Error': {
      const Ctor = Object.hasOwn(STANDARD, s.name) ? STANDARD[s.name] : Error;
      const e = new Ctor(s.message);
      if (e.name !== s.name) e.name = s.name;
      return e;
    }
  }
}
