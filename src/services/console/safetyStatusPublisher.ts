import type { RobotLinkStatusDto } from '../../api/contract';
import { ROBOT_LINK_FRESH_MS, SAFETY_STATUS_HZ } from '../../api/contract';
import { schedulerFacts } from '../os/schedulerFacts';
import type { ConnectionRegistry } from './connectionRegistry';
import type { EventHub } from './eventHub';
import type { InterlockSessions } from './interlockSessions';
import { robotLinkFigures } from './robotLive';

// safety.status at SAFETY_STATUS_HZ while an interlock is open or a robot is connected: the
// interlock light and each robot link's age (the panel's lights), plus the host's scheduler facts.

export interface SafetyStatusPublisherOptions {
  hub: EventHub;
  registry: ConnectionRegistry;
  interlocks: InterlockSessions;
  now: () => number;
}

export class SafetyStatusPublisher {
  private timer: ReturnType<typeof setInterval> | null;
  /** Whether the last safety.status pushed had a box or a robot in it. */
  private active = false;
  private closed = false;

  constructor(private readonly o: SafetyStatusPublisherOptions) {
    this.timer = setInterval(() => this.push(), 1000 / SAFETY_STATUS_HZ);
    this.timer.unref?.();
  }

  /** Each robot connection's link figures (the link light: green only when fresh). */
  robotLinks(): RobotLinkStatusDto[] {
    return this.o.registry
      .list()
      .filter((c) => c.kind === 'robot')
      .map((c) => {
        const b = this.o.registry.existingBackend(c.id);
        return {
          connectionId: c.id,
          name: c.name,
          presence: c.presence,
          lastFrameAgeMs: c.lastFrameAgeMs,
          rateHz: c.rateHz,
          latencyMs: c.latencyMs,
          fresh: c.presence === 'present' && c.lastFrameAgeMs !== null && c.lastFrameAgeMs < ROBOT_LINK_FRESH_MS,
          freshLimitMs: ROBOT_LINK_FRESH_MS,
          globalRoot: b ? b.capabilities.globalRootPosition : false,
          ...robotLinkFigures(this.o.registry, c.id),
        };
      });
  }

  private push(): void {
    if (this.closed) return;
    const interlock = this.o.interlocks.status();
    const robots = this.robotLinks();
    const active = interlock !== null || robots.some((r) => r.presence !== 'disconnected');
    // Idle: nothing to push, except once when the last robot and box have gone, so that the
    // top bar's chips (WBC, tilt, timing, reset) do not keep the last connected robot's state.
    if (!active && !this.active) return;
    this.active = active;
    const event = {
      type: 'safety.status' as const,
      atMs: this.o.now(),
      interlock,
      robots,
      host: schedulerFacts(performance.now()),
    };
    this.o.hub.broadcastTransient(() => event);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
