import type { ConnectionInfo, SimEndEvent } from '../../../src/api/contract';
import { formatApiError } from '../api/formatApiError';
import { useClipStore } from '../playback/clipStore';
import { useEndpointsStore } from '../connections/endpointsStore';
import { runTrajectory, shownBodyErrors } from '../overlay/overlayEngine';
import { overlayStore } from '../overlay/overlayStore';
import {
  addRun,
  appendRunFrames,
  clearRuns,
  endRun,
  removeRun,
  setRunTrajectory,
  type RunInit,
} from '../overlay/runActions';
import { useRunStore } from '../overlay/runStore';
import type { PackedTrajectory, RunSample } from '../overlay/runTrajectory';
import { usePlaybackStore } from '../playback/playbackStore';
import { chartRegistry, type ChartTestView } from '../plots/timeChart';
import { categoryCharts, type CategoryChartTestView } from '../analysis/categoryChart';
import { xyCharts, type XyChartTestView } from '../analysis/xyChart';
import { poseStore } from '../playback/poseStore';
import { usePolicyStore, type PolicyInfo } from '../policies/policyStore';
import { liveStreams } from '../robot/liveStreams';
import { useRobotStore } from '../robot/robotStore';
import { useOperatorStore } from '../safety/operatorStore';
import { simLiveStore, useSimStore, type SimRunUiState } from '../sim/simStore';
import { drawnLiveRobots, drawnRunMaterials, drawnRunVisible, referenceBounds } from '../viewport/drawnRobots';
import { useMeshStore, type MeshFailure } from '../viewport/meshStore';
import { viewportFramesRendered } from '../viewport/renderOnDemand';

// Read-only view of the console for end-to-end tests, taken from the same stores the viewport
// and panels draw from (window.__motionbench). With `dev=1` in the page URL, a developer hook
// (window.__motionbenchDev) also feeds executed runs straight into the overlay store, so a test
// can draw runs of its own making without recording an episode. Installed by the end-to-end build
// only (electron.vite.config.ts); the production bundle carries none of this.

export interface MotionbenchTestState {
  clipId: string | null;
  clipName: string | null;
  frame: number;
  frameCount: number;
  timeS: number;
  playing: boolean;
  jointPosRad: number[];
  /** Forward kinematics of the shown frame, bodyCount×3 metres. */
  bodyPosM: number[];
}

export interface OverlayRunTestState {
  id: string;
  label: string;
  visible: boolean;
  live: boolean;
  samples: number;
  valid: boolean;
  clamped: 'before' | 'after' | null;
  /** Per body, in the error mode shown (metres). */
  bodyErrM: number[];
  bodyErrLocalM: number[];
  bodyErrGlobalM: (number | null)[];
  maxErrM: number | null;
  maxErrBody: string | null;
  mpjpeLocalM: number | null;
  rootErrM: number | null;
  /** Executed body positions drawn, bodyCount×3. */
  bodyPosM: number[];
  /** The executed pose shown (sampled at the playhead): root position, root quaternion wxyz, joint angles. */
  rootPosM: number[];
  rootQuatWxyz: number[];
  jointPosRad: number[];
  note: string | null;
  outcome: string | null;
  /** '#rrggbb' of each body's material as drawn; null when the run is not in the scene. */
  drawnColors: string[] | null;
  /** The run's robot was visible in the last rendered frame. */
  drawn: boolean;
}

export interface OverlayTestState {
  errorMode: 'local' | 'global';
  showReference: boolean;
  followLive: boolean;
  runs: OverlayRunTestState[];
}

export interface SimRunTestState {
  runId: string;
  ordinal: number;
  clipId: string;
  connectionId: string;
  bindingSpec: string;
  bindingLabel: string;
  state: SimRunUiState;
  plannedFrames: number;
  framesReceived: number;
  droppedFrames: number;
  /** Renderer clock, ms. */
  startedAtMs: number;
  stopRequestedAtMs: number | null;
  endReceivedAtMs: number | null;
  end: SimEndEvent | null;
  replayFromRecording: boolean;
}

export interface PolicyTestState {
  pathText: string;
  opening: boolean;
  /** The open policy as policies.open returned it (without the baked clip's arrays). */
  info: PolicyInfo | null;
  /** The id of the baked motion the panel holds, or null. */
  bakedClipId: string | null;
  /** The panel's error, as shown (location and reason), and its code. */
  error: string | null;
  errorCode: string | null;
}

export interface MeshTestState {
  total: number;
  loaded: number;
  failed: MeshFailure[];
  triangles: number;
}

