import { describe, expect, it } from 'vitest';
import type { AdmittedPairDto, AnalysisDocument, TrialQueueDto } from '../../src/api/contract';
import { minimalSetOffer, minimalSetPairs } from '../../renderer/src/trial/minimalSetQueue';

// The Trial runner's minimal-set filter: offered only for an analysis of the same campaign; keeps
// exactly the set's clips, in the selection path's order.

const pair = (clipId: string, bindingName: string) =>
  ({ pairId: `pt-${clipId}-${bindingName}`, clipId, bindingName }) as AdmittedPairDto;
const queue: TrialQueueDto = {
  campaignDir: '/c',
  trials: 3,
  pairs: [pair('a', 'x'), pair('b', 'y'), pair('b', 'x'), pair('c', 'x'), pair('d', 'x')],
};
const doc = (dir: string, set: string[] | null) =>
  ({
    campaign: { id: 'k', name: 'c', dir },
    reading: 'mpjpe_l_mm',
    selection: set
      ? {
          reading: 'mpjpe_l_mm',
          share: 0.8,
          lambda: 1,
          path: [...set, 'z'].map((clip) => ({ clip })),
          minimal_set: set,
          minimal_set_names: set,
          minimal_share: 0.81,
          robustness: [],
        }
      : { reading: 'mpjpe_l_mm', value: null, reason: 'too few bindings' },
  }) as unknown as AnalysisDocument;

describe('Trial runner: minimal clip set queue', () => {
  it('keeps the set’s pairs in path order, then by binding', () => {
    const offer = minimalSetOffer(queue, doc('/c', ['c', 'b']))!;
    expect(offer.label).toBe('2 of 3 clips · mpjpe_l_mm · 80 %');
    expect(minimalSetPairs(queue.pairs, offer.clips).map((p) => p.pairId)).toEqual(['pt-c-x', 'pt-b-x', 'pt-b-y']);
  });
  it('is not offered for another campaign, without an analysis, or without a set', () => {
    expect(minimalSetOffer(queue, doc('/other', ['c']))).toBeNull();
    expect(minimalSetOffer(queue, null)).toBeNull();
    expect(minimalSetOffer(queue, doc('/c', null))).toBeNull();
    expect(minimalSetOffer(null, doc('/c', ['c']))).toBeNull();
  });
});
