import type { ApiParams, TrialJobStatus, TrialProgressDetail, TrialPromptDto } from '../../api/contract';
import type { EpisodeMetrics } from '../../domain/metrics/readings';
import type { CampaignStore } from '../trace';
import type { AdmittedPair } from '../trial/admittedPairs';
import type { MatchedPairRequest, MatchedPairResult, TrialProgressEvent } from '../trial/trialTypes';
import { stillnessDto } from './calibrationCaptures';
import type { EventHub } from './eventHub';
import { TrialLiveBatches } from './trialLiveBatches';
import { errorText, nextId, type TrialServices } from './trialServices';

// One matched-pair job (trial.start): the runner's prompts become `trial.prompt` pushes answered by
// trial.confirm; its progress → `trial.progress` with the job's status; its live readings → the
// job's `live.frames` batches (source trial_job). The operator's STOP aborts its controller.

interface PromptWait {
  prompt: TrialPromptDto;
  resolve: (answer: { ok: boolean; note: string | null }) => void;
}

const mpjpeOf = (m: EpisodeMetrics | null): number | null => (m && m.mpjpeLMm.available ? m.mpjpeLMm.value : null);

export class TrialJob {
  readonly status: TrialJobStatus;
  readonly controller = new AbortController();
  store: CampaignStore | null;
  prompt: PromptWait | null = null;
  readonly live: TrialLiveBatches;
  /** Settles when the job has ended (never rejects). */
  done: Promise<void> = Promise.resolve();

  constructor(
    private readonly hub: EventHub,
    private readonly now: () => number,
    p: ApiParams<'trial.start'>,
    dir: string,
    pair: AdmittedPair,
    trials: number,
    store: CampaignStore,
  ) {
    const jobId = nextId('trial', now());
    this.status = {
      jobId,
      campaignDir: dir,
      pairId: pair.pairId,
      connectionId: p.connectionId,
      calibrationId: p.calibrationId ?? null,
      trials,
      state: 'running',
      phase: null,
      phaseMessage: 'starting',
      trialIndex: null,
      clip: { id: pair.clipId, name: pair.clipName },
      binding: pair.bindingKey,
      bindingName: pair.bindingName,
      prompt: null,
      refusals: [],
      lastTrip: null,
      episodes: [],
      liveRunId: null,
      stopRequested: null,
      result: null,
      error: null,
      startedAtMs: now(),
      endedAtMs: null,
    };
    this.store = store;
    this.live = new TrialLiveBatches(hub, jobId);
  }

  /** The runner's operator: its prompts become `trial.prompt` pushes answered by trial.confirm (or STOP). */
  operator(): MatchedPairRequest['operator'] {
    const { controller, status } = this;
    const ask = (prompt: TrialPromptDto): Promise<{ ok: boolean; note: string | null }> =>
      new Promise((resolve) => {
        if (controller.signal.aborted) return resolve({ ok: false, note: null });
        this.prompt = { prompt, resolve };
        status.prompt = prompt;
        this.hub.broadcast({ type: 'trial.prompt', jobId: status.jobId, prompt });
        this.pushProgress(null);
        controller.signal.addEventListener('abort', () => this.answer(prompt.promptId, false, null), {
          once: true,
        });
      });
    return {
      confirmTrial: async (info) =>
        (
          await ask({
            promptId: nextId('prompt', this.now()),
            kind: 'confirm_trial',
            askedAtMs: this.now(),
            trial: { ...info, calibrationCheck: { ...info.calibrationCheck } },
            reset: null,
          })
        ).ok,
      confirmReset: async (info) => {
        const a = await ask({
          promptId: nextId('prompt', this.now()),
          kind: 'confirm_reset',
          askedAtMs: this.now(),
          trial: null,
          reset: { ...info },
        });
        return a.ok ? (a.note ?? 'reset confirmed from the console') : null;
      },
    };
  }

  /** Runs the pair to its end and records how it ended in the job's status; never rejects. */
  async run(s: TrialServices, req: MatchedPairRequest): Promise<void> {
    const { status, controller } = this;
    try {
      const result = await s.runMatchedPair(req);
      status.result = resultDto(result);
      status.calibrationId = result.calibrationId;
      status.state = result.stoppedEarly !== null || controller.signal.aborted ? 'stopped' : 'completed';
    } catch (err) {
      status.state = controller.signal.aborted ? 'stopped' : 'failed';
      status.error = errorText(err);
    } finally {
      this.finish();
    }
  }