export interface LiveRobotTestState {
  connectionId: string;
  tick: number;
  /** The measured joints last pushed (its idle live stream's newest row). */
  jointPosRad: number[];
  /** The model was visible in the last rendered frame. */
  drawn: boolean;
  /** The root and bodies as last drawn (bodyCount×3 m). */
  rootPosM: number[];
  rootQuatWxyz: number[];
  bodyPosM: number[];
  /** '#rrggbb' of each body's material. */
  drawnColors: string[];
}

export interface MotionbenchTestHooks {
  state(): MotionbenchTestState;
  /** The error banner's text (location and reason), or null when no error is shown. */
  error(): string | null;
  operatorStops(): number;
  overlay(): OverlayTestState;
  meshes(): MeshTestState;
  connections(): ConnectionInfo[];
  bodyNames(): string[];
  /** World bounds of the reference robot as drawn (meshes and primitives), or of one body, metres. */
  referenceBounds(body?: string): { min: number[]; max: number[]; meshes: number } | null;
  /** Simulation runs started from this console, oldest first. */
  sim(): SimRunTestState[];
  /** The Policy panel's state. */
  policy(): PolicyTestState;
  /**
   * Frames the 3D viewport has rendered since the page loaded (it renders on demand: the count
   * stands still while nothing shown changes).
   */
  viewportFrames(): number;
  /** The plots over time on the page (renderer/src/plots/), by chart id. */
  plots(): ChartTestView[];
  /** The Analysis panel's charts over categories (renderer/src/analysis/), by chart id. */
  analysisPlots(): CategoryChartTestView[];
  /** The Analysis panel's x/y charts (the sensitivity ellipses). */
  analysisXyPlots(): XyChartTestView[];
  /** The live robots (connected robots, drawn outside trials), one per idle live stream. */
  liveRobots(): LiveRobotTestState[];
}

/** Injects executed runs (dev=1 only). Arrays are plain number arrays, frame-major. */
export interface MotionbenchDevHooks {
  addRun(init: RunInit): void;
  appendFrames(
    id: string,
    frames: { timeS: number; rootPosM: number[] | null; rootQuatWxyz: number[] | null; jointPosRad: number[] }[],
  ): void;
  setTrajectory(
    id: string,
    trajectory: { timeS: number[]; rootPosM: number[] | null; rootQuatWxyz: number[] | null; jointPosRad: number[] },
  ): void;
  endRun(id: string, outcome?: string): void;
  removeRun(id: string): void;
  clearRuns(): void;
}

const finite = (v: number): number | null => (Number.isFinite(v) ? v : null);

function overlayState(): OverlayTestState {
  const { runs, errorMode, showReference, followLive } = useRunStore.getState();
  const frames = overlayStore.getState().frames;
  const bodies = useRobotStore.getState().profile?.bodies ?? [];
  return {
    errorMode,
    showReference,
    followLive,
    runs: runs.map((r) => {
      const f = frames.get(r.id);
      const shown = shownBodyErrors(r.id);
      const world = errorMode === 'global' && f !== undefined && !f.rootFromReference;
      const maxBody = f?.valid ? (world ? f.maxErrGlobalBody : f.maxErrLocalBody) : -1;
      const materials = drawnRunMaterials.get(r.id);
      return {
        id: r.id,
        label: r.label,
        visible: r.visible,
        live: r.live,
        samples: runTrajectory(r.id)?.count ?? 0,
        valid: f?.valid ?? false,
        clamped: f?.clamped ?? null,
        bodyErrM: shown ? Array.from(shown) : [],
        bodyErrLocalM: f?.valid ? Array.from(f.bodyErrLocalM) : [],
        bodyErrGlobalM: f?.valid ? Array.from(f.bodyErrGlobalM, finite) : [],
        maxErrM: f?.valid ? finite(world ? f.maxErrGlobalM : f.maxErrLocalM) : null,
        maxErrBody: maxBody >= 0 ? (bodies[maxBody]?.name ?? null) : null,
        mpjpeLocalM: f?.valid ? finite(f.mpjpeLocalM) : null,
        rootErrM: f?.valid ? finite(f.rootErrM) : null,
        bodyPosM: f?.valid ? Array.from(f.bodyPosM) : [],
        rootPosM: f?.valid ? Array.from(f.rootPosM) : [],
        rootQuatWxyz: f?.valid ? Array.from(f.rootQuatWxyz) : [],
        jointPosRad: f?.valid ? Array.from(f.jointPosRad) : [],
        note: r.note,
        outcome: r.outcome,
        drawnColors: materials ? materials.map((m) => `#${m.color.getHexString()}`) : null,
        drawn: drawnRunVisible.get(r.id) ?? false,
      };
    }),
  };
}

