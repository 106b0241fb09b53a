import { describe, expect, it } from 'vitest';
import {
  checkServerBinary,
  checkServerText,
  FOXGLOVE_CLIENT_LIMITS,
} from '../../src/domain/bridge/foxgloveServerMessages';
import { HOSTILE_FOXGLOVE_SERVER_MESSAGES } from '../helpers/hostileProtocolMessages';

// The check every Foxglove WebSocket frame from a server passes before @foxglove/ws-protocol
// parses it. Each hostile message is refused with the field it got wrong; the
// messages a real g1-bridge/1 server sends pass (control), and ops the console does not use are
// dropped unread.

describe('checkServerText / checkServerBinary', () => {
  it.each(HOSTILE_FOXGLOVE_SERVER_MESSAGES.map((m) => [m.what, m.text]))('refuses %s', (_what, text) => {
    const c = checkServerText(text);
    expect(c.ok).toBe(false);
    if (!c.ok) expect(c.reason.length).toBeGreaterThan(5);
  });

  it('names the field: advertise channels null, a channel without topic, a status level out of range', () => {
    expect(checkServerText('{"op":"advertise","channels":null}')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^advertise channels: /),
    });
    expect(
      checkServerText('{"op":"advertise","channels":[{"id":7,"encoding":"json","schemaName":"x","schema":""}]}'),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/^advertise channels\[0\]\.topic: /) });
    expect(checkServerText('{"op":"status","level":7,"message":"x"}')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^status level: /),
    });
    expect(checkServerText('null')).toMatchObject({ ok: false, reason: 'a message must be a JSON object, got null' });
  });

  it('an advertised channel whose schema is over the limit is left out and named, the others go on', () => {
    const limit = FOXGLOVE_CLIENT_LIMITS.schemaChars;
    const ch = (id: number, topic: string, schemaChars: number) => ({
      id,
      topic,
      encoding: 'cdr',
      schemaName: 'unitree_hg/msg/LowState',
      schemaEncoding: 'ros2msg',
      schema: '#'.repeat(schemaChars),
    });
    const text = JSON.stringify({ op: 'advertise', channels: [ch(1, '/lowstate', limit + 1), ch(2, '/odom', 10)] });
    const c = checkServerText(text);
    expect(c).toMatchObject({
      ok: true,
      ignored: false,
      refusedChannels: [
        {
          id: 1,
          topic: '/lowstate',
          reason: '/lowstate: advertised with a schema of 1,000,001 characters; the limit is 1,000,000',
        },
      ],
    });
    expect(c.ok && c.value?.op === 'advertise' && c.value.channels.map((x) => x.topic)).toEqual(['/odom']);
    // Control: a schema of exactly the limit passes, nothing refused.
    const at = checkServerText(JSON.stringify({ op: 'advertise', channels: [ch(1, '/lowstate', limit)] }));
    expect(at).toMatchObject({ ok: true, ignored: false });
    expect(at.refusedChannels).toBeUndefined();
  });

  it('control: the messages a g1-bridge/1 server sends pass', () => {
    const good = [
      '{"op":"serverInfo","name":"motionbench","capabilities":["clientPublish"],"supportedEncodings":["json"],"metadata":{"g1_bridge_contract":"g1-bridge/1"},"sessionId":"1"}',
      '{"op":"advertise","channels":[{"id":1,"topic":"/g1/lowstate","encoding":"json","schemaName":"g1-bridge/1/LowState","schema":"{}","schemaEncoding":"jsonschema"}]}',
      '{"op":"unadvertise","channelIds":[1,2]}',
      '{"op":"status","level":2,"message":"refused","id":"g1-bridge/refused/4"}',
      '{"op":"removeStatus","statusIds":["a"]}',
    ];
    for (const t of good) expect(checkServerText(t)).toMatchObject({ ok: true, ignored: false });
    expect(checkServerText('{"op":"parameterValues","parameters":null}')).toEqual({ ok: true, ignored: true });
  });

  it('binary: message data needs its 13-byte header, time its 9; unknown opcodes and empty frames are refused', () => {
    expect(checkServerBinary(new Uint8Array([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 123]))).toEqual({
      ok: true,
      ignored: false,
    });
    expect(checkServerBinary(new Uint8Array([1, 0, 0]))).toMatchObject({
      ok: false,
      reason: 'binary opcode 1 needs at least 13 bytes, got 3',
    });
    expect(checkServerBinary(new Uint8Array([2, 0]))).toMatchObject({ ok: false });
    expect(checkServerBinary(new Uint8Array([9]))).toMatchObject({ ok: false, reason: 'unknown binary opcode 0x9' });
    expect(checkServerBinary(new Uint8Array([]))).toMatchObject({ ok: false });
    expect(checkServerBinary(new Uint8Array([3, 1]))).toEqual({ ok: true, ignored: true });
  });
});
