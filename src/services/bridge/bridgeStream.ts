import { Buffer } from 'node:buffer';
import type { StateFrame } from '../../domain/robot/stateFrame';
import { G1_BRIDGE_TOPICS, type RootStateSource, type WbcStatusMsg } from '../../domain/bridge/g1BridgeContract';
import { lowStateFromFrame, rootStateFromFrame } from '../../domain/bridge/g1BridgeEncode';
import { g1BridgeChannel } from '../../domain/bridge/g1BridgeSchemas';
import type { MotionClip } from '../../domain/motion/motionClip';
import type { EpisodeStopCause } from '../../domain/bridge/g1BridgeServerState';
import type { FoxgloveServerInstance } from '../robotLink/foxgloveWs';
import type { RobotBridgeHooks } from './robotBridgeHooks';

// The g1-bridge/1 server's outgoing stream: the Foxglove channels it advertises, the stamps on
// them, and the pacing of a simulator's frames.
//
// Stamps are ns on the session's clock (the robot's in robot mode, else hrtime since the server
// started), strictly increasing on /g1/lowstate for a simulator and never decreasing for a robot;
// on the wire they are offset by the clock's origin in Unix ns.
//
// Simulator frames of an episode go out when their episode time comes (`speed` 1 = real time,
// 0 = as fast as produced): the wait holds the backend's listener, so a simulator runs no further
// ahead than it is published. A frame computed after the episode's stop is counted and not
// published. Robot frames go out at once, with the robot's tick and stamp, also between episodes,
// except while publishing is suspended.

/** What the stream reads and writes of the running episode. */
export interface StreamedEpisode {
  clip: MotionClip;
  /** stamp_ns of episode time 0. */
  startNs: number;
  /** performance.now() at episode time 0, for pacing. */
  wallStartMs: number;
  frames: number;
  lastTimeS: number;
  refFrame: number;
  /** The command that ended it early, if any. */
  stopCause: EpisodeStopCause | null;
  /** Frames the backend produced after the stop and that were not published. */
  droppedAfterStop: number;
}

