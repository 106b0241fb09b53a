import type { ApiErrorCode } from '../../api/contract';

// The errors the console API layer itself throws. Every other typed error of the services keeps its
// own type up to the API edge, where src/services/console/apiErrorMap.ts maps it by type.

/** A handler's refusal with a chosen API error code (and the request field it concerns). */
export class ApiFailure extends Error {
  override readonly name = 'ApiFailure';
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** A method this transport does not offer (clips.openDialog outside Electron), or a caller it cannot serve. */
export class UnsupportedError extends Error {
  override readonly name = 'UnsupportedError';
}

/**
 * A typed error a handler attributes to one request field (a campaign store's error about
 * `params.campaignDir`, a trial refusal about `params.pairId`). The error map maps `error` by its
 * own type and sets `field`, so the code, the message and the details stay the error's own.
 */
export class FieldError extends Error {
  override readonly name = 'FieldError';
  constructor(
    readonly field: string,
    readonly error: unknown,
  ) {
    super(error instanceof Error ? error.message : String(error), { cause: error });
  }
}
