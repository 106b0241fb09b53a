import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { G1_BRIDGE_CONTRACT, G1_BRIDGE_METADATA, G1_BRIDGE_TOPICS } from '../../src/domain/bridge/g1BridgeContract';
import { g1BridgeChannel } from '../../src/domain/bridge/g1BridgeSchemas';
import { connectRobot, type BridgeClientBackend } from '../../src/services/bridge/bridgeClientBackend';
import { FoxgloveServer, ServerCapability } from '../../src/services/robotLink/foxgloveWs';

// The client is present only when it knows what the server offers. serverInfo and the channel
// advertisement are separate WebSocket messages; on a loaded machine the advertisement can come
// in a later read. A caller that starts work on presence (the trial runner reads the robot's
// capabilities at once) must never see "no motion capture" because root_state was not
// advertised yet. Here the server holds the advertisement back until the test releases it.

const servers: { close(): Promise<void> }[] = [];
const clients: BridgeClientBackend[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) await s.close();
});

/** A g1-bridge/1 server that sends serverInfo on connect and advertises its channels only when told. */
async function slowAdvertiser(topics: ('lowstate' | 'rootState' | 'wbcStatus')[]) {
  const foxglove = new FoxgloveServer({
    name: 'slow advertiser',
    capabilities: [ServerCapability.clientPublish],
    supportedEncodings: ['json'],
    metadata: {
      [G1_BRIDGE_METADATA.contract]: G1_BRIDGE_CONTRACT,
      [G1_BRIDGE_METADATA.executionDomain]: 'real_robot',
      [G1_BRIDGE_METADATA.stateRateHz]: '500',
    },
  });
  foxglove.on('error', () => {});
  let connected!: () => void;
  const connection = new Promise<void>((r) => (connected = r));
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: (p) => foxglove.handleProtocols(p) });
  wss.on('connection', (ws, req) => {
    foxglove.handleConnection(ws as never, `${req.socket.remoteAddress}:${req.socket.remotePort}`);
    connected();
  });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const server = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    connection,
    advertise: () => {
      for (const t of topics) foxglove.addChannel(g1BridgeChannel(t, G1_BRIDGE_TOPICS[t]));
    },
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
    },
  };
  servers.push(server);
  return server;
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('robot link presence waits for the channel advertisement', () => {
  it('is connecting after serverInfo alone, present with its capabilities once lowstate and root_state are advertised', async () => {
    const server = await slowAdvertiser(['lowstate', 'rootState', 'wbcStatus']);
    const robot = connectRobot({ url: server.url });
    clients.push(robot);
    let capsAtPresence: boolean | null = null;
    const present = robot.whenPresent(5000).then(() => {
      capsAtPresence = robot.capabilities.globalRootPosition;
    });
    await server.connection;
    await settle(300); // serverInfo has long arrived
    expect(robot.capabilities.executionDomain).toBe('real_robot'); // serverInfo was read …
    expect(robot.presence).toBe('connecting'); // … but the channels are not known yet
    expect(capsAtPresence).toBeNull();
    server.advertise();
    await present;
    expect(capsAtPresence).toBe(true); // motion capture known the moment presence is
    expect(robot.presence).toBe('present');
  });

  it('stays connecting while the server advertises no lowstate (nothing to be fresh on)', async () => {
    const server = await slowAdvertiser(['wbcStatus']);
    const robot = connectRobot({ url: server.url });
    clients.push(robot);
    await server.connection;
    server.advertise();
    await settle(300);
    expect(robot.presence).toBe('connecting');
    await expect(robot.whenPresent(100)).rejects.toThrow(/not connected \(connecting after 100 ms\)/);
  });
});