export interface BridgeStreamOptions {
  foxglove: FoxgloveServerInstance;
  /** Advertise /g1/root_state (the backend has a global root position). */
  rootState: boolean;
  rootSource: RootStateSource;
  /** See BridgeServerOptions.speed. */
  speed: number;
  /** Robot mode: the robot's clock (stamp 0 at its origin); else stamps count from the server's start. */
  robotClock: Pick<RobotBridgeHooks, 'stampOriginUnixMs' | 'nowNs'> | null;
  /** The running episode, read afresh for every frame. */
  episode: () => StreamedEpisode | null;
  /** True once the server is closing: nothing more is published. */
  closing: () => boolean;
  /** Holds the stream while a client reads too slowly. */
  drain: () => Promise<void>;
  log: (line: string) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class BridgeStream {
  readonly channels: { lowstate: number; rootState: number | null; wbcStatus: number };
  readonly published = { lowstate: 0, rootState: 0, wbcStatus: 0 };
  private readonly startHr = process.hrtime.bigint();
  private readonly startEpochNs: bigint;
  private tick = 0;
  private lastStampNs = -1;
  private suspendedUntil = 0;
  private suspendedFrames = 0;

  constructor(private readonly o: BridgeStreamOptions) {
    this.startEpochNs = o.robotClock
      ? BigInt(Math.round(o.robotClock.stampOriginUnixMs * 1e6))
      : BigInt(Date.now()) * 1_000_000n;
    this.channels = {
      lowstate: o.foxglove.addChannel(g1BridgeChannel('lowstate', G1_BRIDGE_TOPICS.lowstate)),
      rootState: o.rootState ? o.foxglove.addChannel(g1BridgeChannel('rootState', G1_BRIDGE_TOPICS.rootState)) : null,
      wbcStatus: o.foxglove.addChannel(g1BridgeChannel('wbcStatus', G1_BRIDGE_TOPICS.wbcStatus)),
    };
  }

  /** The session clock now, ns. */
  clockNs(): number {
    if (this.o.robotClock) return this.o.robotClock.nowNs();
    return Number(process.hrtime.bigint() - this.startHr);
  }

  /** A status stamp: now, and never before the last frame's. */
  statusStampNs(): number {
    return Math.max(this.clockNs(), this.lastStampNs);
  }

  /** Time 0 of a simulator episode starting now: one state period after the last frame at the earliest. */
  episodeStartNs(periodNs: number): number {
    return Math.max(this.clockNs(), this.lastStampNs + periodNs);
  }

  /** Publishes nothing (no topic) for `ms` from now. */
  suspend(ms: number): void {
    this.suspendedUntil = Math.max(this.suspendedUntil, performance.now() + ms);
  }

  get suspended(): boolean {
    return this.suspendedUntil > 0 && performance.now() < this.suspendedUntil;
  }

  publishStatus(msg: WbcStatusMsg): void {
    this.send(this.channels.wbcStatus, msg.stamp_ns ?? 0, msg);
    this.published.wbcStatus++;
  }

  private send(channel: number, stampNs: number, msg: unknown): void {
    const bytes = Buffer.from(JSON.stringify(msg), 'utf8');
    try {
      this.o.foxglove.sendMessage(channel, this.startEpochNs + BigInt(stampNs), bytes);
    } catch (err) {
      this.o.log(`serve: send failed: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  private publishRoot(f: StateFrame, stampNs: number): void {
    if (this.channels.rootState === null) return;
    const root = rootStateFromFrame(f, stampNs, this.o.rootSource);
    if (!root) return;
    this.send(this.channels.rootState, stampNs, root);
    this.published.rootState++;
  }

  /** Simulator frames paced by their episode time; robot frames at once (publishRobotFrames). */
  async publishFrames(frames: StateFrame[]): Promise<void> {
    if (this.o.robotClock) return this.publishRobotFrames(frames);
    const speed = this.o.speed;
    for (const f of frames) {
      const ep = this.o.episode();
      if (this.o.closing()) return;
      if (ep && ep.stopCause) {
        ep.droppedAfterStop++;
        continue;
      }
      let stampNs: number;
      if (ep) {
        if (ep.frames === 0) ep.wallStartMs = performance.now() - (speed > 0 ? (f.timeS * 1000) / speed : 0);
        if (speed > 0) {
          const due = ep.wallStartMs + (f.timeS * 1000) / speed;
          const wait = due - performance.now();
          if (wait > 1) await sleep(wait);
          if (ep.stopCause) {
            ep.droppedAfterStop++;
            continue;
          }
        }
        stampNs = ep.startNs + Math.round(f.timeS * 1e9);
        ep.frames++;
        ep.lastTimeS = f.timeS;
        ep.refFrame = Math.min(ep.clip.frameCount - 1, Math.max(0, Math.round(f.timeS * ep.clip.fps)));
      } else {
        stampNs = this.clockNs();
      }
      if (stampNs <= this.lastStampNs) stampNs = this.lastStampNs + 1;
      this.lastStampNs = stampNs;
      this.publishRoot(f, stampNs);
      const low = lowStateFromFrame(f, ++this.tick, stampNs);
      // ref_frame is the clip frame (at the clip's own fps) the episode time corresponds to.
      if (ep) low.ref_frame = ep.refFrame;
      else delete low.ref_frame;
      this.send(this.channels.lowstate, stampNs, low);
      this.published.lowstate++;
      await this.o.drain();
    }
  }

  /** Robot mode: every frame at once, with the robot's tick and stamp (timeS on the robot clock). */
  private async publishRobotFrames(frames: StateFrame[]): Promise<void> {
    for (const f of frames) {
      if (this.o.closing()) return;
      if (this.suspended) {
        this.suspendedFrames++;
        continue;
      }
      const ep = this.o.episode();
      let stampNs = Math.round(f.timeS * 1e9);
      if (stampNs < this.lastStampNs) stampNs = this.lastStampNs;
      this.lastStampNs = stampNs;
      if (ep && !ep.stopCause && f.referenceFrame !== null) {
        ep.frames++;
        ep.lastTimeS = (stampNs - ep.startNs) / 1e9;
        ep.refFrame = f.referenceFrame;
      }
      this.publishRoot(f, stampNs);
      this.tick = f.tick;
      const low = lowStateFromFrame(f, f.tick, stampNs);
      if (!(ep && f.referenceFrame !== null)) delete low.ref_frame;
      this.send(this.channels.lowstate, stampNs, low);
      this.published.lowstate++;
    }
    await this.o.drain();
  }
}
