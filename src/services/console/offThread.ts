// Heavy file work of the console API, off the event loop that carries the operator's STOP, the
// interlock heartbeat and every other request: clip decoding (clips.load, clips.decode) and the
// campaign opening of qualification.open run in one worker thread (fileWorker.ts, started through
// the simulator's tsx bootstrap), and so does the reading of a released policy (policies.open). A decoded clip comes back with its typed arrays transferred, not
// copied, and with its API result already serialized to JSON in the worker, so the main thread
// neither converts 18 M numbers nor stringifies them (a 200 MB CSV: 4 s of decoding, 2 s of DTO
// and JSON here otherwise). The built-in workload (core-v1) is generated there too, and a campaign's
// analysis (analysis.run) runs there.
//
// A task's error comes back as its own type (workerErrors.ts), so the API's error map sees it as the
// worker threw it.
//
// Every task has a deadline. A task that misses it is answered with an error at once; the worker,
// presumed stuck, is terminated and the next task starts a fresh one.

import { Worker } from 'node:worker_threads';
import type {
  AnalysisDocument,
  ApiParams,
  GapContractsDto,
  GapReplayDto,
  GapReportDto,
  MeshDto,
  QualificationOpenResult,
  QualificationReplayDto,
  TrialEpisodeDto,
} from '../../api/contract';
import type { CampaignBoardReport } from './campaignBoardReads';
import { SerializedResult } from './serializedResult';
import type { JointLimitsRad } from '../../domain/motion/clipCommon';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { LoadedWorkload } from '../../domain/workload/snapshot';
import type { PolicyPlan } from '../wbc/policyRun';
import type { PolicyCheckReport } from '../../domain/wbc/policyCheck';
import { ApiFailure } from './apiFailure';
import { reviveError, type SerializedError } from './workerErrors';

/** Longest a clip may take to read and decode off the event loop (a 256 MiB CSV takes ~6 s here). */
export const CLIP_TASK_TIMEOUT_MS = 120_000;
/** Longest the built-in workload may take to generate (core-v1: 0.5–2.2 s on a loaded 2-core machine). */
export const WORKLOAD_TASK_TIMEOUT_MS = 60_000;
/** Longest analysis.run may take (a 47-clip, 7-binding campaign: 10–20 s on this 2-core machine). */
export const ANALYSIS_TASK_TIMEOUT_MS = 300_000;
/**
 * Longest a board's read of a campaign may take (qualification.report and .replay, gap.report,
 * .replay and .contracts): a campaign's rows and episodes, up to 1 GiB each.
 */
export const CAMPAIGN_READ_TIMEOUT_MS = 120_000;
/** Longest robot.getMesh may take to read a mesh (at most MAX_MESH_FILE_BYTES) and encode it. */
export const MESH_TASK_TIMEOUT_MS = 30_000;
/**
 * Longest policies.open may take: read, bound and hash the files, a trial inference, the baked
 * motion's forward kinematics (the released policies: under 2 s; a 512 MiB model is read whole).
 */
export const POLICY_OPEN_TIMEOUT_MS = 60_000;
/**
 * Longest policies.check may take: the policy read again, then up to five runs of at most 60
 * simulated seconds each in MuJoCo (a 5 s window: 1–3 s in all on this 2-core machine).
 */
export const POLICY_CHECK_TIMEOUT_MS = 300_000;
/** Longest qualification.open may take to check, create or open a campaign folder. */
export const CAMPAIGN_OPEN_TIMEOUT_MS = 30_000;
/**
 * The worker's V8 heap limit, MiB: a 256 MiB CSV needs about 1.5 GiB while it decodes. A task that
 * needs more ends the worker (ERR_WORKER_OUT_OF_MEMORY, answered as an error), never the host.
 */
export const FILE_WORKER_HEAP_MIB = 4096;

