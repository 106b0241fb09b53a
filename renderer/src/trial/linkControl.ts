import type { ConnectionInfo } from '../../../src/api/contract';

// Whether the Trial runner's robot link can run a trial. A link that cannot be controlled
// declares it (robotLink.control 'watchOnly': a ROS 2 robot through foxglove_bridge, or a
// g1-bridge/1 server that accepts no client messages) and holds the `watch_only` condition with
// its reason for as long as that is so; connections.list carries the condition to the renderer
// (ConnectionInfo.problems), which is how the panel knows it without asking the services to
// refuse a start first. The services refuse such a start anyway (WatchOnlyLinkError).

/** The reason the connection is watch-only (its `watch_only` condition, the URL prefix dropped), or null. */
export function watchOnlyReason(entry: ConnectionInfo | null | undefined): string | null {
  if (!entry || entry.kind !== 'robot') return null;
  const p = entry.problems.find((x) => x.code === 'watch_only');
  if (!p) return null;
  return p.message.replace(/^wss?:\/\/\S+?: /, '');
}
