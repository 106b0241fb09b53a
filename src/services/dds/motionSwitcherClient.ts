// The client end of the G1's motion switcher (unitree_sdk2 MotionSwitcherClient.CheckMode over real
// Cyclone DDS): writes a unitree_api Request_ on `rt/api/motion_switcher/request`, takes the
// Response_ from `rt/api/motion_switcher/response` whose header.identity.id is our request's (any
// other is counted and ignored, as the SDK's future queue does), and gives up after a declared
// time. Everything is asynchronous on the caller's event loop: DDS threads queue the responses,
// timers poll; nothing blocks (the runner's 500 Hz loop shares the thread).

import { answerFromResponse, type MotionSwitcherAnswer } from '../../domain/g1Runner/motionSwitcherCheck';
import {
  checkModeRequest,
  MOTION_SWITCHER_TOPICS,
  type ApiRequest,
  type ApiResponse,
} from '../../domain/robotLink/unitreeApiWire';
import { DDS_KIND, type DdsApiWriter, type DdsParticipant, type DdsReader } from './cycloneDdsLink';

/**
 * The request is written again at this interval (same id) while no answer came: CheckMode only
 * reads, so a repeat is harmless, and one lost sample on the wire does not turn into "no answer".
 */
export const CHECK_MODE_RESEND_MS = 200;
const POLL_MS = 5;

export interface MotionSwitcherClientOptions {
  /** Monotonic clock, ns (default process.hrtime.bigint: the clock unitree_sdk2py's ids come from). */
  monoNs?: () => bigint;
}

export interface MotionSwitcherClientCounters {
  requestsSent: number;
  /** Responses whose identity id was not the pending request's (another client's, or late). */
  unmatchedResponses: number;
}

export class MotionSwitcherClient {
  private readonly writer: DdsApiWriter<typeof DDS_KIND.apiRequest>;
  private readonly reader: DdsReader;
  private readonly monoNs: () => bigint;
  private pending: { request: ApiRequest; sentNs: bigint; done: (a: MotionSwitcherAnswer) => void } | null = null;
  private lastId = 0n;
  private sent = 0;
  private unmatched = 0;

  constructor(participant: DdsParticipant, options: MotionSwitcherClientOptions = {}) {
    this.monoNs = options.monoNs ?? (() => process.hrtime.bigint());
    this.writer = participant.apiWriter(DDS_KIND.apiRequest, MOTION_SWITCHER_TOPICS.request);
    this.reader = participant.apiReader(
      DDS_KIND.apiResponse,
      MOTION_SWITCHER_TOPICS.response,
      ({ sample, receiptNs }) => this.onResponse(sample, receiptNs),
    );
  }

  private onResponse(r: ApiResponse, receiptNs: bigint): void {
    const p = this.pending;
    if (!p || r.identityId !== p.request.identityId) {
      this.unmatched++;
      return;
    }
    this.pending = null;
    p.done(answerFromResponse(r, Number(receiptNs - p.sentNs) / 1e6));
  }

  /** Readers of the request topic matched now (a motion switcher service, if there is one). */
  matchedServices(): number {
    return this.writer.matchedReaders();
  }

  counters(): MotionSwitcherClientCounters {
    return { requestsSent: this.sent, unmatchedResponses: this.unmatched + this.reader.stats().oversize };
  }

  /**
   * Asks CheckMode and resolves with the answer, or `no_answer` after `timeoutMs` (the request goes
   * out once a service's reader is matched, and again every CHECK_MODE_RESEND_MS). One at a time.
   */
  checkMode(timeoutMs: number): Promise<MotionSwitcherAnswer> {
    if (this.pending) return Promise.reject(new Error('motion switcher: a CheckMode is already waiting'));
    if (!(timeoutMs > 0)) return Promise.reject(new RangeError(`motion switcher: timeout ${timeoutMs} ms is not > 0`));
    // The request id is a monotonic ns reading (as unitree_sdk2py's), kept strictly increasing.
    let id = this.monoNs();
    if (id <= this.lastId) id = this.lastId + 1n;
    this.lastId = id;
    const request = checkModeRequest(id);
    const t0 = this.monoNs();
    return new Promise((resolve) => {
      let lastSendNs: bigint | null = null;
      let matchedMax = 0;
      const finish = (a: MotionSwitcherAnswer): void => {
        clearInterval(timer);
        resolve(a);
      };
      this.pending = { request, sentNs: t0, done: finish };
      const tick = (): void => {
        if (this.pending?.request !== request) return;
        const now = this.monoNs();
        const elapsedMs = Number(now - t0) / 1e6;
        const matched = this.writer.matchedReaders();
        matchedMax = Math.max(matchedMax, matched);
        if (elapsedMs >= timeoutMs) {
          this.pending = null;
          finish({ kind: 'no_answer', waitedMs: elapsedMs, matchedServices: matchedMax });
          return;
        }
        if (matched > 0 && (lastSendNs === null || Number(now - lastSendNs) / 1e6 >= CHECK_MODE_RESEND_MS)) {
          if (lastSendNs === null) this.pending.sentNs = now;
          lastSendNs = now;
          this.writer.write(request);
          this.sent++;
        }
      };
      const timer = setInterval(tick, POLL_MS);
      tick();
    });
  }
}
