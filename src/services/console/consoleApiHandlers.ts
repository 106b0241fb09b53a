import type { ApiMethod, ApiOutcome, ApiParams, ApiResult, ClipDto, Transport } from '../../api/contract';
import { parseRequest } from '../../api/contract';
import { clipToDto } from '../../api/clipDto';
import type { ClipTaskOptions, DecodedClip } from './offThread';
import { UnsupportedError } from './apiFailure';
import { toApiError } from './apiErrorMap';
import type { ConnectionRegistry } from './connectionRegistry';
import {
  closeConsoleServices,
  createConsoleServices,
  type ConsoleServices,
  type ConsoleServicesOptions,
} from './consoleServices';
import type { EventClient, EventSink } from './eventHub';
import { plainResult, SerializedResult } from './serializedResult';
import type { QualificationJobs } from './qualificationJobs';
import type { InterlockSessions } from './interlockSessions';
import type { SimRunManager } from './simRuns';
import type { TrialJobs } from './trialJobs';

// The console API handler table: one implementation behind both transports (Electron IPC in
// main/, the loopback WebSocket in src/services/host/). Requests are validated against the
// contract in `invoke`, the single entry point; handlers receive parsed params only.

/** Who is calling: the transport's client, where it can receive pushes (live.frames, sim.end, …). */
export interface CallContext {
  client?: EventClient;
}

/** What a handler returns: the result, or the result already serialized off the event loop. */
export type HandlerValue<M extends ApiMethod> = ApiResult<M> | SerializedResult<ApiResult<M>>;
export type Handler<M extends ApiMethod> = (
  params: ApiParams<M>,
  ctx: CallContext,
) => Promise<HandlerValue<M>> | HandlerValue<M>;
export type HandlerTable = { [M in ApiMethod]: Handler<M> };

export interface ConsoleApiOptions extends ConsoleServicesOptions {
  transport: Transport;
  appName?: string;
  appVersion?: string;
  /** Handlers a transport adds or replaces (Electron: clips.openDialog). */
  overrides?: Partial<HandlerTable>;
}

export interface ConsoleApi {
  readonly handlers: HandlerTable;
  /** Validates method and params, dispatches, and maps every failure to an ApiError. Never throws. */
  invoke(method: unknown, params: unknown, ctx?: CallContext): Promise<ApiOutcome>;
  /**
   * invoke for a transport that sends JSON: a result serialized off the event loop (clips.load,
   * clips.decode) comes back as its bytes, to be sent as they are.
   */
  invokeWire(method: unknown, params: unknown, ctx?: CallContext): Promise<WireOutcome>;
  /** clips.load without the request validation, for transports that already hold a path. */
  loadClip(path: string, fps?: number): Promise<ClipDto>;
  /** The endpoints behind connections.* and sim.*. */
  readonly connections: ConnectionRegistry;
  /** Console simulation runs (sim.*). */
  readonly sims: SimRunManager;
  /** Qualification runs and the board's campaign reads (qualification.*). */
  readonly qualification: QualificationJobs;
  /** The interlock box (interlock.*). */
  readonly interlocks: InterlockSessions;
  /** Calibration captures and matched-pair trials (calibration.*, trial.*). */
  readonly trials: TrialJobs;
  /**
   * A transport's client that can receive pushes: pass it in every call's context; detach it when
   * the client goes away (its runs are then stopped).
   */
  attachClient(sink: EventSink): EventClient;
  /** The e-stop socket the services' runners listen on and their interlock keeper writes to; null: none. */
  readonly runnerEstopSocket: string | null;
  /** Stops every run and closes every backend. */
  close(): Promise<void>;
}

/** An outcome whose result may be JSON serialized already (UTF-8 bytes of the result value). */
export type WireOutcome = ApiOutcome | { ok: true; serialized: Uint8Array };

export { SERVICES_NICE } from './consoleServices';

export function createConsoleApi(options: ConsoleApiOptions): ConsoleApi {
  const services = createConsoleServices(options);
  const clipLoading = createClipLoading(services);
  const handlers = handlerTable(options, services, clipLoading);

  /**
   * Validates, dispatches, and maps a failure to an ApiError (by its type: apiErrorMap.ts); the
   * handler's value as it returned it.
   */
  const dispatch = async (
    method: unknown,
    params: unknown,
    ctx: CallContext,
  ): Promise<{ ok: true; value: HandlerValue<ApiMethod> } | Extract<ApiOutcome, { ok: false }>> => {
    const req = parseRequest(method, params);
    if (!req.ok) return req;
    try {
      const handler = handlers[req.method] as Handler<ApiMethod>;
      return { ok: true, value: await handler(req.params, ctx) };
    } catch (err) {
      return { ok: false, error: toApiError(err) };
    }
  };

  const invokeWire = async (method: unknown, params: unknown, ctx: CallContext = {}): Promise<WireOutcome> => {
    const r = await dispatch(method, params, ctx);
    if (!r.ok) return r;
    return r.value instanceof SerializedResult ? { ok: true, serialized: r.value.json } : { ok: true, result: r.value };
  };

  const invoke = async (method: unknown, params: unknown, ctx: CallContext = {}): Promise<ApiOutcome> => {
    const r = await dispatch(method, params, ctx);
    return r.ok ? { ok: true, result: plainResult(r.value) } : r;
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= closeConsoleServices(services));

  const { connections, runnerEstopSocket, sims, qualification, interlocks, trials, hub } = services;
  return {
    handlers,
    invoke,
    invokeWire,
    loadClip: clipLoading.loadClip,
    connections,
    runnerEstopSocket,
    sims,
    qualification,
    interlocks,
    trials,
    attachClient: (sink) => hub.attach(sink),
    close,
  };
}

