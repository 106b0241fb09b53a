import { create } from 'zustand';
import { createStore } from 'zustand/vanilla';
import { LIVE_JOINTS, type LiveFramesEvent, type LiveSource } from '../../../src/api/contract';

// The live pose of every connection, one transient store per connection: the `live.frames` stream
// it carries now (a simulation run, a real trial, or a robot's idle live pose) as rows in a ring
// of typed arrays. Each feature that signs up for a source (api/pushRouter.ts) writes its batches
// here first and reads the rows back: the overlay appends them to its run (sim/simPushes.ts,
// trial/trialPushes.ts), the live robot model draws the newest row in useFrame
// (viewport/LiveRobotModel.tsx). Never React state per frame: React holds only which connections
// carry a robot's idle live pose (useIdleRobotIds), which changes when a robot connects, goes away
// or starts a trial.

/** Rows a connection's ring holds at least (~20 s at 50 Hz); it grows to hold any one batch whole. */
export const LIVE_RING_ROWS = 1024;

/** One row of a stream: views into the ring, valid until the ring wraps over it. */
export interface LiveRow {
  /** The row's frame (a run's contract frame, a robot's lowstate tick). */
  frame: number;
  timeS: number;
  /** World frame, m; null when the source measures none. */
  rootPosM: Float64Array | null;
  /** wxyz; null when unknown. */
  rootQuatWxyz: Float64Array | null;
  /** 29, rad, canonical Unitree G1 order. */
  jointPosRad: Float64Array;
}

const HAS_ROOT_POS = 1;
const HAS_ROOT_QUAT = 2;

/** One connection's current stream: its identity and its newest rows. */
export class LiveStream {
  /** Rows written since the stream started; row k sits in slot k % capacity while k ≥ oldest. */
  written = 0;
  /** Rows the services skipped for this console's display so far. */
  droppedFrames = 0;
  private capacity = 0;
  /** The first row written into the current ring (a ring grown for a large batch starts empty). */
  private floor = 0;
  private frame = new Float64Array(0);
  private timeS = new Float64Array(0);
  private jointPosRad = new Float64Array(0);
  private rootPosM = new Float64Array(0);
  private rootQuatWxyz = new Float64Array(0);
  private rootFlags = new Uint8Array(0);

  constructor(
    readonly connectionId: string,
    readonly source: LiveSource,
    readonly runId: string | null,
    readonly jobId: string | null,
    capacity = LIVE_RING_ROWS,
  ) {
    this.allocate(capacity);
  }

  private allocate(capacity: number): void {
    this.capacity = capacity;
    this.frame = new Float64Array(capacity);
    this.timeS = new Float64Array(capacity);
    this.jointPosRad = new Float64Array(capacity * LIVE_JOINTS);
    this.rootPosM = new Float64Array(capacity * 3);
    this.rootQuatWxyz = new Float64Array(capacity * 4);
    this.rootFlags = new Uint8Array(capacity);
  }

  /** The oldest row still held. */
  get oldest(): number {
    return Math.max(this.floor, this.written - this.capacity);
  }

  /** Whether the batch continues this stream (same source, run and job). */
  carries(e: Pick<LiveFramesEvent, 'source' | 'runId' | 'jobId'>): boolean {
    return e.source === this.source && e.runId === this.runId && e.jobId === this.jobId;
  }

  /** Writes a batch's rows; returns the index of its first row. */
  write(e: LiveFramesEvent): number {
    const n = e.count;
    // A batch larger than the ring: start a larger one (the rows held are superseded by the batch).
    const first = this.written;
    if (n > this.capacity) {
      this.allocate(2 ** Math.ceil(Math.log2(n)));
      this.floor = first;
    }
    for (let i = 0; i < n; i++) {
      const s = (first + i) % this.capacity;
      this.frame[s] = e.firstFrame !== null ? e.firstFrame + i : e.frame![i];
      this.timeS[s] = e.timeS[i];
      for (let j = 0; j < LIVE_JOINTS; j++) this.jointPosRad[s * LIVE_JOINTS + j] = e.jointPosRad[i * LIVE_JOINTS + j];
      let flags = 0;
      if (e.rootPosM) {
        for (let c = 0; c < 3; c++) this.rootPosM[3 * s + c] = e.rootPosM[3 * i + c];
        flags |= HAS_ROOT_POS;
      }
      if (e.rootQuatWxyz) {
        for (let c = 0; c < 4; c++) this.rootQuatWxyz[4 * s + c] = e.rootQuatWxyz[4 * i + c];
        flags |= HAS_ROOT_QUAT;
      }
      this.rootFlags[s] = flags;
    }
    this.written = first + n;
    this.droppedFrames = e.droppedFrames;
    return first;
  }

  /** Row k (oldest ≤ k < written). */
  row(k: number): LiveRow {
    if (!Number.isInteger(k) || k < this.oldest || k >= this.written)
      throw new RangeError(`row ${k} is not held (rows ${this.oldest}..${this.written - 1})`);
    const s = k % this.capacity;
    const flags = this.rootFlags[s];
    return {
      frame: this.frame[s],
      timeS: this.timeS[s],
      rootPosM: flags & HAS_ROOT_POS ? this.rootPosM.subarray(3 * s, 3 * s + 3) : null,
      rootQuatWxyz: flags & HAS_ROOT_QUAT ? this.rootQuatWxyz.subarray(4 * s, 4 * s + 4) : null,
      jointPosRad: this.jointPosRad.subarray(s * LIVE_JOINTS, (s + 1) * LIVE_JOINTS),
    };
  }