export interface ClipTaskOptions {
  fps?: number;
  jointLimitsRad?: JointLimitsRad;
  /**
   * The robot model whose joint limits produce the joint_limit warnings, read (once) in the
   * worker rather than on the event loop; none when it cannot be read. Ignored with jointLimitsRad.
   */
  limitsModelFile?: string;
}

export type FileTask =
  | { kind: 'clip.load'; file: string; options: ClipTaskOptions }
  | { kind: 'clip.decode'; fileName: string; bytesBase64: string; options: ClipTaskOptions }
  | { kind: 'campaign.open'; campaignDir: string; create: boolean }
  | { kind: 'trial.episode'; campaignDir: string; runId: string }
  | { kind: 'workload.builtin'; id: 'core-v1' }
  | { kind: 'analysis.run'; params: ApiParams<'analysis.run'> }
  | { kind: 'qualification.board'; params: ApiParams<'qualification.report'> }
  | {
      kind: 'qualification.replay';
      params: ApiParams<'qualification.replay'>;
      reference: MotionClip | null;
      modelFile: string;
    }
  | { kind: 'gap.report'; params: ApiParams<'gap.report'>; modelFile: string }
  | { kind: 'gap.replay'; params: ApiParams<'gap.replay'>; modelFile: string }
  | { kind: 'gap.contracts'; params: ApiParams<'gap.contracts'>; modelFile: string }
  | { kind: 'robot.mesh'; modelFile: string; name: string }
  | { kind: 'policy.open'; policyPath: string; modelFile: string; preset?: string | null }
  | {
      kind: 'policy.check';
      policyPath: string;
      /** The content hash of the policy as opened: the check refuses files changed since. */
      contentHash: string;
      preset: string | null;
      modelFile: string;
      clip: MotionClip | null;
      seconds: number | undefined;
    };

/**
 * A policy opened in the worker (policies.open): its plan, whose typed arrays (the baked clip, its
 * tracking reference, the file's time-indexed tables) are transferred, and its PolicyInfoDto as
 * UTF-8 JSON.
 */
export interface OpenedPolicy {
  plan: PolicyPlan;
  dtoJson: Uint8Array;
}

/** A clip decoded in the worker: the clip (arrays transferred) and its ClipDto as UTF-8 JSON. */
export interface DecodedClip {
  clip: MotionClip;
  dtoJson: Uint8Array;
}

export type FileTaskReply =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; error: SerializedError };

/** The buffers of a clip that can be transferred (an array that owns its whole buffer), once each. */
export function clipTransferList(clip: MotionClip, extra: Uint8Array[] = []): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  const add = (a: ArrayBufferView | undefined) => {
    if (a && a.buffer instanceof ArrayBuffer && a.byteOffset === 0 && a.byteLength === a.buffer.byteLength)
      out.add(a.buffer);
  };
  add(clip.rootPosM);
  add(clip.rootQuatWxyz);
  add(clip.jointPosRad);
  add(clip.jointVelRadS);
  add(clip.bodyPosW?.data);
  for (const e of extra) add(e);
  return [...out];
}

const BOOTSTRAP = new URL('../sim/simWorkerBootstrap.mjs', import.meta.url);
const WORKER_ENTRY = new URL('./fileWorker.ts', import.meta.url);

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
  worker: Worker;
}

let serial = 0;

/** The console's file worker: started on first use, replaced after a crash or a missed deadline. */
export class OffThreadFiles {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  loadClip(file: string, options: ClipTaskOptions = {}): Promise<DecodedClip> {
    return this.run(
      { kind: 'clip.load', file, options },
      CLIP_TASK_TIMEOUT_MS,
      `reading ${file}`,
    ) as Promise<DecodedClip>;
  }

  decodeClip(fileName: string, bytesBase64: string, options: ClipTaskOptions = {}): Promise<DecodedClip> {
    return this.run(
      { kind: 'clip.decode', fileName, bytesBase64, options },
      CLIP_TASK_TIMEOUT_MS,
      `decoding ${fileName}`,
    ) as Promise<DecodedClip>;
  }

