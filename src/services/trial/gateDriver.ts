import { performance } from 'node:perf_hooks';
import {
  NotARobotBackendError,
  stopPathRefusal,
  watchOnlyRefusal,
  WatchOnlyLinkError,
  type BackendEvent,
  type StopDelivery,
} from '../../domain/backend/backend';
import type { TraceEventKind } from '../../domain/trace/records';
import { SafetyGate } from '../../domain/safety/safetyGate';
import type {
  GateEffects,
  GateEvent,
  GateTrip,
  MotionDecision,
  MotionKind,
  SafetyGateConfig,
} from '../../domain/safety/safetyTypes';
import type { CampaignStore } from '../trace';
import type { InterlockFeed } from './interlockFeed';
import type { TrialRobot } from './trialTypes';

// The pure SafetyGate (src/domain/safety) wired to the real world for one trial session:
//   inputs  — every interlock status/e-stop/loss (InterlockFeed), every batch of robot frames
//             (`lowstate` at its arrival time), the link's presence going `lost`, and a 10 ms tick
//             that drives the gate's watchdogs (interlock silent > 100 ms, no lowstate > 100 ms);
//   outputs — the gate's actions (stop, damp) are sent at once through the TrialRobot (over the
//             backend's declared RobotBackend stop path: a backend that declares none is refused
//             at construction, with a `refusal` trace event and NotARobotBackendError), its trace
//             events (refusals, trips, human resets) go to the campaign, its problems to the log,
//             and a trip is handed to the session (which ends the episode with the trip's outcome).
// Every input is stamped with performance.now() (or the interlock's own reading of it), clamped
// so the gate's clock never goes backwards.

const TICK_MS = 10;

export interface GateDriverOptions {
  link: TrialRobot;
  interlock: InterlockFeed;
  store: CampaignStore;
  parentTraceId?: string | null;
  config?: Partial<SafetyGateConfig>;
  onTrip?: (trip: GateTrip) => void;
  log?: (line: string) => void;
}

export class GateDriver {
  readonly gate: SafetyGate;
  private lastMs = 0;
  private readonly unsubscribers: (() => void)[] = [];
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  parentTraceId: string | null;

  constructor(private readonly o: GateDriverOptions) {
    this.gate = new SafetyGate(o.config ?? {});
    this.parentTraceId = o.parentTraceId ?? null;
    // A trip's stop and damp must be able to reach the robot: without a stop path, no trial.
    const noStop = stopPathRefusal(o.link.backend);
    if (noStop !== null) {
      this.record('refusal', noStop, null, { reasons: [noStop] });
      throw new NotARobotBackendError(o.link.backend.name, noStop);
    }
    // A link that can only be watched (a ROS 2 foxglove_bridge: no g1-bridge/1 runner) carries no trial.
    const watchOnly = watchOnlyRefusal(o.link.backend);
    if (watchOnly !== null) {
      this.record('refusal', watchOnly, null, { reasons: [watchOnly] });
      throw new WatchOnlyLinkError(o.link.backend.name, watchOnly);
    }
    this.unsubscribers.push(o.interlock.subscribe((e) => this.feed(e)));
    this.unsubscribers.push(
      o.link.subscribe(async (events: BackendEvent[]) => {
        for (const e of events) {
          if (e.type === 'frames' && e.frames.length > 0) this.feed({ type: 'lowstate', atMs: this.now() });
          // A lost link trips only while the robot moves under this gate; otherwise the stale
          // lowstate refuses motion (a trip would damp a robot standing idle).
          else if (e.type === 'presence' && e.presence === 'lost' && this.gate.snapshot().episode?.moving) {
            this.feed({
              type: 'link_lost',
              atMs: this.now(),
              reason: `the robot link (${o.link.backend.name}) is lost`,
            });
          }
        }
      }),
    );
    // The watchdogs are judged in the check phase (setImmediate), after this turn's I/O poll: a
    // timer that wakes late because this loop was busy would otherwise judge before reading the
    // statuses and frames that did arrive meanwhile (Node runs timers before poll I/O), and trip
    // a link that never went silent. Silence that is real is judged the same, one poll later.
    this.timer = setInterval(
      () =>
        setImmediate(() => {
          if (!this.closed) this.feed({ type: 'tick', atMs: this.now() });
        }),
      TICK_MS,
    );
  }

