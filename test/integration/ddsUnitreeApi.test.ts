import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  API_REQUEST_TYPE_NAME,
  API_RESPONSE_TYPE_NAME,
  API_TEXT_MAX_BYTES,
  MOTION_SWITCHER_TOPICS,
  type ApiRequest,
  type ApiResponse,
} from '../../src/domain/robotLink/unitreeApiWire';
import {
  cycloneConfigXml,
  DDS_ADDON_PATH,
  DDS_KIND,
  DdsParticipant,
  loadDdsAddon,
} from '../../src/services/dds/cycloneDdsLink';
import { MotionSwitcherClient } from '../../src/services/dds/motionSwitcherClient';
import { MotionSwitcherService } from '../../src/services/robotEmulator/motionSwitcherService';
import { REPO_ROOT } from '../helpers/sharedData';
import { claimDdsDomains } from '../helpers/ddsDomain';

// unitree_api Request_/Response_ over real Eclipse Cyclone DDS 0.10 (libddsc) on loopback: the
// addon's string and octet-sequence marshalling, its bounds, and the motion switcher's CheckMode
// between our client and the emulated robot's service. Domain per test process.
const DOMAIN = claimDdsDomains();
const XML = cycloneConfigXml('lo');
const open: DdsParticipant[] = [];

function participant(): DdsParticipant {
  const p = DdsParticipant.open(DOMAIN, XML);
  open.push(p);
  return p;
}

async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Unitree's published type identifiers (minimal 0xf1…, complete 0xf2…: unitree_sdk2
 * include/unitree/robot/internal/internal_idl_decl/Request_.hpp and Response_.hpp type_info blobs).
 */
const UNITREE_TYPE_IDS = {
  requestMinimal: 'f1cba4dc965d393ada76b4de081925',
  requestComplete: 'f2c47a4429fcbf539486498753c48f',
  responseMinimal: 'f148c997d379c3e18c530b5f8fe946',
  responseComplete: 'f2d1c32cc02214901a464a6c51325d',
};

beforeAll(() => {
  if (!existsSync(DDS_ADDON_PATH)) {
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts/build-dds.mjs')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`npm run build:dds failed: ${r.stderr.trim().split('\n').pop()}`);
  }
}, 120_000);

afterEach(() => {
  for (const p of open.splice(0).reverse()) p.close();
});

const request = (over: Partial<ApiRequest> = {}): ApiRequest => ({
  identityId: 1_765_000_000_123_456_789n,
  apiId: 1001n,
  leaseId: -9_223_372_036_854_775_808n,
  priority: -7,
  noreply: true,
  parameter: '{"name":"ai","note":"Grüße ✓"}',
  binary: Uint8Array.from([0, 1, 2, 254, 255]),
  ...over,
});

describe('unitree_api Request_/Response_ over real Cyclone DDS (loopback)', () => {
  it('generates the DDS types with the names and type identifiers unitree_sdk2 publishes', () => {
    const addon = loadDdsAddon();
    const req = addon.typeInfo(DDS_KIND.apiRequest);
    const resp = addon.typeInfo(DDS_KIND.apiResponse);
    expect([req.typeName, resp.typeName]).toEqual([API_REQUEST_TYPE_NAME, API_RESPONSE_TYPE_NAME]);
    expect(req.typeName).toBe('unitree_api::msg::dds_::Request_');
    const reqHex = req.typeInformation.toString('hex');
    const respHex = resp.typeInformation.toString('hex');
    expect(reqHex).toContain(UNITREE_TYPE_IDS.requestMinimal);
    expect(reqHex).toContain(UNITREE_TYPE_IDS.requestComplete);
    expect(respHex).toContain(UNITREE_TYPE_IDS.responseMinimal);
    expect(respHex).toContain(UNITREE_TYPE_IDS.responseComplete);
    // Negative control: the two types' identifiers differ.
    expect(reqHex).not.toContain(UNITREE_TYPE_IDS.responseMinimal);
  });

  it('carries the header integers, the UTF-8 text and the octets of both types unchanged', async () => {
    const a = participant();
    const b = participant();
    const reqIn: ApiRequest[] = [];
    const respIn: ApiResponse[] = [];
    const topic = 'rt/api/test_service';
    const reqWriter = a.apiWriter(DDS_KIND.apiRequest, `${topic}/request`);
    const respWriter = b.apiWriter(DDS_KIND.apiResponse, `${topic}/response`);
    b.apiReader(DDS_KIND.apiRequest, `${topic}/request`, ({ sample }) => reqIn.push(sample));
    a.apiReader(DDS_KIND.apiResponse, `${topic}/response`, ({ sample }) => respIn.push(sample));
    await waitFor(() => reqWriter.matchedReaders() >= 1 && respWriter.matchedReaders() >= 1, 10_000, 'matching');
    const req = request();
    const resp: ApiResponse = {
      identityId: 9_223_372_036_854_775_807n,
      apiId: -1n,
      code: 3203,
      data: '',
      binary: new Uint8Array(0),
    };
    reqWriter.write(req);
    reqWriter.write(request({ parameter: '', binary: new Uint8Array(0), noreply: false, priority: 0 }));
    respWriter.write(resp);
    await waitFor(() => reqIn.length >= 2 && respIn.length >= 1, 5_000, 'the samples');
    expect({ ...reqIn[0], binary: [...reqIn[0].binary] }).toEqual({ ...req, binary: [0, 1, 2, 254, 255] });
    expect(reqIn[1]).toMatchObject({ parameter: '', noreply: false, priority: 0 });
    expect(reqIn[1].binary.length).toBe(0);
    expect({ ...respIn[0], binary: [...respIn[0].binary] }).toEqual({ ...resp, binary: [] });
    // A LowCmd_-kind reader on the same topic name sees nothing: another type never matches.
    expect(a.reader(DDS_KIND.lowState, () => {}, { topic: `${topic}/response` }).stats().matched).toBe(0);
  });

  it('refuses a sample the types or the bounds cannot carry, naming the field', () => {
    const w = participant().apiWriter(DDS_KIND.apiRequest, 'rt/api/bounds/request');
    expect(() => w.write(request({ parameter: 'x'.repeat(API_TEXT_MAX_BYTES + 1) }))).toThrow(
      /Request_\.parameter is longer than 65536/,
    );
    // Negative control: exactly at the bound is written.
    expect(() => w.write(request({ parameter: 'x'.repeat(API_TEXT_MAX_BYTES) }))).not.toThrow();
    expect(() => w.write(request({ parameter: 'a\u0000b' }))).toThrow(/Request_\.parameter contains a NUL/);
    expect(() => w.write(request({ binary: new Uint8Array(65537) }))).toThrow(/Request_\.binary is longer/);
    expect(() => w.write(request({ binary: [1, 2] as unknown as Uint8Array }))).toThrow(/Request_\.binary must be/);
    expect(() => w.write(request({ identityId: 1.5 as unknown as bigint }))).toThrow(/header\.identity\.id/);
    expect(() => w.write(request({ identityId: 2n ** 63n }))).toThrow(/header\.identity\.id/);
    const r = participant().apiWriter(DDS_KIND.apiResponse, 'rt/api/bounds/response');
    expect(() => r.write({ identityId: 1n, apiId: 1n, data: 'x', binary: new Uint8Array(0) } as ApiResponse)).toThrow(
      /Response_\.header\.status\.code/,
    );
  });
});

