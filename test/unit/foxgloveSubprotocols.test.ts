import { describe, expect, it } from 'vitest';
import {
  FOXGLOVE_CLIENT_SUBPROTOCOLS,
  FOXGLOVE_SDK_SUBPROTOCOL,
  FOXGLOVE_SUBPROTOCOL,
} from '../../src/services/robotLink/foxgloveWs';
import { handshakeFailure } from '../../src/services/robotLink/g1BridgeConnection';

// The robot link offers both generations' subprotocols (foxglove_bridge 0.8.x: foxglove.websocket.v1;
// 3.x on the Foxglove SDK: foxglove.sdk.v1), the older first, and says why a handshake failed
// with the subprotocols named (test/integration/ros2LowStateLink.test.ts runs it against servers).

describe('Foxglove WebSocket subprotocols of the robot link', () => {
  it('offers foxglove.websocket.v1, then foxglove.sdk.v1', () => {
    expect(FOXGLOVE_CLIENT_SUBPROTOCOLS).toEqual([FOXGLOVE_SUBPROTOCOL, FOXGLOVE_SDK_SUBPROTOCOL]);
    expect(FOXGLOVE_CLIENT_SUBPROTOCOLS).toEqual(['foxglove.websocket.v1', 'foxglove.sdk.v1']);
  });

  it('names the subprotocols when a server refuses the handshake or answers without one of them', () => {
    expect(handshakeFailure('Unexpected server response: 400')).toBe(
      'WebSocket handshake refused with HTTP 400: the console offers the subprotocols foxglove.websocket.v1 or foxglove.sdk.v1, and a Foxglove server that speaks neither refuses the handshake this way',
    );
    expect(handshakeFailure('Server sent no subprotocol')).toBe(
      'Server sent no subprotocol: the console needs a Foxglove WebSocket server speaking foxglove.websocket.v1 or foxglove.sdk.v1',
    );
    expect(handshakeFailure('Server sent an invalid subprotocol')).toContain('foxglove.sdk.v1');
    // another refusal is not blamed on the subprotocols; anything else is passed on as it is (negative controls)
    expect(handshakeFailure('Unexpected server response: 404')).toBe('WebSocket handshake refused with HTTP 404');
    expect(handshakeFailure('connect ECONNREFUSED 127.0.0.1:1')).toBe('connect ECONNREFUSED 127.0.0.1:1');
  });
});
