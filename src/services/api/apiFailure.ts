import type { ApiErrorCode } from '../../api/contract';

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
