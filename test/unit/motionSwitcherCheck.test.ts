import { describe, expect, it } from 'vitest';
import {
  answerFromResponse,
  motionSwitcherVerdict,
  type MotionSwitcherAnswer,
} from '../../src/domain/g1Runner/motionSwitcherCheck';
import {
  checkModeRequest,
  checkModeResponse,
  parseCheckModeData,
  serviceTopics,
  type ApiResponse,
} from '../../src/domain/robotLink/unitreeApiWire';

const response = (over: Partial<ApiResponse>): ApiResponse => ({
  identityId: 5n,
  apiId: 1001n,
  code: 0,
  data: '{"name":""}',
  binary: new Uint8Array(0),
  ...over,
});

describe('motion switcher CheckMode (pure)', () => {
  it('builds the request as MotionSwitcherClient.CheckMode does and the service answer from it', () => {
    const req = checkModeRequest(42n);
    expect(req).toMatchObject({
      identityId: 42n,
      apiId: 1001n,
      leaseId: 0n,
      priority: 0,
      noreply: false,
      parameter: '{}',
    });
    const resp = checkModeResponse(req, { name: 'ai', form: '0' });
    expect(resp).toMatchObject({ identityId: 42n, apiId: 1001n, code: 0 });
    expect(JSON.parse(resp.data)).toEqual({ name: 'ai', form: '0' });
    // form is left out when empty, as the SDK's JsonizeModeName writes it.
    expect(JSON.parse(checkModeResponse(req, { name: '', form: '' }).data)).toEqual({ name: '' });
    expect(serviceTopics('motion_switcher')).toEqual({
      request: 'rt/api/motion_switcher/request',
      response: 'rt/api/motion_switcher/response',
    });
  });

  it('reads name and form; a missing name or non-JSON is an error naming the field', () => {
    expect(parseCheckModeData('{"name":"normal","form":"0"}')).toEqual({ name: 'normal', form: '0' });
    expect(parseCheckModeData('{"name":""}')).toEqual({ name: '', form: '' });
    expect(() => parseCheckModeData('{"form":"0"}')).toThrow(/Response_\.data.*name.*missing/);
    expect(() => parseCheckModeData('{"name":3}')).toThrow(/name/);
    expect(() => parseCheckModeData('nope')).toThrow(/not JSON/);
  });

  it('refuses a named mode with what to do; allows an empty name; a silent domain allows, said in the trace', () => {
    const ai = motionSwitcherVerdict(answerFromResponse(response({ data: '{"name":"ai"}' }), 3), 0);
    expect(ai.allow).toBe(false);
    expect(ai.line).toMatch(/"ai" owns the motors/);
    expect(ai.line).toMatch(/L2 \+ R2/);
    const free = motionSwitcherVerdict(answerFromResponse(response({}), 3), 0);
    expect(free.allow).toBe(true);
    expect(free.line).toMatch(/no high-level motion mode is active/);
    const none: MotionSwitcherAnswer = { kind: 'no_answer', waitedMs: 1000, matchedServices: 0 };
    const silent = motionSwitcherVerdict(none, 7);
    expect(silent.allow).toBe(true);
    expect(silent.line).toMatch(
      /no motion switcher answered on domain 7 within 1000 ms \(a simulator, or a robot without the service/,
    );
  });

  it("a status code, another api id or unreadable data refuses (the motors' owner is unknown)", () => {
    expect(motionSwitcherVerdict(answerFromResponse(response({ code: 7006 }), 1), 0)).toMatchObject({ allow: false });
    expect(motionSwitcherVerdict(answerFromResponse(response({ apiId: 1002n }), 1), 0).line).toMatch(/api_id 1002/);
    expect(motionSwitcherVerdict(answerFromResponse(response({ data: '{}' }), 1), 0)).toMatchObject({ allow: false });
  });
});
