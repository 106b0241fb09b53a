import type { InterlockListDto, InterlockStatusDto, InterlockLight } from '../../api/contract';
import type { InterlockSnapshot, InterlockTrip } from '../../domain/interlock';
import { listSerialPorts } from '../interlock';
import { openInterlockFeed, type InterlockFeed } from '../trial/interlockFeed';
import { ApiFailure } from './apiFailure';

// The console's serial interlock box (DESIGN §5.2, docs/INTERLOCK.md) behind interlock.*: one box
// per console, opened by device path, armed and disarmed by the operator, its status turned into
// the Trial runner's light (SAFE / ARMED / ESTOP / LOST, CLOSED without a box). The link itself
// (heartbeats, silence trip, ARM/DISARM handshakes) is src/services/interlock/serialInterlock.ts;
// this file only owns which box is open (as an InterlockFeed, src/services/trial/interlockFeed.ts,
// whose gate events the trial runner's safety gate subscribes to) and fans its trips out.
//
// After a trip by port loss the link is dead (no automatic reconnect, by design): the status keeps
// saying LOST with the reason until the operator opens the device again.

export interface InterlockSessionsOptions {
  /** Opens the box (tests inject their own; default openInterlockFeed: the link plus its gate events). */
  open?: (options: {
    path: string;
    onTrip: (trip: InterlockTrip) => void;
    log: (line: string) => void;
    runnerTripSocket?: string;
  }) => Promise<InterlockFeed>;
  /**
   * The e-stop socket of the runners the services start (connectionRegistry.ts): the box's keeper
   * writes every e-stop it hears there itself, and reconnects while no runner listens, so a runner
   * started before or after the box is opened, or restarted, damps without the console's process.
   */
  runnerTripSocket?: string | null;
  /** Lists serial ports (default listSerialPorts: guarded, never SerialPort.list() without udev). */
  list?: () => Promise<InterlockListDto>;
  log?: (line: string) => void;
  /**
   * Runs before a box is opened: whatever would block the event loop for long (generating the
   * built-in workload) must happen before heartbeats start — a blocked loop is a silence trip.
   */
  beforeOpen?: () => void | Promise<void>;
}

/** The light for a monitor state: what the operator sees. */
export function interlockLight(snapshot: Pick<InterlockSnapshot, 'state' | 'portOpen'> | null): InterlockLight {
  if (!snapshot) return 'CLOSED';
  switch (snapshot.state) {
    case 'armed':
      return 'ARMED';
    case 'estop':
      return 'ESTOP';
    case 'lost':
      return 'LOST';
    case 'safe':
      return 'SAFE';
    case 'disconnected':
      return snapshot.portOpen ? 'LOST' : 'CLOSED';
  }
}

/** The status DTO of a snapshot, ages as of `nowMs` (the snapshot's clock; default its own time). */
export function interlockStatusDto(path: string, s: InterlockSnapshot, nowMs: number = s.atMs): InterlockStatusDto {
  const ago = (t: number): number => Math.max(0, nowMs - t);
  return {
    path,
    open: s.portOpen,
    state: s.state,
    light: interlockLight(s),
    deviceState: s.deviceState,
    armedAndFresh: s.armedAndFresh,
    armPending: s.armPending,
    disarmPending: s.disarmPending,
    lastStatusAgeMs: s.freshness.lastStatusAtMs === null ? null : ago(s.freshness.lastStatusAtMs),
    rttMs: s.freshness.rttMs,
    statusGapMaxMs: s.freshness.statusGapMaxMs ?? null,
    lastTrip: s.lastTrip ? { reason: s.lastTrip.reason, detail: s.lastTrip.detail, agoMs: ago(s.lastTrip.atMs) } : null,
    lastEvent: s.lastEvent ? { event: s.lastEvent.event, agoMs: ago(s.lastEvent.atMs) } : null,
    garbageLines: s.counters.garbageLines,
    trips: s.counters.trips,
  };
}

export class InterlockSessions {
  private current: InterlockFeed | null = null;
  private opening = false;
  private readonly tripListeners = new Set<(trip: InterlockTrip) => void>();
  private readonly changeListeners = new Set<() => void>();
  private readonly log: (line: string) => void;

  constructor(private readonly o: InterlockSessionsOptions = {}) {
    this.log = o.log ?? (() => {});
  }