  /** The gate's clock: performance.now(), never earlier than the last input. */
  now(): number {
    return Math.max(performance.now(), this.lastMs);
  }

  /** Feeds one event; runs its effects (stop/damp sent at once, trace written, trip reported). */
  feed(event: GateEvent): GateEffects | null {
    if (this.closed) return null;
    const atMs = Math.max(event.atMs, this.lastMs);
    this.lastMs = atMs;
    const fx = this.gate.handle({ ...event, atMs } as GateEvent);
    this.apply(fx);
    return fx;
  }

  requestMotion(kind: MotionKind): MotionDecision {
    const atMs = this.now();
    this.lastMs = atMs;
    const d = this.gate.requestMotion(kind, atMs);
    this.apply(d.effects);
    return d;
  }

  /**
   * The last check before the granted `kind` is written for episode `runId` (SafetyGate.transmit):
   * synchronous, so the caller writes the command in the same turn, with nothing awaited between.
   */
  transmit(kind: MotionKind, runId: string): MotionDecision {
    const atMs = this.now();
    this.lastMs = atMs;
    const d = this.gate.transmit(kind, runId, atMs);
    this.apply(d.effects);
    return d;
  }

  private apply(fx: GateEffects): void {
    for (const a of fx.actions) {
      const trip = fx.trip;
      const runId = trip?.runId ?? null;
      // Both are written at once, in order, without awaiting each other; each is retried by the
      // link until answered, and what happened to it is traced when it settles.
      const sent =
        a.command === 'stop'
          ? this.o.link.stop(
              trip?.outcome === 'estop' || trip?.outcome === 'intervention' || trip?.outcome === 'link_lost'
                ? trip.outcome
                : 'aborted_by_operator',
              a.reason,
            )
          : this.o.link.damp(a.reason);
      void sent.then((d) => this.recordDelivery(d, runId, trip?.cause ?? null));
    }
    for (const t of fx.trace) this.record(t.kind, t.reason, t.runId, t.detail);
    for (const p of fx.problems) this.o.log?.(`safety gate: ${p.severity}: ${p.message}`);
    if (fx.trip) this.o.onTrip?.(fx.trip);
  }

  /** One trace event: on the episode when it is stored, else on the parent trace naming the run. */
  private record(kind: TraceEventKind, reason: string, runId: string | null, detail: Record<string, unknown>): void {
    try {
      // A refusal comes before its episode is stored (nothing ran): it names the run in its detail.
      const stored = runId !== null && this.o.store.getEpisode(runId) !== null;
      this.o.store.recordEvent({
        kind,
        reason,
        runId: stored ? runId : null,
        parentTraceId: stored ? null : this.parentTraceId,
        detail: { ...detail, run_id: runId },
      });
    } catch (err) {
      this.o.log?.(`trace: cannot record ${kind}: ${(err as Error).message}`);
    }
  }

  /**
   * What became of a trip's stop or damp (DESIGN §6): acknowledged → a `note`
   * with the writes and the ack time (the trip itself is the `stop_requested` event, which the
   * runner reads as "tripped since the last reset"); refused or unanswered → a `problem`.
   * Recorded even after close() (a delivery may settle after the session ended).
   */
  private recordDelivery(d: StopDelivery, runId: string | null, cause: string | null): void {
    const after = d.firstSentAtMs === null ? null : Math.round((d.settledAtMs - d.firstSentAtMs) * 10) / 10;
    const detail = {
      delivery: {
        command: d.command,
        attempts: d.attempts,
        answer: d.answer,
        message: d.message,
        settled_after_ms: after,
      },
      cause,
    };
    if (d.answer === 'ok') {
      this.record(
        'note',
        `${d.command} acknowledged by ${this.o.link.backend.name} (${d.attempts} write(s), answered ${after} ms after the first): ${d.message}`,
        runId,
        detail,
      );
    } else {
      const what =
        d.answer === 'refused'
          ? `refused by ${this.o.link.backend.name}`
          : d.attempts === 0
            ? 'not sent'
            : `sent ${d.attempts}× without an answer`;
      this.record('problem', `${d.command} of the trip ${what}: ${d.message}`, runId, detail);
      this.o.log?.(`safety gate: ${d.command} ${what}: ${d.message}`);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    for (const u of this.unsubscribers) u();
  }
}
