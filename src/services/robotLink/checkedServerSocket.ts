import { Buffer } from 'node:buffer';
import type WebSocket from 'ws';
import { checkServerBinary, checkServerText } from '../../domain/bridge/foxgloveServerMessages';
import type { IWebSocket } from './foxgloveWs';

// The socket FoxgloveClient is given instead of the raw `ws` WebSocket: every frame from the
// server is checked (src/domain/bridge/foxgloveServerMessages.ts) before the library parses it,
// so a malformed control message never reaches the library's dispatch or our listeners, and
// anything a listener still throws while handling a frame is caught here. Both become a call of
// `onBadFrame` — a counted problem on that link, never a crash of the process.

export interface CheckedSocketEvents {
  /** A frame was refused (reason names the field), or handling it threw. */
  onBadFrame(reason: string): void;
  /**
   * A channel was left out of an advertisement (its schema is over the limit; reason names the
   * topic and the limit); the rest of the advertisement goes on to the library.
   */
  onRefusedChannel?(channel: { id: number; topic: string }, reason: string): void;
}

const UTF8 = new TextDecoder('utf-8');

export function checkedServerSocket(ws: WebSocket, events: CheckedSocketEvents): IWebSocket {
  const sock: IWebSocket = {
    binaryType: 'arraybuffer',
    get protocol() {
      return ws.protocol;
    },
    onerror: null,
    onopen: null,
    onclose: null,
    onmessage: null,
    close: () => ws.close(),
    send: (data) => ws.send(data),
  };
  const guarded = (what: string, f: () => void): void => {
    try {
      f();
    } catch (err) {
      events.onBadFrame(`${what} handler failed: ${(err as Error)?.message ?? String(err)}`);
    }
  };
  ws.on('open', () => guarded('open', () => sock.onopen?.({})));
  ws.on('close', (code: number, reason: Buffer) =>
    guarded('close', () => sock.onclose?.({ code, reason: reason.toString('utf8') })),
  );
  ws.on('error', (error: Error) => guarded('error', () => sock.onerror?.({ error })));
  ws.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
    const bytes = Array.isArray(data)
      ? new Uint8Array(Buffer.concat(data))
      : data instanceof ArrayBuffer
        ? new Uint8Array(data)
        : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (isBinary) {
      const c = checkServerBinary(bytes);
      if (!c.ok) return events.onBadFrame(`binary message refused: ${c.reason}`);
      if (c.ignored) return;
      return guarded('binary message', () => sock.onmessage?.({ data: bytes }));
    }
    const text = UTF8.decode(bytes);
    const c = checkServerText(text);
    if (!c.ok) return events.onBadFrame(`message refused: ${c.reason}`);
    if (c.ignored) return;
    if (c.refusedChannels) {
      for (const r of c.refusedChannels)
        guarded('refused channel', () => events.onRefusedChannel?.({ id: r.id, topic: r.topic }, r.reason));
      // The library gets the advertisement without them (re-serialized: only when a channel was left out).
      const rest = JSON.stringify(c.value);
      return guarded('advertise message', () => sock.onmessage?.({ data: rest }));
    }
    guarded(`${c.value?.op ?? 'text'} message`, () => sock.onmessage?.({ data: text }));
  });
  return sock;
}
