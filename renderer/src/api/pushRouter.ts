import type { ApiEvent } from '../../../src/api/contract';
import { onQualificationProgress } from '../qualification/qualificationActions';
import { handleSimPush } from '../sim/simPushes';
import { handleTrialEvent } from '../trial/trialPushes';
import { useConnectionStore } from './connectionStore';

// Where each push from the services goes (the transports validate it against the contract
// first, api/apiEvents.ts): qualification progress to the Qualification board, simulation frames
// and ends to the Sim trial panel and the overlay, interlock, calibration and trial pushes to the
// Trial runner and Calibration panels. Every push is acknowledged once processed (events.ack),
// also when its handler throws: acknowledgements are the services' flow control (they hold back
// or skip a client's pushes while too many are unacknowledged), not a receipt of success.

function ack(seq: number): void {
  void useConnectionStore
    .getState()
    .client?.call('events.ack', { seq })
    .catch(() => undefined);
}

/** Handles one validated push from the services. */
export function handleApiEvent(e: ApiEvent): void {
  try {
    if (e.type === 'qualification.progress') onQualificationProgress(e);
    else if (e.type === 'sim.frames' || e.type === 'sim.end') handleSimPush(e);
    else handleTrialEvent(e); // interlock, calibration and trial pushes (src/api/trialContract.ts)
  } finally {
    ack(e.seq);
  }
}
