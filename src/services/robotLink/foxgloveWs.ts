import { createRequire } from 'node:module';
import type * as WsProtocol from '@foxglove/ws-protocol';

// @foxglove/ws-protocol ships CommonJS for Node (its ESM build has extensionless imports Node
// cannot load), and Node's ESM loader does not see its named exports. Load it through require,
// so the same classes are used under tsx, vitest and the built app.
const require = createRequire(import.meta.url);
const wsProtocol = require('@foxglove/ws-protocol') as typeof WsProtocol;

export const FoxgloveServer = wsProtocol.FoxgloveServer;
export const FoxgloveClient = wsProtocol.FoxgloveClient;
export const StatusLevel = wsProtocol.StatusLevel;
export const ServerCapability = wsProtocol.ServerCapability;
export const FOXGLOVE_SUBPROTOCOL = 'foxglove.websocket.v1';
/**
 * The subprotocol of servers built on the Foxglove SDK, foxglove_bridge 3.x among them: the same
 * foxglove.websocket.v1 messages under a new name (the SDK's websocket server speaks its protocol
 * v1: the same JSON ops, binary opcodes and MessageData layout; docs/ROS2_LINK.md §Bridge versions).
 * Such a server refuses a client that does not offer it (HTTP 400).
 */
export const FOXGLOVE_SDK_SUBPROTOCOL = 'foxglove.sdk.v1';
/** What the console's clients offer, in order of preference; the server picks one. */
export const FOXGLOVE_CLIENT_SUBPROTOCOLS: readonly string[] = [FOXGLOVE_SUBPROTOCOL, FOXGLOVE_SDK_SUBPROTOCOL];

export type FoxgloveServerInstance = InstanceType<typeof WsProtocol.FoxgloveServer>;
export type FoxgloveClientInstance = InstanceType<typeof WsProtocol.FoxgloveClient>;
export type { Channel, ClientChannel, IWebSocket, MessageData, ServerInfo, StatusMessage } from '@foxglove/ws-protocol';
