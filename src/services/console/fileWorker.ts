// The console's file worker thread (started by offThread.ts through simWorkerBootstrap.mjs, which
// registers tsx): reads and decodes clips, opens campaign folders and released policies
// (policy.open), parses recorded episodes for the overlay (trial.episode), serves the board's
// campaign reads (qualification.report and .replay, gap.*) and the model's meshes (robot.getMesh),
// one task at a time, so the
// main thread's event loop stays free for STOP. A decoded clip is posted with its typed arrays
// transferred and its ClipDto already serialized to UTF-8 JSON. A task's error is posted as its type
// and fields (workerErrors.ts) and rebuilt as the same type on the main thread.

import { Buffer } from 'node:buffer';
import { parentPort } from 'node:worker_threads';
import { clipToDto } from '../../api/clipDto';
import { BASE64_RE } from '../../api/contract';
import { ApiFailure } from './apiFailure';
import { InputError } from '../../domain/problems';
import type { JointLimitsRad } from '../../domain/motion/clipCommon';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { RobotProfile } from '../../domain/robot/robotProfile';
import { decodeClipBytes, loadClipFile } from '../motion/loadClipFile';
import { lowerThisThreadPriority } from '../os/threadPriority';
import { loadRobotProfile } from '../robot/loadRobotProfile';
import {
  clipTransferList,
  type ClipTaskOptions,
  type DecodedClip,
  type FileTask,
  type FileTaskReply,
  type OpenedPolicy,
} from './offThread';
import { serializeError } from './workerErrors';

if (!parentPort) throw new Error('fileWorker.ts must run in a worker thread');
const port = parentPort;

/** Niceness of this thread: on a loaded machine the scheduler runs the main thread (STOP) first. */
const WORKER_NICE = 10;
lowerThisThreadPriority(WORKER_NICE);

/** Joint limits per model file, read once in this thread (null: the model cannot be read). */
const limitsByModel = new Map<string, JointLimitsRad | null>();

function jointLimitsOf(o: ClipTaskOptions): JointLimitsRad | undefined {
  if (o.jointLimitsRad) return o.jointLimitsRad;
  if (o.limitsModelFile === undefined) return undefined;
  let limits = limitsByModel.get(o.limitsModelFile);
  if (limits === undefined) {
    try {
      limits = loadRobotProfile(o.limitsModelFile).joints.map((j) => j.rangeRad);
    } catch {
      limits = null;
    }
    limitsByModel.set(o.limitsModelFile, limits);
  }
  return limits ?? undefined;
}

/** The robot model of each model file, read once in this thread. */
const profiles = new Map<string, RobotProfile>();
const profileOf = (modelFile: string): RobotProfile => {
  let p = profiles.get(modelFile);
  if (!p) profiles.set(modelFile, (p = loadRobotProfile(modelFile)));
  return p;
};

/** The buffers under `value` that typed arrays own whole (transferable), once each. */
function ownedBuffers(value: unknown, out = new Set<ArrayBuffer>(), seen = new Set<object>()): Set<ArrayBuffer> {
  if (typeof value !== 'object' || value === null || seen.has(value)) return out;
  seen.add(value);
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength)
      out.add(value.buffer);
    return out;
  }
  for (const v of Object.values(value)) ownedBuffers(v, out, seen);
  return out;
}

const clipOptions = (o: ClipTaskOptions) => {
  const jointLimitsRad = jointLimitsOf(o);
  return { ...(o.fps !== undefined && { fps: o.fps }), ...(jointLimitsRad && { jointLimitsRad }) };
};

function postClip(id: number, clip: MotionClip): void {
  // TextEncoder gives the JSON its own ArrayBuffer (Buffer.from may use the shared pool).
  const dtoJson = new TextEncoder().encode(JSON.stringify(clipToDto(clip)));
  const value: DecodedClip = { clip, dtoJson };
  port.postMessage({ id, ok: true, value } satisfies FileTaskReply, clipTransferList(clip, [dtoJson]));
}

type BoardTask = Extract<
  FileTask,
  {
    kind: 'qualification.board' | 'qualification.replay' | 'gap.report' | 'gap.replay' | 'gap.contracts' | 'robot.mesh';
  }
>;

/** The board's reads of a campaign and the model's meshes (campaignBoardReads.ts), loaded on first use. */
async function boardRead(task: BoardTask): Promise<unknown> {
  const reads = await import('./campaignBoardReads');
  switch (task.kind) {
    case 'qualification.board':
      return reads.readCampaignBoard(task.params);
    case 'qualification.replay':
      return reads.readQualificationReplay(task.params, task.reference, task.modelFile);
    case 'gap.report':
      return reads.readGapReport(task.params, task.modelFile);
    case 'gap.replay':
      return reads.readGapReplay(task.params, task.modelFile);
    case 'gap.contracts':
      return reads.readGapContracts(task.params, task.modelFile);
    case 'robot.mesh':
      return reads.readModelMesh(task.modelFile, task.name);
  }
}

