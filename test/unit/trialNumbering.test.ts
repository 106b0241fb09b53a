import { describe, expect, it } from 'vitest';
import { bindingName } from '../../src/domain/wbc/bindingName';
import { makeBuiltinBinding, rootAssistFromStiffness } from '../../src/domain/sim/builtinBinding';
import { trialNumber } from '../../src/domain/trial/trialNumber';
import type { PolicyBinding } from '../../src/domain/wbc/wbcBinding';

// Trials are numbered from 1 for people (stored indices stay 0-based), and two
// bindings of one campaign get names that tell them apart.

describe('trial numbering', () => {
  it('shows the stored 0-based index as a 1-based number', () => {
    expect([0, 1, 2].map(trialNumber)).toEqual(['1', '2', '3']);
    expect(trialNumber(null)).toBe('?');
    expect(trialNumber(-1)).toBe('?'); // the runner's "no rollout index" placeholder
  });
});

describe('binding names', () => {
  it('tells the two builtin bindings apart by assist and version', () => {
    const plain = makeBuiltinBinding();
    const assisted = makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(3000) });
    expect(bindingName(plain)).toBe(`builtin@${plain.version} · no assist`);
    expect(bindingName(assisted)).toBe(`builtin@${assisted.version} · assist 3000 N/m`);
    // Negative control: their ids alone ("builtin") are what the console used to show.
    expect(plain.id).toBe(assisted.id);
    expect(bindingName(plain)).not.toBe(bindingName(assisted));
    expect(bindingName(makeBuiltinBinding({ rootAssist: rootAssistFromStiffness(2500.5) }))).toMatch(
      / · assist 2500\.5 N\/m$/,
    );
  });

  it('names a released policy by family, name and checkpoint', () => {
    const p: PolicyBinding = {
      kind: 'onnx',
      family: 'beyondmimic',
      id: 'beyondmimic/dance1',
      version: 'beyondmimic/1+0123456789ab@bm-physics',
      controlRateHz: 50,
      label: 'beyondmimic policy dance1',
      policyPath: '/p',
      modelFile: '/p/policy.onnx',
      checkpointHash: '0123456789abcdef',
      adapter: 'beyondmimic/1',
      physicsId: 'bm-physics',
      bakedClipId: null,
    };
    expect(bindingName(p)).toBe('beyondmimic policy dance1@01234567');
  });
});
