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

export type FoxgloveServerInstance = InstanceType<typeof WsProtocol.FoxgloveServer>;
export type FoxgloveClientInstance = InstanceType<typeof WsProtocol.FoxgloveClient>;
export type { Channel, ClientChannel, IWebSocket, MessageData, ServerInfo, StatusMessage } from '@foxglove/ws-protocol';
