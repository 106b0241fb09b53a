import type { ApiEvent } from '../../../src/api/contract';
import { parseApiEvent } from '../../../src/api/contract';

/** Validates one pushed event and hands it to every listener; an invalid one is dropped with a warning. */
export function deliverApiEvent(raw: unknown, listeners: Iterable<(e: ApiEvent) => void>): void {
  const parsed = parseApiEvent(raw);
  if (!parsed.ok) {
    console.warn(`console services sent an invalid event; dropped (${parsed.reason})`);
    return;
  }
  for (const l of listeners) {
    try {
      l(parsed.event);
    } catch (err) {
      console.warn(`an event listener failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
