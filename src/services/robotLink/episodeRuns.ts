import type {
  BackendEvent,
  BackendLease,
  EpisodeEnd,
  EpisodeOutcome,
  InitialState,
  RunRequest,
  StopDelivery,
} from '../../domain/backend/backend';
import {
  WBC_EPISODE_OVER_STATES,
  type StopOutcome,
  type WbcStatusMsg,
  type WireCommand,
} from '../../domain/bridge/g1BridgeContract';
import { prepareCommand, resetCommand } from '../../domain/bridge/g1BridgeEncode';
import { clockDelay, type LinkClock } from './linkClock';

// The lease of a g1-bridge/1 link and the episode run under it (DESIGN §3: a backend is leased per
// episode, bound to its run_id). A lease maps onto commands: reset → reset, run → prepare, the
// caller's start checks, start (then the episode's end comes in wbc_status), stop → stop.
//
// Safety (DESIGN §6): any stop or damp sent while a run is active — a trip, the
// operator, a lease release, a lost link — latches it (`latchStop`): no start is written for that
// run after it. The start is written in the same turn as the caller's last synchronous check
// (RunRequest.mayTransmit), with nothing awaited between. Once the start is written, a link loss
// ends the run `link_lost` (it may be moving).

export interface RunTransport {
  readonly name: string;
  readonly url: string;
  readonly clock: LinkClock;
  /** An ordinary command: resolves with the ack, rejects when refused, unanswered or not connected. */
  sendCommand(cmd: WireCommand, timeoutMs?: number): Promise<string>;
  /** A stop (latches the active run; never rejects). */
  sendStop(reason: string, outcome: EpisodeOutcome): Promise<StopDelivery>;
  /** Commands can be written now (a socket with a command channel). */
  canCommand(): boolean;
  /** Queues an event for the listener. */
  emit(ev: BackendEvent): void;
}

interface ActiveRun {
  runId: string;
  started: boolean;
  episodeStartNs: number | null;
  frames: number;
  lastTimeS: number;
  wallStartMs: number;
  /** Set by the first stop or damp sent while the run is active: a latch — no start after it. */
  stopRequested: { outcome: EpisodeOutcome; reason: string } | null;
  ended: boolean;
  resolve: (end: EpisodeEnd) => void;
  promise: Promise<EpisodeEnd>;
}

/** How long a release waits for the stopped episode's end, ms (and for its stop's ack). */
const RELEASE_WAIT_MS = 3000;

export class EpisodeRuns {
  private lease: BackendLease | null = null;
  private run: ActiveRun | null = null;

  constructor(private readonly t: RunTransport) {}

  /** The run id holding the lease, or null. */
  get leasedRunId(): string | null {
    return this.lease?.runId ?? null;
  }

  /** The episode whose frames flow now (started, its start known): frames are timed from its start. */
  episodeClock(): { runId: string; episodeStartNs: number } | null {
    const r = this.run;
    return r && !r.ended && r.episodeStartNs !== null ? { runId: r.runId, episodeStartNs: r.episodeStartNs } : null;
  }

  /** One frame of the running episode was accepted (at its time, s). */
  countFrame(timeS: number): void {
    const r = this.run;
    if (!r || r.ended || r.episodeStartNs === null) return;
    r.frames++;
    r.lastTimeS = timeS;
  }

  /** A stop or damp is being sent: it latches the active run (first reason wins). */
  latchStop(outcome: EpisodeOutcome, reason: string): void {
    const r = this.run;
    if (r && !r.ended) r.stopRequested ??= { outcome, reason };
  }

  /**
   * Reserves the lease for runId at once (a second acquire rejects even while this one waits),
   * then awaits `ready` (the link's preconditions); releases the reservation if it throws.
   */
  async acquire(runId: string, ready: () => Promise<void>): Promise<BackendLease> {
    if (this.lease) throw new Error(`${this.t.name} is leased by run ${this.lease.runId}`);
    const placeholder = { runId } as BackendLease;
    this.lease = placeholder;
    try {
      await ready();
    } catch (err) {
      if (this.lease === placeholder) this.lease = null;
      throw err;
    }
    const lease = this.makeLease(runId);
    this.lease = lease;
    return lease;
  }

