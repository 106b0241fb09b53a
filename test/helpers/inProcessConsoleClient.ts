import type { ApiMethod, ApiParams } from '../../src/api/contract';
import type { ConsoleApi } from '../../src/services/console/consoleApiHandlers';
import { ApiCallError, type ConsoleClient } from '../../renderer/src/api/consoleClient';

/**
 * The renderer's console client wired to the console services in this process (no host, no
 * socket): each call goes to `api`, an error answer rejects with an ApiCallError as over the wire.
 * `intercept` sees every call first (method and params) and answers it itself when it returns a
 * value other than undefined.
 */
export function inProcessConsoleClient(
  api: ConsoleApi,
  intercept?: <M extends ApiMethod>(method: M, params: ApiParams<M>) => unknown,
): ConsoleClient {
  return {
    transport: null as never,
    async call<M extends ApiMethod>(method: M, params: ApiParams<M>) {
      const answer = intercept?.(method, params);
      if (answer !== undefined) return answer as never;
      const r = await api.invoke(method, params);
      if (!r.ok) throw new ApiCallError(r.error);
      return r.result as never;
    },
  };
}
