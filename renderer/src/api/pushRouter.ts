import type { ApiEvent } from '../../../src/api/contract';
import { useConnectionStore } from './connectionStore';

// A registry of the pushes from the services (the transports validate each against the contract
// first, api/apiEvents.ts): a feature signs up for the push types it handles (onPush), and every
// push goes to the one feature that owns its type. The router names no feature; the app shell
// signs them up (app/featurePushes.ts). A type has one owner: signing up for a type already owned
// throws. A push no feature owns is dropped. Every push is acknowledged once processed
// (events.ack), also when its handler throws or no feature owns it: acknowledgements are the
// services' flow control (they hold back or skip a client's pushes while too many are
// unacknowledged), not a receipt of success.

export type PushType = ApiEvent['type'];
export type PushOf<T extends PushType> = Extract<ApiEvent, { type: T }>;

const owners = new Map<PushType, (e: ApiEvent) => void>();

/** Signs a feature up for `types`; returns the sign-off. Throws if another feature owns one of them. */
export function onPush<T extends PushType>(types: readonly T[], handler: (e: PushOf<T>) => void): () => void {
  const taken = types.filter((t) => owners.has(t));
  if (taken.length > 0) throw new Error(`push ${taken.join(', ')} already has a handler: one feature owns each push`);
  const h = handler as (e: ApiEvent) => void;
  for (const t of types) owners.set(t, h);
  return () => {
    for (const t of types) if (owners.get(t) === h) owners.delete(t);
  };
}

/** Whether a feature has signed up for `type`. */
export function pushHasOwner(type: PushType): boolean {
  return owners.has(type);
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
    owners.get(e.type)?.(e);
  } finally {
    ack(e.seq);
  }
}