  /** A wbc_status arrived: the episode's start (tracking) or end (WBC_EPISODE_OVER_STATES). */
  onStatus(s: WbcStatusMsg, lastStampNs: number | null): void {
    const run = this.run;
    if (!run || run.ended || s.run_id !== run.runId) return;
    if (s.state === 'tracking') {
      run.episodeStartNs ??= s.episode_start_ns ?? s.stamp_ns ?? lastStampNs ?? 0;
      return;
    }
    const startedHere = run.started || (s.ack?.command === 'start' && s.ack.ok);
    if (!startedHere && run.episodeStartNs === null) return;
    if (WBC_EPISODE_OVER_STATES.has(s.state)) {
      const outcome: EpisodeOutcome =
        s.outcome ??
        (s.state === 'fault' ? 'infrastructure_error' : (run.stopRequested?.outcome ?? 'aborted_by_operator'));
      this.endRun(run, outcome, s.reason ?? `wbc state ${s.state}`);
    }
  }

  /**
   * The link was declared lost by silence: a lost link stops the robot at once — a prepared run
   * too (its start must never follow). The stop goes out on the socket, which is still open, and
   * is retried until answered; a started run ends link_lost.
   */
  onLinkLost(ageMs: number): void {
    const run = this.run;
    if (!run || run.ended) return;
    void this.t.sendStop(`link lost (console side): no state for ${Math.round(ageMs)} ms`, 'link_lost');
    if (run.started)
      this.endRun(run, 'link_lost', `no state from ${this.t.url} for ${Math.round(ageMs)} ms during the episode`);
  }

  /** The socket closed: a started run ends (with its stop's outcome if one was sent, else link_lost). */
  onSocketClosed(why: string): void {
    const run = this.run;
    if (!run || run.ended || !run.started) return;
    const req = run.stopRequested;
    this.endRun(
      run,
      req ? req.outcome : 'link_lost',
      req
        ? `${req.reason} (link lost before the server confirmed the end)`
        : `link to ${this.t.url} lost during the episode: ${why}`,
    );
  }

  /** The link is closing: an active run is stopped and ended. */
  async close(): Promise<void> {
    const run = this.run;
    if (!run || run.ended) return;
    await this.t.sendStop('console closed the link', 'aborted_by_operator');
    this.endRun(run, run.stopRequested?.outcome ?? 'aborted_by_operator', 'console closed the link');
  }

  private makeLease(runId: string): BackendLease {
    let released = false;
    const check = (): void => {
      if (released) throw new Error(`lease ${runId} was released`);
    };
    return {
      runId,
      reset: async (initial: InitialState) => {
        check();
        if (this.run && !this.run.ended) throw new Error(`reset refused: run ${runId} is running`);
        await this.t.sendCommand(resetCommand(initial, { runId }));
      },
      run: async (request: RunRequest) => {
        check();
        if (this.run && !this.run.ended) throw new Error(`run ${runId} is already running`);
        return this.startRun(runId, request);
      },
      stop: async (outcome: StopOutcome, reason: string) => {
        const run = this.run;
        const d = await this.t.sendStop(reason, outcome);
        // Not confirmed (link down, no ack): end the episode here with the requested outcome;
        // the server ends it on its own when the controller goes away.
        if (d.answer !== 'ok' && run && !run.ended && run.started)
          this.endRun(run, outcome, `${reason} (stop not confirmed by the server: ${d.message})`);
      },
      release: async () => {
        if (released) return;
        const run = this.run;
        if (run && !run.ended && run.started) {
          run.stopRequested ??= { outcome: 'aborted_by_operator', reason: 'lease released' };
          await this.t
            .sendCommand(
              { command: 'stop', args: { reason: 'lease released', outcome: 'aborted_by_operator' } },
              RELEASE_WAIT_MS,
            )
            .catch(() => {});
          await Promise.race([run.promise, clockDelay(this.t.clock, RELEASE_WAIT_MS)]);
          if (!run.ended) this.endRun(run, 'aborted_by_operator', 'lease released');
        } else if (this.t.canCommand()) {
          // Lets the server drop a prepared-but-unstarted episode and its lease.
          await this.t
            .sendCommand({ command: 'stop', args: { reason: `lease ${runId} released` } }, RELEASE_WAIT_MS)
            .catch(() => {});
        }
        released = true;
        if (this.lease?.runId === runId) this.lease = null;
      },
    };
  }

