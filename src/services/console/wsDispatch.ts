import type { WsResponse } from '../../api/contract';
import { MAX_MESSAGE_BYTES, wsRequestSchema } from '../../api/contract';
import type { CallContext, ConsoleApi } from './consoleApiHandlers';

// JSON-RPC-ish framing of the console API on a WebSocket: {id, method, params} in,
// {id, result} | {id, error} out. A bad frame gets a structured error with id null (or the id,
// when it could be read); it never closes the connection. A result the services serialized off
// the event loop (a decoded clip) comes back as its JSON bytes, for the transport to send as they
// are (sendWsResponse in src/services/host/hostServer.ts).

/** A response whose result is JSON already: `{"id": id, "result": <resultJson>}` on the wire. */
export interface WsSerializedResponse {
  id: string | number;
  resultJson: Uint8Array;
}

export const isSerializedResponse = (r: WsResponse | WsSerializedResponse): r is WsSerializedResponse =>
  'resultJson' in r;

export async function dispatchWsMessage(
  api: ConsoleApi,
  data: string,
  maxBytes = MAX_MESSAGE_BYTES,
  ctx: CallContext = {},
): Promise<WsResponse | WsSerializedResponse> {
  if (data.length > maxBytes) {
    return {
      id: null,
      error: { code: 'too_large', message: `message of ${data.length} bytes exceeds the ${maxBytes}-byte limit` },
    };
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
  const outcome = await api.invokeWire(method, params, ctx);
  if (!outcome.ok) return { id, error: outcome.error };
  return 'serialized' in outcome ? { id, resultJson: outcome.serialized } : { id, result: outcome.result };
}