export function installTestHooks(): void {
  const hooks: MotionbenchTestHooks = {
    state() {
      const pose = poseStore.getState();
      const clip = useClipStore.getState().loaded?.clip ?? null;
      return {
        clipId: clip?.id ?? null,
        clipName: clip?.name ?? null,
        frame: pose.frame,
        frameCount: clip?.frameCount ?? 0,
        timeS: pose.timeS,
        playing: usePlaybackStore.getState().playing,
        jointPosRad: Array.from(pose.jointPosRad),
        bodyPosM: Array.from(pose.bodyPosM),
      };
    },
    error() {
      const e = useClipStore.getState().error;
      return e ? formatApiError(e) : null;
    },
    operatorStops: () => useOperatorStore.getState().events.length,
    overlay: overlayState,
    meshes() {
      const { total, loaded, failed, triangles } = useMeshStore.getState();
      return { total, loaded, failed: failed.map((f) => ({ ...f })), triangles };
    },
    connections: () =>
      useEndpointsStore.getState().entries.map((e) => ({ ...e, problems: e.problems.map((p) => ({ ...p })) })),
    bodyNames: () => (useRobotStore.getState().profile?.bodies ?? []).map((b) => b.name),
    referenceBounds,
    sim: () => {
      const live = simLiveStore.getState().runs;
      return useSimStore.getState().runs.map((r) => ({
        runId: r.runId,
        ordinal: r.ordinal,
        clipId: r.clipId,
        connectionId: r.connectionId,
        bindingSpec: r.binding.spec,
        bindingLabel: r.binding.label,
        state: r.state,
        plannedFrames: r.plannedFrames,
        framesReceived: live.get(r.runId)?.framesReceived ?? 0,
        droppedFrames: live.get(r.runId)?.droppedFrames ?? 0,
        startedAtMs: r.startedAtMs,
        stopRequestedAtMs: r.stopRequestedAtMs,
        endReceivedAtMs: r.endReceivedAtMs,
        end: r.end ? structuredClone(r.end) : null,
        replayFromRecording: r.replayFromRecording,
      }));
    },
    viewportFrames: viewportFramesRendered,
    plots: () => [...chartRegistry.values()].map((c) => c.testView()),
    analysisPlots: () => [...categoryCharts.values()].map((c) => c.testView()),
    analysisXyPlots: () => [...xyCharts.values()].map((c) => c.testView()),
    liveRobots: () =>
      [...liveStreams()].flatMap((s) => {
        const p = s.source === 'robot_idle' ? s.newest() : null;
        if (!p) return [];
        const { connectionId } = s;
        const d = drawnLiveRobots.get(connectionId);
        return {
          connectionId,
          tick: p.frame,
          jointPosRad: Array.from(p.jointPosRad),
          drawn: d?.drawn ?? false,
          rootPosM: d ? Array.from(d.rootPosM) : [],
          rootQuatWxyz: d ? Array.from(d.rootQuatWxyz) : [],
          bodyPosM: d ? Array.from(d.bodyPosM) : [],
          drawnColors: d ? d.materials.map((m) => `#${m.color.getHexString()}`) : [],
        };
      }),
    policy: () => {
      const { pathText, opening, info, bakedClip, error } = usePolicyStore.getState();
      return {
        pathText,
        opening,
        info: info ? structuredClone(info) : null,
        bakedClipId: bakedClip?.clip.id ?? null,
        error: error ? formatApiError(error) : null,
        errorCode: error?.code ?? null,
      };
    },
  };
  Object.defineProperty(window, '__motionbench', { value: Object.freeze(hooks), configurable: false, writable: false });

  if (new URLSearchParams(window.location.search).get('dev') === '1') {
    const toSamples = (frames: Parameters<MotionbenchDevHooks['appendFrames']>[1]): RunSample[] =>
      frames.map((f) => ({
        timeS: f.timeS,
        rootPosM: f.rootPosM,
        rootQuatWxyz: f.rootQuatWxyz,
        jointPosRad: f.jointPosRad,
      }));
    const dev: MotionbenchDevHooks = {
      addRun: (init) => addRun(init),
      appendFrames: (id, frames) => appendRunFrames(id, toSamples(frames)),
      setTrajectory: (id, t) => {
        const packed: PackedTrajectory = {
          timeS: Float64Array.from(t.timeS),
          rootPosM: t.rootPosM ? Float64Array.from(t.rootPosM) : null,
          rootQuatWxyz: t.rootQuatWxyz ? Float64Array.from(t.rootQuatWxyz) : null,
          jointPosRad: Float64Array.from(t.jointPosRad),
        };
        setRunTrajectory(id, packed);
      },
      endRun: (id, outcome) => endRun(id, outcome ?? null),
      removeRun: (id) => removeRun(id),
      clearRuns: () => clearRuns(),
    };
    Object.defineProperty(window, '__motionbenchDev', {
      value: Object.freeze(dev),
      configurable: false,
      writable: false,
    });
  }
}
