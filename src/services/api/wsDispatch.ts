import type { WsResponse } from '../../api/contract';
import { MAX_MESSAGE_BYTES, wsRequestSchema } from '../../api/contract';
import type { CallContext, ConsoleApi } from './consoleApiHandlers';

// JSON-RPC-ish framing of the console API on a WebSocket: {id, method, params} in,
// {id, result} | {id, error} out. A bad frame gets a structured error with id null (or the id,
// when it could be read); it never closes the connection.

export async function dispatchWsMessage(api: ConsoleApi, data: string, maxBytes = MAX_MESSAGE_BYTES, ctx: CallContext = {}): Promise<WsResponse> {
  if (data.length > maxBytes) {
    return { id: null, error: { code: 'too_large', message: `message of ${data.length} bytes exceeds the ${maxBytes}-byte limit` } };
  }
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch (err) {
    return { id: null, error: { code: 'bad_request', message: `malformed JSON: ${(err as Error).message}` } };
  }
  const frame = wsRequestSchema.safeParse(json);
  if (!frame.success) {
    const issue = frame.error.issues[0];
    const field = (issue?.path ?? []).map(String).join('.') || undefined;
    const maybeId = (json as { id?: unknown } | null)?.id;
    const id = typeof maybeId === 'string' || typeof maybeId === 'number' ? maybeId : null;
    return {
      id,
      error: {
        code: 'bad_request',
        message: `expected {id, method, params}${field ? `: ${field}: ${issue?.message}` : `: ${issue?.message ?? 'invalid'}`}`,
        ...(field && { field }),
      },
    };
  }
  const { id, method, params } = frame.data;
  const outcome = await api.invoke(method, params, ctx);
  return outcome.ok ? { id, result: outcome.result } : { id, error: outcome.error };
}
