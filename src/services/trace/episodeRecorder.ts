// Records one episode into a campaign (DESIGN §7). Made by CampaignStore.beginEpisode(), which
// has already committed the `running` row. Frames, commands, live metrics and events go to the
// episode's MCAP file in chunks that close every RECORDER_FLUSH_POLICY.everyFrames frames or
// intervalMs of wall time (whichever first) and are fdatasync'ed: a kill -9 or power loss loses
// at most the open chunk. Events are also committed to campaign.sqlite at once (they are rare and
// matter: refusals, resets, stops). finish() closes the file (summary + footer) and then commits
// the episode row, its episode_end event and its metrics in one transaction.
//
// Any write failure (disk full, read-only folder, I/O error) ends the recording: the file keeps
// every complete chunk, the episode is marked interrupted/infrastructure_error with the reason,
// and a TraceStoreError naming the file is thrown.

import type { EpisodeEnd, EpisodeOutcome, ExecutionDomain } from '../../domain/backend/backend';
import type { StateFrame } from '../../domain/robot/stateFrame';
import { episodeMetricsJson, type EpisodeMetrics } from '../../domain/metrics/readings';
import {
  EPISODE_OUTCOMES,
  EVENT_KINDS_NEEDING_REASON,
  TRACE_EVENT_KINDS,
  type EpisodeRecord,
  type NewTraceEvent,
  type ParentTraceRecord,
  type TraceEvent,
  type TraceEventKind,
} from '../../domain/trace/records';
import type { EpisodeWriter, EpisodeWriterStats, ExecutedExtras, FlushPolicy } from '../episode/episodeWriter';
import { fromFsError, TraceStoreError } from './errors';

/** Chunk every 250 frames (0.5 s of a 500 Hz robot stream) or 0.5 s of wall time, fdatasync each chunk. */
export const RECORDER_FLUSH_POLICY: Readonly<FlushPolicy> = Object.freeze({
  everyFrames: 250,
  intervalMs: 500,
  maxChunkBytes: 4 * 1024 * 1024,
  fsync: true,
  maxBacklogBytes: 16 * 1024 * 1024,
});

/** What a closed episode file commits to the index: its end, its file's figures and its metrics. */
export interface FinishedEpisode {
  outcome: EpisodeOutcome;
  reason: string;
  frames: number;
  simSeconds: number | null;
  wallSeconds: number | null;
  bytes: number;
  sha256: string;
  trajectorySha256: string | null;
  metrics: EpisodeMetrics | null;
  meta: Record<string, unknown>;
}

/** What the recorder needs from the store (implemented by CampaignStore). */
export interface RecorderHost {
  readonly dbFile: string;
  markInterrupted(runId: string, why: string, detail: Record<string, unknown>): Promise<unknown>;
  commitFinished(runId: string, f: FinishedEpisode): EpisodeRecord;
  insertEpisodeEvent(e: NewTraceEvent): TraceEvent;
}

export interface EventOptions {
  /** Episode time, seconds (default: the last frame's time). */
  tS?: number;
  /** Required for refusal and human_reset. */
  reason?: string;
  /** Human-readable line for the MCAP /events channel (default: the reason or the kind). */
  message?: string;
  detail?: Record<string, unknown>;
}

export interface FinishExtras {
  /** Replay-audit hash (simulator episodes). */
  trajectorySha256?: string | null;
  /** More entries for the file's "result" metadata. */
  result?: Record<string, string | number | boolean | null>;
  /** More entries for the episode row's meta (merged over what it was begun with). */
  meta?: Record<string, unknown>;
}

type State = 'recording' | 'finishing' | 'done' | 'failed';

export class EpisodeRecorder {
  private state: State = 'recording';
  private lastTimeS = 0;

  /** @internal made by CampaignStore.beginEpisode() */
  constructor(
    private readonly host: RecorderHost,
    readonly runId: string,
    /** The episode's MCAP file (absolute). */
    readonly file: string,
    readonly parent: ParentTraceRecord,
    readonly executionDomain: ExecutionDomain,
    private readonly writer: EpisodeWriter,
    private readonly release: () => void,
  ) {}

  get status(): State {
    return this.state;
  }

  private assertRecording(what: string): void {
    if (this.state !== 'recording')
      throw new TraceStoreError(
        'state',
        this.file,
        `cannot ${what}: episode ${this.runId} is ${this.state === 'done' ? 'finished' : this.state}`,
      );
  }

  /** Executed frames (plus commands and live metrics in `extras`, as EpisodeWriter takes them). */
  async frames(frames: readonly StateFrame[], extras?: readonly (ExecutedExtras | null | undefined)[]): Promise<void> {
    this.assertRecording('record frames');
    if (frames.length > 0) this.lastTimeS = frames[frames.length - 1].timeS;
    try {
      await this.writer.writeFrames(frames, extras);
    } catch (err) {
      await this.fail(err, 'writing frames');
    }
  }

  /** The robot's state after the clip's end, on the episode's clock (EpisodeWriter.writeAfterClipFrames). */
  async afterClipFrames(frames: readonly StateFrame[]): Promise<void> {
    this.assertRecording('record frames after the clip');
    try {
      await this.writer.writeAfterClipFrames(frames);
    } catch (err) {
      await this.fail(err, 'writing frames after the clip');
    }
  }