  openCampaign(campaignDir: string, create: boolean): Promise<QualificationOpenResult> {
    return this.run(
      { kind: 'campaign.open', campaignDir, create },
      CAMPAIGN_OPEN_TIMEOUT_MS,
      `opening the campaign ${campaignDir}`,
    ) as Promise<QualificationOpenResult>;
  }

  /** One recorded episode for the overlay (trial.episode), as the UTF-8 JSON the worker made of it. */
  async trialEpisode(campaignDir: string, runId: string): Promise<SerializedResult<TrialEpisodeDto>> {
    const json = (await this.run(
      { kind: 'trial.episode', campaignDir, runId },
      CAMPAIGN_OPEN_TIMEOUT_MS,
      `reading episode ${runId}`,
    )) as Uint8Array;
    return new SerializedResult(json, () => JSON.parse(new TextDecoder().decode(json)) as TrialEpisodeDto);
  }

  /**
   * A built-in workload generated in the worker (its clips' arrays transferred): the same code and
   * the same result as loadWorkload on this thread, without the 0.5–2 s it would block STOP here.
   */
  builtinWorkload(id: 'core-v1'): Promise<LoadedWorkload> {
    return this.run(
      { kind: 'workload.builtin', id },
      WORKLOAD_TASK_TIMEOUT_MS,
      `generating the ${id} workload`,
    ) as Promise<LoadedWorkload>;
  }

  /**
   * A campaign's analysis (analysis.run): store reads and bootstraps, and the document's JSON, made
   * there (a campaign's document is large enough that building it here would hold STOP).
   */
  async analyzeCampaign(params: ApiParams<'analysis.run'>): Promise<SerializedResult<AnalysisDocument>> {
    const json = (await this.run(
      { kind: 'analysis.run', params },
      ANALYSIS_TASK_TIMEOUT_MS,
      `analysing the campaign ${params.campaignDir}`,
    )) as Uint8Array;
    return new SerializedResult(json, () => JSON.parse(new TextDecoder().decode(json)) as AnalysisDocument);
  }

  /** The stored part of the board's matrix (qualification.report), read from the campaign there. */
  campaignBoard(params: ApiParams<'qualification.report'>): Promise<CampaignBoardReport> {
    return this.run(
      { kind: 'qualification.board', params },
      CAMPAIGN_READ_TIMEOUT_MS,
      `reading the campaign ${params.campaignDir}`,
    ) as Promise<CampaignBoardReport>;
  }

  /** qualification.replay: the worst rollout's episode read and evaluated there against `reference`. */
  qualificationReplay(
    params: ApiParams<'qualification.replay'>,
    reference: MotionClip | null,
    modelFile: string,
  ): Promise<QualificationReplayDto> {
    return this.run(
      { kind: 'qualification.replay', params, reference, modelFile },
      CAMPAIGN_READ_TIMEOUT_MS,
      `replaying ${params.bindingKey} × ${params.clipId} of ${params.campaignDir}`,
    ) as Promise<QualificationReplayDto>;
  }

  /** gap.report of the campaign, built there. */
  gapReport(params: ApiParams<'gap.report'>, modelFile: string): Promise<GapReportDto> {
    return this.run(
      { kind: 'gap.report', params, modelFile },
      CAMPAIGN_READ_TIMEOUT_MS,
      `reading the gap report of ${params.campaignDir}`,
    ) as Promise<GapReportDto>;
  }

  /** gap.replay of one matched pair: its episodes read there. */
  gapReplay(params: ApiParams<'gap.replay'>, modelFile: string): Promise<GapReplayDto> {
    return this.run(
      { kind: 'gap.replay', params, modelFile },
      CAMPAIGN_READ_TIMEOUT_MS,
      `replaying pair ${params.parentTraceId} of ${params.campaignDir}`,
    ) as Promise<GapReplayDto>;
  }