  /** Rows [from, written), oldest first. */
  rowsFrom(from: number): LiveRow[] {
    const out: LiveRow[] = [];
    for (let k = Math.max(from, this.oldest); k < this.written; k++) out.push(this.row(k));
    return out;
  }

  /** The newest row; null before the first. */
  newest(): LiveRow | null {
    return this.written === 0 ? null : this.row(this.written - 1);
  }
}

const streams = new Map<string, LiveStream>();

/** Bumped when a live robot model must redraw: an idle robot's pose moved visibly, one appeared or went away. */
export const liveStreamsStore = createStore<{ revision: number }>(() => ({ revision: 0 }));

/** The connections that carry a robot's idle live pose (one live robot model each), in arrival order. */
export const useIdleRobotIds = create<{ ids: string[] }>(() => ({ ids: [] }));

/** The stream connection `connectionId` carries now; undefined when none. */
export const liveStream = (connectionId: string): LiveStream | undefined => streams.get(connectionId);

/** Every connection's current stream. */
export const liveStreams = (): IterableIterator<LiveStream> => streams.values();

/**
 * Below these changes since the pose last drawn, an idle robot's batch asks for no new frame: a
 * standing robot's encoder and IMU noise (σ ≈ 1e-3 rad) would otherwise re-render the canvas 15
 * times a second for nothing visible (0.3° of a joint, 2 mm, ~0.3° of attitude). Slow drifts add
 * up against the pose last drawn and are drawn once they pass.
 */
const VISIBLE = { jointRad: 0.005, rootPosM: 0.002, quat: 0.0025 } as const;

/** Per idle robot, the pose as last drawn: joints, root position, root quaternion (29 + 3 + 4). */
const lastDrawn = new Map<string, Float64Array>();

function maxDiff(a: ArrayLike<number>, b: Float64Array, at: number, n: number): number {
  let m = 0;
  for (let i = 0; i < n; i++) m = Math.max(m, Math.abs(a[i] - b[at + i]));
  return m;
}

/** Whether the idle robot's newest row differs visibly from the pose last drawn (and, if so, remembers it as drawn). */
function visiblyMoved(id: string, p: LiveRow): boolean {
  let d = lastDrawn.get(id);
  const fresh = d === undefined;
  d ??= new Float64Array(LIVE_JOINTS + 7);
  const moved =
    fresh ||
    maxDiff(p.jointPosRad, d, 0, LIVE_JOINTS) > VISIBLE.jointRad ||
    (p.rootPosM !== null && maxDiff(p.rootPosM, d, LIVE_JOINTS, 3) > VISIBLE.rootPosM) ||
    (p.rootQuatWxyz !== null && maxDiff(p.rootQuatWxyz, d, LIVE_JOINTS + 3, 4) > VISIBLE.quat);
  if (moved) {
    d.set(p.jointPosRad, 0);
    if (p.rootPosM) d.set(p.rootPosM, LIVE_JOINTS);
    if (p.rootQuatWxyz) d.set(p.rootQuatWxyz, LIVE_JOINTS + 3);
    lastDrawn.set(id, d);
  }
  return moved;
}

/** Publishes the idle robots' ids when they changed; true if they did. */
function syncIdleIds(): boolean {
  const ids = [...streams.values()].filter((s) => s.source === 'robot_idle').map((s) => s.connectionId);
  const prev = useIdleRobotIds.getState().ids;
  if (ids.length === prev.length && ids.every((id, k) => prev[k] === id)) return false;
  for (const id of lastDrawn.keys()) if (!ids.includes(id)) lastDrawn.delete(id);
  useIdleRobotIds.setState({ ids });
  return true;
}

const bump = (): void => liveStreamsStore.setState((s) => ({ revision: s.revision + 1 }));

/**
 * Writes one live.frames batch into its connection's store (a batch of another source, run or job
 * starts the connection's stream over; `ended` removes it after its rows). Returns the stream and
 * the batch's rows, for the feature that follows it.
 */
export function writeLiveFrames(e: LiveFramesEvent): { stream: LiveStream; rows: LiveRow[] } {
  let stream = streams.get(e.connectionId);
  if (!stream || !stream.carries(e)) {
    stream = new LiveStream(e.connectionId, e.source, e.runId, e.jobId);
    // The last batch of a stream the connection no longer carries (a trial's rows overtook the
    // idle robot's end) leaves the current one alone.
    if (!e.ended) streams.set(e.connectionId, stream);
  }
  const rows = stream.rowsFrom(stream.write(e));
  if (e.ended && streams.get(e.connectionId) === stream) streams.delete(e.connectionId);
  let redraw = syncIdleIds();
  const newest = stream.newest();
  if (!e.ended && e.source === 'robot_idle' && newest && visiblyMoved(e.connectionId, newest)) redraw = true;
  if (redraw) bump();
  return { stream, rows };
}

/**
 * Keeps only the idle live robots the services list as connected (safety.status, 5 Hz, which the
 * live stream never crowds out): the batch that ended one may have been skipped for a client behind
 * on its acknowledgements.
 */
export function retainLiveRobots(connectedIds: readonly string[]): void {
  for (const s of [...streams.values()])
    if (s.source === 'robot_idle' && !connectedIds.includes(s.connectionId)) streams.delete(s.connectionId);
  if (syncIdleIds()) bump();
}
