import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBackendUrl } from '../../src/api/connectionUrl';
import { API_METHODS, parseRequest, type ConnectionInfo, type MeshDto } from '../../src/api/contract';
import { createConsoleApi, type ConsoleApi } from '../../src/services/console/consoleApiHandlers';
import { defaultBackendFactories } from '../../src/services/console/backendFactories';
import { profileMeshFiles } from '../../src/services/console/meshFiles';
import { loadRobotProfile } from '../../src/services/robot/loadRobotProfile';
import { FakeBackend } from '../helpers/fakeBackend';
import { MENAGERIE_G1, OUR_G1 } from '../helpers/sharedData';

// The API methods added for the meshed viewport and the Connections panel: robot.getMesh serves
// only meshes the loaded model references; connections.* over the registry.

let tmp: string;
const apis: ConsoleApi[] = [];
const api = (opts: Parameters<typeof createConsoleApi>[0]): ConsoleApi => {
  const a = createConsoleApi(opts);
  apis.push(a);
  return a;
};

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-api-mesh-'));
});
afterAll(async () => {
  await Promise.all(apis.map((a) => a.close()));
  fs.rmSync(tmp, { recursive: true, force: true });
});

/**
 * Menagerie's G1 written into `dir` with its head mesh replaced by `meshFile` (under meshes/).
 * Only the head's file exists there: robot.getMesh reads just the one asked for.
 */
function g1WithHeadMesh(dir: string, meshFile: string, scale = '1 1 1'): string {
  fs.mkdirSync(path.join(dir, 'meshes'), { recursive: true });
  const xml = fs
    .readFileSync(MENAGERIE_G1, 'utf8')
    .replace('meshdir="assets"', 'meshdir="meshes"')
    .replace('<mesh file="head_link.STL"/>', `<mesh name="head_link" file="${meshFile}" scale="${scale}"/>`);
  expect(xml).toContain(meshFile);
  const file = path.join(dir, 'g1.xml');
  fs.writeFileSync(file, xml);
  return file;
}

describe('contract: new methods', () => {
  it('declares them with strict params', () => {
    expect(API_METHODS).toEqual(
      expect.arrayContaining([
        'robot.getMesh',
        'connections.list',
        'connections.add',
        'connections.remove',
        'connections.connect',
        'connections.disconnect',
      ]),
    );
    expect(parseRequest('robot.getMesh', {})).toMatchObject({ ok: false, error: { field: 'params.name' } });
    expect(parseRequest('robot.getMesh', { name: 'pelvis', path: '/etc/passwd' })).toMatchObject({
      ok: false,
      error: { field: 'params.path' },
    });
    expect(parseRequest('connections.list', { all: true })).toMatchObject({
      ok: false,
      error: { field: 'params.all' },
    });
    expect(parseRequest('connections.remove', { id: '../x' })).toMatchObject({
      ok: false,
      error: { code: 'bad_params', field: 'params.id' },
    });
  });

  it('validates the URL of connections.add, giving the reason', () => {
    expect(parseRequest('connections.add', { url: 'ws://127.0.0.1:8765' })).toMatchObject({ ok: true });
    expect(parseRequest('connections.add', { url: 'wss://sim.lab/bridge' })).toMatchObject({ ok: true });
    const http = parseRequest('connections.add', { url: 'http://127.0.0.1:8765' });
    expect(http).toMatchObject({ ok: false, error: { code: 'bad_params', field: 'params.url' } });
    expect(!http.ok && http.error.message).toContain('use ws:// or wss://');
    expect(parseRequest('connections.add', { url: 'x'.repeat(5000) })).toMatchObject({
      ok: false,
      error: { field: 'params.url' },
    });
    expect(parseRequest('connections.add', {})).toMatchObject({ ok: false, error: { field: 'params.url' } });
  });

  it('checkBackendUrl normalises and explains', () => {
    expect(checkBackendUrl(' ws://SIM:8765 ')).toEqual({ ok: true, url: 'ws://sim:8765/' });
    expect(checkBackendUrl('wss://[::1]:9000/x')).toEqual({ ok: true, url: 'wss://[::1]:9000/x' });
    expect(checkBackendUrl('ws://sim:80')).toEqual({ ok: true, url: 'ws://sim/' });
    const cases: Array<[string, RegExp]> = [
      ['', /enter a ws/],
      ['ftp://x', /use ws:\/\/ or wss:\/\/ \(got ftp:\/\/\)/],
      ['ws://a b', /whitespace/],
      ['ws://:1', /not a URL/],
      ['ws://u:p@h', /credentials/],
      ['ws://h/#x', /fragment/],
      ['127.0.0.1:8765', /use ws:\/\/|not a URL/],
    ];
    for (const [text, reason] of cases) {
      const r = checkBackendUrl(text);
      expect(r.ok, text).toBe(false);
      expect(!r.ok && r.reason, text).toMatch(reason);
    }
  });
});

