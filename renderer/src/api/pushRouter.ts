import { LIVE_SOURCES, type ApiEvent, type LiveFramesOf, type LiveSource } from '../../../src/api/contract';
import { useConnectionStore } from './connectionStore';

// A registry of the pushes from the services (the transports validate each against the contract
// first, api/apiEvents.ts): a feature signs up for the push types it handles (onPush), and every
// push goes to the one feature that owns its type. The router names no feature; the app shell
// signs them up (app/featurePushes.ts). A type has one owner: signing up for a type already owned
// throws. The live stream (`live.frames`) is owned per source: a feature signs up for
// `live.frames/<source>` (`live.frames/sim_run`, …). A push no feature owns is dropped. Every push is acknowledged once processed
// (events.ack), also when its handler throws or no feature owns it: acknowledgements are the
// services' flow control (they hold back or skip a client's pushes while too many are
// unacknowledged), not a receipt of success.

export type PushType = ApiEvent['type'];
/** What a feature signs up for: a push type, or for the live stream one of its sources. */
export type PushKey = Exclude<PushType, 'live.frames'> | `live.frames/${LiveSource}`;
export type PushOf<K extends PushKey> = K extends `live.frames/${infer S extends LiveSource}`
  ? LiveFramesOf<S>
  : Extract<ApiEvent, { type: K }>;

const owners = new Map<PushKey, (e: ApiEvent) => void>();

/** The key a push is routed by. */
export const pushKey = (e: ApiEvent): PushKey => (e.type === 'live.frames' ? `live.frames/${e.source}` : e.type);

/** Signs a feature up for `keys`; returns the sign-off. Throws if another feature owns one of them. */
export function onPush<K extends PushKey>(keys: readonly K[], handler: (e: PushOf<K>) => void): () => void {
  const taken = keys.filter((t) => owners.has(t));
  if (taken.length > 0) throw new Error(`push ${taken.join(', ')} already has a handler: one feature owns each push`);
  const h = handler as (e: ApiEvent) => void;
  for (const t of keys) owners.set(t, h);
  return () => {
    for (const t of keys) if (owners.get(t) === h) owners.delete(t);
  };
}

/** Whether a feature has signed up for `key` (for `live.frames`: for each of its sources). */
export function pushHasOwner(key: PushKey | PushType): boolean {
  if (key === 'live.frames') return LIVE_SOURCES.every((s) => owners.has(`live.frames/${s}`));
  return owners.has(key);
}

function ack(seq: number): void {
  void useConnectionStore
    .getState()
    .client?.call('events.ack', { seq })
    .catch(() => undefined);
}

/** Handles one validated push from the services. */
export function handleApiEvent(e: ApiEvent): void {
  try {
    owners.get(pushKey(e))?.(e);
  } finally {
    ack(e.seq);
  }
}