describe('motion switcher CheckMode between our client and the emulated service', () => {
  it('answers the mode that owns the motors ("ai"), and an empty name when none does', async () => {
    const robot = participant();
    const service = new MotionSwitcherService(robot, { mode: { name: 'ai', form: '0' } });
    const client = new MotionSwitcherClient(participant());
    const a = await client.checkMode(3000);
    expect(a).toMatchObject({ kind: 'mode', name: 'ai', form: '0' });
    expect(service.answeredCount()).toBeGreaterThanOrEqual(1);
    service.close();
    const free = new MotionSwitcherService(participant(), { mode: { name: '', form: '' } });
    const b = await client.checkMode(3000);
    expect(b).toMatchObject({ kind: 'mode', name: '', form: '' });
    expect(free.answeredCount()).toBeGreaterThanOrEqual(1);
    if (a.kind === 'mode') expect(a.latencyMs).toBeLessThan(1000);
  });

  it('without a service: no answer after the declared time, no reader matched', async () => {
    const client = new MotionSwitcherClient(participant());
    const t0 = Date.now();
    const a = await client.checkMode(300);
    expect(a).toMatchObject({ kind: 'no_answer', matchedServices: 0 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(client.counters().requestsSent).toBe(0);
  });

  it('ignores a response for another request id', async () => {
    new MotionSwitcherService(participant(), { mode: { name: 'ai', form: '' }, answerIdOffset: 1n });
    const client = new MotionSwitcherClient(participant());
    const a = await client.checkMode(600);
    expect(a).toMatchObject({ kind: 'no_answer', matchedServices: 1 });
    expect(client.counters().requestsSent).toBeGreaterThanOrEqual(1);
    expect(client.counters().unmatchedResponses).toBeGreaterThanOrEqual(1);
  });

  it("a service under another type name never matches (the same service under Unitree's name does)", async () => {
    const renamed = { typeName: 'unitree_api::msg::dds_::RequestX_', withTypeInformation: false };
    const wrong = new MotionSwitcherService(participant(), {
      mode: { name: 'ai', form: '' },
      requestEndpoint: renamed,
    });
    const client = new MotionSwitcherClient(participant());
    expect(await client.checkMode(500)).toMatchObject({ kind: 'no_answer', matchedServices: 0 });
    expect(wrong.answeredCount()).toBe(0);
    wrong.close();
    // Negative control: the same service without type information but under Unitree's name matches.
    new MotionSwitcherService(participant(), {
      mode: { name: 'ai', form: '' },
      requestEndpoint: { withTypeInformation: false },
    });
    expect(await client.checkMode(3000)).toMatchObject({ kind: 'mode', name: 'ai' });
    expect(MOTION_SWITCHER_TOPICS).toEqual({
      request: 'rt/api/motion_switcher/request',
      response: 'rt/api/motion_switcher/response',
    });
  });
});