interface ClipLoading {
  /** A clip decoded in the file worker, remembered here; its ClipDto JSON was made there too. */
  decoded(d: DecodedClip): SerializedResult<ClipDto>;
  clipOptions(fps: number | undefined): ClipTaskOptions;
  loadClipOffThread(file: string, fps?: number): Promise<SerializedResult<ClipDto>>;
  loadClip(file: string, fps?: number): Promise<ClipDto>;
}

function createClipLoading({ clips, files, modelFile, loadedProfile }: ConsoleServices): ClipLoading {
  const decoded = ({ clip, dtoJson }: DecodedClip): SerializedResult<ClipDto> => {
    clips.put(clip);
    return new SerializedResult(dtoJson, () => clipToDto(clip));
  };
  // Joint limits for the limit warnings: from the profile when this thread has it already, else
  // the worker reads the model itself (no MJCF parsing on the event loop for a clip).
  const clipOptions = (fps: number | undefined): ClipTaskOptions => {
    const profile = loadedProfile();
    return {
      ...(fps !== undefined && { fps }),
      ...(profile ? { jointLimitsRad: profile.joints.map((j) => j.rangeRad) } : { limitsModelFile: modelFile }),
    };
  };
  const loadClipOffThread = async (file: string, fps?: number): Promise<SerializedResult<ClipDto>> =>
    decoded(await files.loadClip(file, clipOptions(fps)));
  const loadClip = async (file: string, fps?: number): Promise<ClipDto> => (await loadClipOffThread(file, fps)).value();
  return { decoded, clipOptions, loadClipOffThread, loadClip };
}

/** The handler of every API method (a transport's overrides last). */
function handlerTable(options: ConsoleApiOptions, s: ConsoleServices, io: ClipLoading): HandlerTable {
  const { modelFile, getProfile, files, policies, connections, sims, qualification, sensitivity } = s;
  const { interlocks, trials, robotLive } = s;
  const { decoded, clipOptions, loadClipOffThread } = io;
  return {
    'app.info': () => ({
      name: options.appName ?? 'MotionBench Console',
      version: options.appVersion ?? '0.0.0-dev',
      transport: options.transport,
      modelFile,
      capabilities: { nativeOpenDialog: options.overrides?.['clips.openDialog'] !== undefined },
    }),
    'robot.getProfile': () => getProfile(),
    'robot.getMesh': ({ name }) => files.modelMesh(modelFile, name),
    'clips.load': ({ path, fps }) => loadClipOffThread(path, fps),
    'policies.open': ({ path, preset }) => policies.open(path, preset ?? null),
    'policies.check': ({ policyId, clipId, seconds }) => policies.check(policyId, clipId, seconds),
    'clips.decode': async ({ fileName, bytesBase64, fps }) =>
      decoded(await files.decodeClip(fileName, bytesBase64, clipOptions(fps))),
    'clips.openDialog': () => {
      throw new UnsupportedError('clips.openDialog is only available in the desktop app; use clips.decode');
    },
    'connections.list': () => connections.list(),
    'connections.add': ({ url, kind }) => connections.addRemote(url, kind),
    'connections.addG1Dds': ({ interface: interfaceName, domain, afterClip, standingPolicy }) =>
      connections.addG1Dds({
        interfaceName,
        domainId: domain,
        afterClip,
        ...(standingPolicy !== undefined ? { standingPolicyPath: standingPolicy } : {}),
      }),
    'connections.remove': async ({ id }) => {
      await connections.remove(id);
      return { removed: id };
    },
    'connections.connect': ({ id }) => connections.connect(id),
    'connections.disconnect': ({ id }) => connections.disconnect(id),
    'sim.run': (params, ctx) => sims.run(params, ctx.client ?? null),
    'sim.stop': (params) => sims.stop(params),
    'sim.result': ({ runId }) => sims.result(runId),
    'qualification.open': (p) => qualification.open(p),
    'qualification.report': (p) => qualification.report(p),
    'qualification.start': (p) => qualification.start(p),
    'qualification.cancel': (p) => qualification.cancel(p),
    'qualification.status': (p) => qualification.status(p),
    'qualification.replay': (p) => qualification.replay(p),
    'gap.report': (p) => files.gapReport(p, modelFile),
    'gap.replay': (p) => files.gapReplay(p, modelFile),
    'gap.contracts': (p) => files.gapContracts(p, modelFile),
    'analysis.run': (p) => files.analyzeCampaign(p),
    'analysis.sensitivity': (p) => sensitivity.run(p),
    'interlock.list': () => interlocks.list(),
    'interlock.open': ({ path: device }) => interlocks.open(device),
    'interlock.close': () => interlocks.close(),
    'interlock.arm': () => interlocks.arm(),
    'interlock.disarm': () => interlocks.disarm(),
    'interlock.status': () => interlocks.status(),
    'calibration.capture': (p) => trials.captureCalibration(p),
    'calibration.accept': (p) => trials.acceptCalibration(p),
    'calibration.cancel': () => trials.cancelCapture(),
    'trial.queue': (p) => trials.queue(p),
    'trial.start': (p) => trials.start(p),
    'trial.confirm': (p) => trials.confirm(p),
    'trial.stop': (p) => trials.stop(p),
    'trial.status': (p) => trials.status(p),
    'trial.episode': (p) => trials.episode(p),
    'robot.emulatorReset': ({ connectionId }) => robotLive.emulatorReset(connectionId),
    'events.ack': ({ seq }, ctx) => {
      if (!ctx.client) throw new UnsupportedError('events.ack: this caller receives no pushes');
      return { seq: ctx.client.ack(seq) };
    },
    ...options.overrides,
  };
}