  /** gap.contracts: the contracts' comparison (and the scoring of what is missing) there. */
  gapContracts(params: ApiParams<'gap.contracts'>, modelFile: string): Promise<GapContractsDto> {
    return this.run(
      { kind: 'gap.contracts', params, modelFile },
      ANALYSIS_TASK_TIMEOUT_MS,
      `comparing the contracts of ${params.campaignDir}`,
    ) as Promise<GapContractsDto>;
  }

  /**
   * robot.getMesh: a mesh the model references, read, base64-encoded and serialized to JSON there
   * (a 40 MiB mesh: ~0.5 s of JSON.stringify that would otherwise hold this loop).
   */
  async modelMesh(modelFile: string, name: string): Promise<SerializedResult<MeshDto>> {
    const json = (await this.run(
      { kind: 'robot.mesh', modelFile, name },
      MESH_TASK_TIMEOUT_MS,
      `reading mesh "${name}"`,
    )) as Uint8Array;
    return new SerializedResult(json, () => JSON.parse(new TextDecoder().decode(json)) as MeshDto);
  }

  /** policies.open off the event loop: the policy read, checked and planned on `modelFile`'s robot. */
  openPolicy(policyPath: string, modelFile: string, preset: string | null = null): Promise<OpenedPolicy> {
    return this.run(
      { kind: 'policy.open', policyPath, modelFile, preset },
      POLICY_OPEN_TIMEOUT_MS,
      `opening the policy ${policyPath}`,
    ) as Promise<OpenedPolicy>;
  }

  /** policies.check off the event loop: the check's runs in the worker's own MuJoCo engine. */
  checkPolicy(task: Omit<Extract<FileTask, { kind: 'policy.check' }>, 'kind'>): Promise<PolicyCheckReport> {
    return this.run(
      { kind: 'policy.check', ...task },
      POLICY_CHECK_TIMEOUT_MS,
      `checking the policy ${task.policyPath}`,
    ) as Promise<PolicyCheckReport>;
  }

  /** Tasks still waiting for the worker. */
  get busy(): number {
    return this.pending.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = null;
    this.failAll(w, new Error('the console services are shutting down'));
    if (w) await w.terminate().catch(() => undefined);
  }

  private run(task: FileTask, timeoutMs: number, what: string): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the console services are shut down'));
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        reject(
          new ApiFailure(
            'internal',
            `${what} did not finish within ${Math.round(timeoutMs / 1000)} s; it was abandoned`,
          ),
        );
        this.discard(worker, new Error(`${what} did not finish in time: the file worker was restarted`));
      }, timeoutMs);
      timer.unref();
      this.pending.set(id, { resolve, reject, timer, worker });
      worker.ref(); // keeps the process alive while a task is out
      worker.postMessage({ id, task });
    });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(BOOTSTRAP, {
      workerData: { entry: WORKER_ENTRY.href },
      name: `motionbench-files-${serial++}`,
      resourceLimits: { maxOldGenerationSizeMb: FILE_WORKER_HEAP_MIB },
    });
    worker.unref(); // an idle worker never keeps the process alive
    worker.on('message', (reply: FileTaskReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      clearTimeout(p.timer);
      if (![...this.pending.values()].some((q) => q.worker === worker)) worker.unref();
      if (reply.ok) p.resolve(reply.value);
      else p.reject(reviveError(reply.error));
    });
    worker.on('error', (err) =>
      this.discard(worker, new Error(`the file worker failed: ${err?.message ?? String(err)}`)),
    );
    worker.on('exit', (code) => this.discard(worker, new Error(`the file worker exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  /** Drops a worker (stuck, crashed or exited): its tasks fail, the next task starts a new one. */
  private discard(worker: Worker, err: Error): void {
    if (this.worker === worker) this.worker = null;
    this.failAll(worker, err);
    void worker.terminate().catch(() => undefined);
  }

  private failAll(worker: Worker | null, err: Error): void {
    for (const [id, p] of this.pending) {
      if (worker && p.worker !== worker) continue;
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(err);
    }
  }
}
