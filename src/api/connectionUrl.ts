// Validation of a remote endpoint URL (a simulator or robot bridge speaking g1-bridge/1 over
// foxglove.websocket.v1). Pure: used by the API contract on the Node side and by the
// Connections panel before it sends anything, so both give the same reason.

export type BackendUrlCheck = { ok: true; url: string } | { ok: false; reason: string };

/** Longest URL accepted, characters. */
export const MAX_BACKEND_URL_LENGTH = 2048;

/**
 * Accepts ws:// and wss:// URLs with a host and no credentials; returns the normalised form
 * (WHATWG URL serialisation: lower-case scheme and host, default port dropped, "/" for an empty
 * path), which is also what duplicates are compared by.
 */
export function checkBackendUrl(text: string): BackendUrlCheck {
  const t = text.trim();
  if (t === '') return { ok: false, reason: 'enter a ws:// or wss:// URL' };
  if (t.length > MAX_BACKEND_URL_LENGTH)
    return { ok: false, reason: `longer than ${MAX_BACKEND_URL_LENGTH} characters` };
  if (/\s/.test(t)) return { ok: false, reason: 'contains whitespace' };
  let u: URL;
  try {
    u = new URL(t);
  } catch {
    return { ok: false, reason: `not a URL (expected e.g. ws://192.168.123.10:8765)` };
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:') {
    return { ok: false, reason: `use ws:// or wss:// (got ${u.protocol}//)` };
  }
  if (u.hostname === '') return { ok: false, reason: 'missing host' };
  if (u.username !== '' || u.password !== '') return { ok: false, reason: 'credentials in the URL are not accepted' };
  if (u.hash !== '') return { ok: false, reason: 'a WebSocket URL has no #fragment' };
  return { ok: true, url: u.toString() };
}