describe('robot.getMesh', () => {
  it("serves the Menagerie G1's STL meshes byte for byte", async () => {
    const a = api({ transport: 'host', modelFile: MENAGERIE_G1, backends: {} });
    const profile = loadRobotProfile(MENAGERIE_G1);
    const files = profileMeshFiles(profile);
    expect(files.size).toBeGreaterThanOrEqual(30);
    const out = await a.invoke('robot.getMesh', { name: 'torso_link' });
    expect(out.ok).toBe(true);
    const dto = (out as { result: MeshDto }).result;
    expect(dto).toMatchObject({ name: 'torso_link', format: 'stl' });
    const expected = fs.readFileSync(path.join(path.dirname(MENAGERIE_G1), 'assets/torso_link_rev_1_0.STL'));
    expect(dto.byteLength).toBe(expected.length);
    expect(Buffer.from(dto.bytesBase64, 'base64').equals(expected)).toBe(true);
  });

  it('refuses names the model does not reference, including path-like ones', async () => {
    const a = api({ transport: 'host', modelFile: MENAGERIE_G1, backends: {} });
    for (const name of ['../../../../etc/passwd', '/etc/passwd', 'assets/pelvis.STL', 'pelvis.STL', 'no_such_mesh']) {
      const r = await a.invoke('robot.getMesh', { name });
      expect(r, name).toMatchObject({ ok: false, error: { code: 'not_found', field: 'params.name' } });
    }
    const ours = api({ transport: 'host', modelFile: OUR_G1, backends: {} });
    expect(await ours.invoke('robot.getMesh', { name: 'pelvis' })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });
  });

  it('serves OBJ meshes, refuses other formats, and reports a missing file', async () => {
    const objDir = path.join(tmp, 'obj');
    const obj = g1WithHeadMesh(objDir, 'head.obj', '0.001 0.001 0.001');
    fs.writeFileSync(path.join(objDir, 'meshes/head.obj'), 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n');
    const a = api({ transport: 'host', modelFile: obj, backends: {} });
    const r = await a.invoke('robot.getMesh', { name: 'head_link' });
    expect(r).toMatchObject({ ok: true, result: { format: 'obj', byteLength: 32 } });

    const mshDir = path.join(tmp, 'msh');
    const msh = g1WithHeadMesh(mshDir, 'head.msh');
    fs.writeFileSync(path.join(mshDir, 'meshes/head.msh'), Buffer.alloc(16));
    const b = api({ transport: 'host', modelFile: msh, backends: {} });
    expect(await b.invoke('robot.getMesh', { name: 'head_link' })).toMatchObject({
      ok: false,
      error: { code: 'unsupported' },
    });

    const goneDir = path.join(tmp, 'gone');
    const gone = g1WithHeadMesh(goneDir, 'missing.stl');
    const c = api({ transport: 'host', modelFile: gone, backends: {} });
    const missing = await c.invoke('robot.getMesh', { name: 'head_link' });
    expect(missing).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(!missing.ok && missing.error.message).toContain('missing.stl');
  });
});

describe('connections.*', () => {
  it('list, add, connect, disconnect and remove through the API', async () => {
    const a = api({
      transport: 'host',
      backends: {
        embeddedSimulator: () => new FakeBackend({ id: 'sim', initialPresence: 'present' }),
        remoteSimulator: ({ id }) => new FakeBackend({ id, initialPresence: 'connecting' }),
      },
    });
    const list = async (): Promise<ConnectionInfo[]> =>
      ((await a.invoke('connections.list', {})) as { result: ConnectionInfo[] }).result;
    expect((await list()).map((e) => [e.id, e.name, e.presence])).toEqual([
      ['embedded-sim', 'Embedded simulator (MuJoCo)', 'disconnected'],
    ]);

    expect(await a.invoke('connections.connect', { id: 'embedded-sim' })).toMatchObject({
      ok: true,
      result: { presence: 'present', active: true },
    });
    const added = await a.invoke('connections.add', { url: 'ws://127.0.0.1:8765' });
    expect(added).toMatchObject({
      ok: true,
      result: { id: 'remote-1', url: 'ws://127.0.0.1:8765/', presence: 'connecting' },
    });
    expect(await a.invoke('connections.add', { url: 'ws://127.0.0.1:8765/' })).toMatchObject({
      ok: false,
      error: { code: 'conflict', field: 'params.url' },
    });
    expect(await a.invoke('connections.add', { url: 'http://127.0.0.1:8765' })).toMatchObject({
      ok: false,
      error: { code: 'bad_params', field: 'params.url' },
    });
    expect((await list()).map((e) => e.id)).toEqual(['embedded-sim', 'remote-1']);

    expect(await a.invoke('connections.remove', { id: 'embedded-sim' })).toMatchObject({
      ok: false,
      error: { code: 'conflict' },
    });
    expect(await a.invoke('connections.remove', { id: 'remote-7' })).toMatchObject({
      ok: false,
      error: { code: 'not_found', field: 'params.id' },
    });
    expect(await a.invoke('connections.disconnect', { id: 'remote-1' })).toMatchObject({
      ok: true,
      result: { presence: 'disconnected', active: false },
    });
    expect(await a.invoke('connections.remove', { id: 'remote-1' })).toEqual({
      ok: true,
      result: { removed: 'remote-1' },
    });
    expect((await list()).map((e) => e.id)).toEqual(['embedded-sim']);
  });

  it('the default factories provide both kinds without loading them until used', () => {
    const f = defaultBackendFactories();
    expect(typeof f.embeddedSimulator).toBe('function');
    expect(typeof f.remoteSimulator).toBe('function');
    const a = api({ transport: 'host' });
    expect(a.connections.list()[0]).toMatchObject({
      id: 'embedded-sim',
      available: true,
      active: false,
      presence: 'disconnected',
    });
  });
});