  async list(): Promise<InterlockListDto> {
    if (this.o.list) return this.o.list();
    const r = await listSerialPorts();
    return { ports: r.ports.map((p) => ({ ...p })), method: r.method, note: r.note ?? null };
  }

  /** The open box (for the trial runner), or null. */
  feed(): InterlockFeed | null {
    return this.current;
  }

  /** Called at once on every trip of the open link (e-stop, silence, port loss, …). */
  onTrip(listener: (trip: InterlockTrip) => void): () => void {
    this.tripListeners.add(listener);
    return () => this.tripListeners.delete(listener);
  }

  /** Called when a box is opened or closed (the status pusher starts and stops with it). */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  private changed(): void {
    for (const l of [...this.changeListeners]) {
      try {
        l();
      } catch {
        // a listener must not keep the others from running
      }
    }
  }

  async open(path: string): Promise<InterlockStatusDto> {
    if (this.opening) throw new ApiFailure('conflict', 'an interlock is being opened already');
    const cur = this.current;
    if (cur && cur.link.snapshot().portOpen) {
      throw new ApiFailure(
        'conflict',
        `the interlock ${cur.link.path} is open: close it first (one box per console)`,
        'params.path',
      );
    }
    this.opening = true;
    try {
      await this.o.beforeOpen?.();
      if (cur) {
        // A dead link (port gone after a trip): forget it.
        await cur.close().catch(() => undefined);
        this.current = null;
      }
      let feed: InterlockFeed;
      try {
        feed = await (this.o.open ?? openInterlockFeed)({
          path,
          onTrip: (trip) => {
            this.log(`interlock ${path}: trip ${trip.reason} (${trip.detail})`);
            for (const l of [...this.tripListeners]) {
              try {
                l(trip);
              } catch (err) {
                this.log(`interlock trip listener failed: ${err instanceof Error ? err.message : String(err)}`);
              }
            }
          },
          log: (line) => this.log(`interlock ${path}: ${line}`),
          ...(this.o.runnerTripSocket ? { runnerTripSocket: this.o.runnerTripSocket } : {}),
        });
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        const why =
          e?.code === 'ENOENT'
            ? 'no such device'
            : e?.code === 'EACCES'
              ? 'permission denied (is the user in the dialout group?)'
              : err instanceof Error
                ? err.message
                : String(err);
        throw new ApiFailure(
          e?.code === 'ENOENT' ? 'not_found' : 'input_error',
          `${path}: cannot open the interlock: ${why}`,
          'params.path',
        );
      }
      this.current = feed;
      this.changed();
      return interlockStatusDto(feed.link.path, feed.link.snapshot());
    } finally {
      this.opening = false;
    }
  }

  async close(): Promise<{ closed: string | null }> {
    const cur = this.current;
    if (!cur) return { closed: null };
    this.current = null;
    await cur
      .close()
      .catch((err: unknown) =>
        this.log(`interlock ${cur.link.path}: close failed: ${err instanceof Error ? err.message : String(err)}`),
      );
    this.changed();
    return { closed: cur.link.path };
  }

  private require(): InterlockFeed['link'] {
    if (!this.current)
      throw new ApiFailure(
        'conflict',
        'no interlock is open: open the box first (interlock.open with its device path)',
      );
    return this.current.link;
  }

  async arm(): Promise<{ ok: boolean; reason: string | null; detail: string | null; status: InterlockStatusDto }> {
    const link = this.require();
    const r = await link.arm();
    const status = interlockStatusDto(link.path, link.snapshot());
    return r.ok
      ? { ok: true, reason: null, detail: null, status }
      : { ok: false, reason: r.reason, detail: r.detail, status };
  }

  async disarm(): Promise<{ ok: boolean; reason: string | null; detail: string | null; status: InterlockStatusDto }> {
    const link = this.require();
    const r = await link.disarm();
    const status = interlockStatusDto(link.path, link.snapshot());
    return r.ok
      ? { ok: true, reason: null, detail: null, status }
      : { ok: false, reason: r.reason, detail: r.detail, status };
  }

  status(): InterlockStatusDto | null {
    const cur = this.current;
    return cur ? interlockStatusDto(cur.link.path, cur.link.snapshot()) : null;
  }

  async shutdown(): Promise<void> {
    await this.close();
    this.tripListeners.clear();
    this.changeListeners.clear();
  }
}