  private async startRun(runId: string, request: RunRequest): Promise<EpisodeEnd> {
    let resolve!: (end: EpisodeEnd) => void;
    const promise = new Promise<EpisodeEnd>((r) => (resolve = r));
    const run: ActiveRun = {
      runId,
      started: false,
      episodeStartNs: null,
      frames: 0,
      lastTimeS: 0,
      wallStartMs: this.t.clock.nowMs(),
      stopRequested: null,
      ended: false,
      resolve,
      promise,
    };
    this.run = run;
    try {
      await this.t.sendCommand(
        prepareCommand({ clip: request.clip, binding: request.binding, seed: request.seed, runId }),
      );
      let permission: true | string = true;
      // Asked even when a stop latched the run meanwhile: its answer is the caller's record of why
      // nothing started (the gate's refusal); the latch blocks the start whatever it says.
      if (request.beforeStart) {
        try {
          permission = await request.beforeStart();
        } catch (err) {
          permission = `the start check failed: ${(err as Error)?.message ?? String(err)}`;
        }
      }
      if (permission !== true)
        run.stopRequested ??= { outcome: 'aborted_by_operator', reason: `start refused: ${permission}` };
      // The last check and the write in one turn: nothing is awaited between the gate's answer
      // and the start on the socket, and a stop/damp sent while beforeStart awaited latched
      // run.stopRequested.
      if (!run.stopRequested && request.mayTransmit) {
        let last: true | string;
        try {
          last = request.mayTransmit('start');
        } catch (err) {
          last = `the last start check failed: ${(err as Error)?.message ?? String(err)}`;
        }
        if (last !== true) run.stopRequested = { outcome: 'aborted_by_operator', reason: `start not sent: ${last}` };
      }
      if (!run.stopRequested) {
        // Written in this turn; from now on a link loss ends the run link_lost (it may move).
        const started = this.t.sendCommand({ command: 'start', args: { run_id: runId } });
        run.started = true;
        try {
          await started;
        } catch (err) {
          run.started = false; // refused or unanswered: the robot did not start it
          throw err;
        }
      }
    } catch (err) {
      // Refused or unanswered: nothing ran. (A start cancelled by our own stop is not an error.)
      if (!run.stopRequested) {
        if (!run.ended) {
          run.ended = true;
          if (this.run === run) this.run = null;
        }
        throw err;
      }
    }
    if (!run.started && run.stopRequested) {
      // Stopped before it began: an empty episode with the stop's outcome.
      this.endRun(run, run.stopRequested.outcome, `${run.stopRequested.reason} (stopped before the episode started)`);
    }
    return promise;
  }

  private endRun(run: ActiveRun, outcome: EpisodeOutcome, reason: string): void {
    if (run.ended) return;
    run.ended = true;
    if (this.run === run) this.run = null;
    const end: EpisodeEnd = {
      runId: run.runId,
      outcome,
      reason,
      frames: run.frames,
      simSeconds: run.lastTimeS,
      wallSeconds: (this.t.clock.nowMs() - run.wallStartMs) / 1000,
    };
    this.t.emit({ type: 'episode_end', end });
    run.resolve(end);
  }
}