  /** An event: committed to campaign.sqlite at once and written to the file's /events channel. */
  async event(kind: TraceEventKind, o: EventOptions = {}): Promise<TraceEvent> {
    this.assertRecording('record an event');
    if (!TRACE_EVENT_KINDS.includes(kind))
      throw new TraceStoreError('invalid', this.host.dbFile, `unknown event kind ${String(kind)}`);
    if (kind === 'episode_start' || kind === 'episode_end' || kind === 'recovery')
      throw new TraceStoreError('invalid', this.host.dbFile, `${kind} events are written by the store itself`);
    if (EVENT_KINDS_NEEDING_REASON.includes(kind) && !o.reason?.trim())
      throw new TraceStoreError('invalid', this.host.dbFile, `a ${kind} event must give its reason`);
    const tS = o.tS ?? this.lastTimeS;
    const ev = this.host.insertEpisodeEvent({
      kind,
      runId: this.runId,
      tS,
      reason: o.reason ?? null,
      detail: o.detail ?? {},
    });
    try {
      await this.writer.writeEvent(
        tS,
        kind,
        o.message ?? o.reason ?? kind,
        { ...(o.detail ?? {}), event_id: ev.id },
        o.reason,
      );
    } catch (err) {
      await this.fail(err, 'writing an event');
    }
    return ev;
  }

  /** Closes the open chunk and waits until everything so far is on disk. */
  async flush(): Promise<void> {
    this.assertRecording('flush');
    try {
      await this.writer.flush();
    } catch (err) {
      await this.fail(err, 'flushing');
    }
  }

  /** Frames written, frames durable (in synced chunks), chunks, bytes. */
  stats(): EpisodeWriterStats {
    return this.writer.stats();
  }

  /**
   * Ends the episode: episode_end and the final metrics go to the file, the file is closed with
   * its summary, then the row (finished, outcome, reason, counts, file size and sha256), the
   * episode_end event and the metrics row commit in one transaction. Metrics must be under the
   * parent trace's contract (or null when there are none, e.g. a refused start).
   */
  async finish(
    end: EpisodeEnd & { trajectorySha256?: string | null; plannedFrames?: number },
    metrics: EpisodeMetrics | null,
    extras: FinishExtras = {},
  ): Promise<EpisodeRecord> {
    this.assertRecording('finish');
    if (end.runId !== this.runId)
      throw new TraceStoreError(
        'invalid',
        this.host.dbFile,
        `EpisodeEnd is for run ${end.runId}, this recorder records ${this.runId}`,
      );
    if (!EPISODE_OUTCOMES.includes(end.outcome))
      throw new TraceStoreError('invalid', this.host.dbFile, `unknown outcome ${String(end.outcome)}`);
    if (metrics && metrics.contract !== this.parent.identity.contractId) {
      throw new TraceStoreError(
        'invalid',
        this.host.dbFile,
        `metrics are under ${metrics.contract}, the parent trace ${this.parent.id} under ${this.parent.identity.contractId}; store other contracts with putMetrics()`,
      );
    }
    this.state = 'finishing';
    const stats = this.writer.stats();
    const trajectorySha256 = extras.trajectorySha256 ?? end.trajectorySha256 ?? null;
    let closed: { bytes: number; sha256: string };
    try {
      const t = Number.isFinite(end.simSeconds) ? end.simSeconds : this.lastTimeS;
      await this.writer.writeEvent(t, 'episode_end', `${end.outcome}: ${end.reason}`, {
        outcome: end.outcome,
        frames: stats.frames,
        ...(trajectorySha256 ? { trajectory_sha256: trajectorySha256 } : {}),
      });
      if (metrics) await this.writer.writeFinalMetrics(t, episodeMetricsJson(metrics));
      closed = await this.writer.close({
        outcome: end.outcome,
        reason: end.reason,
        frames: stats.frames,
        backend_frames: end.frames,
        ...(end.plannedFrames !== undefined ? { planned_frames: end.plannedFrames } : {}),
        sim_seconds: end.simSeconds,
        wall_seconds: end.wallSeconds,
        trajectory_sha256: trajectorySha256,
        ...(extras.result ?? {}),
      });
    } catch (err) {
      return this.fail(err, 'closing the episode file');
    }
    try {
      const rec = this.host.commitFinished(this.runId, {
        outcome: end.outcome,
        reason: end.reason,
        frames: stats.frames,
        simSeconds: Number.isFinite(end.simSeconds) ? end.simSeconds : null,
        wallSeconds: Number.isFinite(end.wallSeconds) ? end.wallSeconds : null,
        bytes: closed.bytes,
        sha256: closed.sha256,
        trajectorySha256,
        metrics,
        meta: { ...(end.frames !== stats.frames ? { backend_frames: end.frames } : {}), ...(extras.meta ?? {}) },
      });
      this.state = 'done';
      return rec;
    } catch (err) {
      // The file is complete but the index could not record it: the row stays `running` until
      // recovery (next open, or recoverInterrupted()) marks it; the file is kept either way.
      this.state = 'failed';
      throw err;
    } finally {
      this.release();
    }
  }

  /**
   * Ends the recording without an outcome of its own (an exception in the pipeline): the open
   * chunk is written, the file closed without a summary, and the episode marked
   * interrupted/infrastructure_error with `reason`.
   */
  async abort(reason: string): Promise<void> {
    if (this.state !== 'recording') return;
    this.state = 'failed';
    try {
      await this.writer.abandon();
      await this.host.markInterrupted(this.runId, `recording aborted: ${reason}`, { cause: 'aborted' });
    } finally {
      this.release();
    }
  }

  private async fail(err: unknown, during: string): Promise<never> {
    this.state = 'failed';
    const e = fromFsError(err, this.file, 'cannot write the episode file');
    try {
      await this.writer.abandon();
      await this.host.markInterrupted(this.runId, `${during} failed: ${e.message}`, {
        cause: 'write_failed',
        code: e.code,
      });
    } catch {
      // The index cannot be written either: the row stays `running` and the next open recovers it.
    } finally {
      this.release();
    }
    throw e;
  }
}
