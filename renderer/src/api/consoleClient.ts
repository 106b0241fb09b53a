import type { ApiError, ApiMethod, ApiParams, ApiResult } from '../../../src/api/contract';
import { createElectronTransport } from './electronTransport';
import type { ApiTransport } from './transport';
import { apiSocketUrl, createWsTransport } from './wsTransport';

/** A failed API call, carrying the structured error from the services. */
export class ApiCallError extends Error {
  override readonly name = 'ApiCallError';
  constructor(readonly error: ApiError) {
    super(error.message);
  }
}

export interface ConsoleClient {
  readonly transport: ApiTransport;
  /** Resolves with the result, or rejects with an ApiCallError. */
  call<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResult<M>>;
}

export function createConsoleClient(transport: ApiTransport): ConsoleClient {
  return {
    transport,
    async call(method, params) {
      const outcome = await transport.invoke(method, params);
      if (!outcome.ok) throw new ApiCallError(outcome.error);
      return outcome.result;
    },
  };
}

/**
 * Picks the transport this page runs under: the Electron preload bridge if present, else the
 * loopback host's WebSocket using the `token` from the page URL. Null when neither is available.
 */
export function connectConsole(): ConsoleClient | null {
  if (window.motionbench) return createConsoleClient(createElectronTransport(window.motionbench));
  const token = new URLSearchParams(window.location.search).get('token');
  if (!token || !window.location.protocol.startsWith('http')) return null;
  return createConsoleClient(createWsTransport(apiSocketUrl(window.location.href, token)));
}
