import type { ApiError } from '../../../src/api/contract';
import { ApiCallError } from './consoleClient';
import { formatApiError } from './formatApiError';

// What a failed console call (or anything else thrown by an action) says to the operator. Every
// panel's actions catch through these, so one error reads the same wherever it is shown.

/** The services' message of a failed call, or the thrown error's message. */
export function errorMessage(err: unknown): string {
  return err instanceof ApiCallError ? err.error.message : err instanceof Error ? err.message : String(err);
}

/**
 * The whole structured error of a failed call, as formatApiError writes it (location, reason, the
 * reasons the message does not say), or the thrown error's message.
 */
export function errorReport(err: unknown): string {
  return err instanceof ApiCallError ? formatApiError(err.error) : err instanceof Error ? err.message : String(err);
}

/** The structured error of a failed call; anything else thrown becomes an `internal` one. */
export function toApiError(err: unknown): ApiError {
  return err instanceof ApiCallError
    ? err.error
    : { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}