async function run(id: number, task: FileTask): Promise<void> {
  switch (task.kind) {
    case 'clip.load':
      postClip(id, loadClipFile(task.file, clipOptions(task.options)));
      return;
    case 'clip.decode': {
      if (!BASE64_RE.test(task.bytesBase64))
        throw new ApiFailure('bad_params', 'clips.decode: params.bytesBase64: not base64', 'params.bytesBase64');
      const bytes = new Uint8Array(Buffer.from(task.bytesBase64, 'base64'));
      postClip(id, decodeClipBytes(bytes, task.fileName, 'upload', clipOptions(task.options)));
      return;
    }
    case 'campaign.open': {
      // Loaded on first use: the clip tasks need none of the campaign store (SQLite, MCAP).
      const { openCampaignFolder } = await import('./campaignOpen');
      const value = await openCampaignFolder(task.campaignDir, task.create);
      port.postMessage({ id, ok: true, value } satisfies FileTaskReply);
      return;
    }
    case 'workload.builtin': {
      const { loadWorkload } = await import('../workload');
      const value = loadWorkload(task.id);
      const transfer = new Set<ArrayBuffer>();
      for (const c of value.clips) for (const b of clipTransferList(c)) transfer.add(b);
      port.postMessage({ id, ok: true, value } satisfies FileTaskReply, [...transfer]);
      return;
    }
    case 'analysis.run': {
      const { runAnalysisRequest } = await import('./campaignAnalysisApi');
      const json = new TextEncoder().encode(JSON.stringify(await runAnalysisRequest(task.params)));
      port.postMessage({ id, ok: true, value: json } satisfies FileTaskReply, [json.buffer as ArrayBuffer]);
      return;
    }
    case 'qualification.board':
    case 'qualification.replay':
    case 'gap.report':
    case 'gap.replay':
    case 'gap.contracts': {
      port.postMessage({ id, ok: true, value: await boardRead(task) } satisfies FileTaskReply);
      return;
    }
    case 'robot.mesh': {
      const json = new TextEncoder().encode(JSON.stringify(await boardRead(task)));
      port.postMessage({ id, ok: true, value: json } satisfies FileTaskReply, [json.buffer as ArrayBuffer]);
      return;
    }
    case 'policy.open': {
      const { planPolicy } = await import('../wbc/policyRun');
      const { policyInfoDto } = await import('./policyRegistry');
      const plan = planPolicy(task.policyPath, profileOf(task.modelFile), task.preset ?? null);
      const dtoJson = new TextEncoder().encode(JSON.stringify(policyInfoDto(plan)));
      const value: OpenedPolicy = { plan, dtoJson };
      port.postMessage({ id, ok: true, value } satisfies FileTaskReply, [...ownedBuffers(value)]);
      return;
    }
    case 'policy.check': {
      const { planPolicy } = await import('../wbc/policyRun');
      const { runPolicyCheck } = await import('../policyCheck/policyCheckRun');
      const profile = profileOf(task.modelFile);
      const plan = planPolicy(task.policyPath, profile, task.preset);
      if (plan.loaded.contentHash !== task.contentHash)
        throw new InputError(
          { file: task.policyPath },
          'the policy files changed since they were opened in the console; open the policy again',
        );
      const { ClipMismatchError } = await import('../wbc/policyRun');
      const report = await runPolicyCheck({
        policyPath: task.policyPath,
        plan,
        profile,
        ...(task.clip ? { clip: task.clip } : {}),
        ...(task.seconds !== undefined ? { seconds: task.seconds } : {}),
      }).catch((err: unknown) => {
        // The main thread's error map knows this type only by instance: say it as the API does.
        if (err instanceof ClipMismatchError) throw new ApiFailure('bad_params', err.message, 'params.clipId');
        throw err;
      });
      port.postMessage({ id, ok: true, value: report } satisfies FileTaskReply);
      return;
    }
    case 'trial.episode': {
      const { readTrialEpisode } = await import('./trialEpisode');
      const json = new TextEncoder().encode(JSON.stringify(await readTrialEpisode(task.campaignDir, task.runId)));
      port.postMessage({ id, ok: true, value: json } satisfies FileTaskReply, [json.buffer as ArrayBuffer]);
      return;
    }
  }
}

port.on('message', (msg: { id: number; task: FileTask }) => {
  run(msg.id, msg.task).catch((err: unknown) =>
    port.postMessage({ id: msg.id, ok: false, error: serializeError(err) } satisfies FileTaskReply),
  );
});