  private finish(): void {
    const s = this.status;
    if (this.prompt) this.answer(this.prompt.prompt.promptId, false, null);
    this.live.stop();
    try {
      this.store?.close();
    } catch {
      // closing twice or after a failure: nothing left to do
    }
    this.store = null;
    s.liveRunId = null;
    s.prompt = null;
    s.endedAtMs = this.now();
    const message =
      s.state === 'failed'
        ? (s.error ?? 'failed')
        : s.state === 'stopped'
          ? (s.result?.stoppedEarly ?? s.stopRequested?.reason ?? 'stopped')
          : 'all trials done';
    this.pushProgress({ type: 'ended', state: s.state === 'running' ? 'failed' : s.state, message });
  }

  /** A copy of the status, safe to hand out. */
  snapshot(): TrialJobStatus {
    return structuredClone(this.status);
  }

  pushProgress(detail: TrialProgressDetail | null): void {
    this.hub.broadcast({ type: 'trial.progress', jobId: this.status.jobId, status: this.snapshot(), detail });
  }

  onProgress(e: TrialProgressEvent): void {
    const s = this.status;
    switch (e.type) {
      case 'live':
        this.live.add(e, () => {
          s.liveRunId = e.runId;
          this.pushProgress(null);
        });
        return;
      case 'stillness':
        this.hub.broadcast({
          type: 'calibration.stillness',
          captureId: `capture-${s.jobId.slice('trial-'.length)}`,
          connectionId: s.connectionId,
          progress: stillnessDto(e.progress),
        });
        return;
      case 'phase':
        s.phase = e.phase;
        s.phaseMessage = e.message;
        s.trialIndex = e.trialIndex;
        // A new trial runs: what refused or tripped before it (and was reset) is history (the trace keeps it).
        if (e.phase === 'running') {
          s.refusals = [];
          s.lastTrip = null;
        }
        this.pushProgress({ type: 'phase', phase: e.phase, trialIndex: e.trialIndex, message: e.message });
        return;
      case 'refusal':
        s.refusals = e.reasons.map((r) => ({ code: r.code, condition: r.condition, message: r.message }));
        this.pushProgress({ type: 'refusal', runId: e.runId, reasons: s.refusals.map((r) => ({ ...r })) });
        return;
      case 'trip':
        s.lastTrip = { cause: e.trip.cause, reason: e.trip.reason, outcome: e.trip.outcome };
        this.pushProgress({
          type: 'trip',
          cause: e.trip.cause,
          reason: e.trip.reason,
          outcome: e.trip.outcome,
          runId: e.trip.runId,
        });
        return;
      case 'episode_end': {
        this.live.flush();
        const end = {
          runId: e.runId,
          domain: e.domain,
          trialIndex: e.trialIndex,
          outcome: e.outcome,
          reason: e.reason,
          frames: e.frames,
          resumed: e.resumed,
        };
        s.episodes.push(end);
        if (s.liveRunId === e.runId) s.liveRunId = null;
        this.pushProgress({ type: 'episode_end', ...end });
        return;
      }
    }
  }

  answer(promptId: string, ok: boolean, note: string | null): boolean {
    const w = this.prompt;
    if (!w || w.prompt.promptId !== promptId) return false;
    this.prompt = null;
    this.status.prompt = null;
    w.resolve({ ok, note });
    this.pushProgress({ type: 'prompt_answered', promptId, ok });
    return true;
  }
}

/** The job status's account of the pair's result. */
function resultDto(result: MatchedPairResult): NonNullable<TrialJobStatus['result']> {
  return {
    parentTraceId: result.parentTraceId,
    calibrationId: result.calibrationId,
    sim: {
      runId: result.sim.runId,
      outcome: result.sim.outcome,
      resumed: result.sim.resumed,
      mpjpeLMm: mpjpeOf(result.sim.metrics),
    },
    real: result.real.map((r) => ({
      runId: r.runId,
      trialIndex: r.trialIndex,
      outcome: r.outcome,
      reason: r.reason,
      frames: r.frames,
      resumed: r.resumed,
      mpjpeLMm: mpjpeOf(r.metrics),
    })),
    remaining: result.remaining,
    stoppedEarly: result.stoppedEarly,
  };
}
