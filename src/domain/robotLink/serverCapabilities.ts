import type { BackendCapabilities } from '../backend/backend';
import { G1_BRIDGE_METADATA, G1_BRIDGE_TOPICS } from '../bridge/g1BridgeContract';
import type { WbcBindingKind } from '../wbc/wbcBinding';

// What a g1-bridge/1 server is, read from its serverInfo metadata and its advertised channels
// (docs/G1_BRIDGE.md §2): the Backend capabilities the console's client declares for it.

/** The capabilities of a server with this metadata advertising these topics. */
export function capabilitiesFromServer(
  metadata: Readonly<Record<string, string>>,
  advertisedTopics: ReadonlySet<string>,
): BackendCapabilities {
  const m = metadata;
  const domain = m[G1_BRIDGE_METADATA.executionDomain] === 'real_robot' ? 'real_robot' : 'simulation';
  const rate = Number(m[G1_BRIDGE_METADATA.stateRateHz]);
  const kinds = (m[G1_BRIDGE_METADATA.bindingKinds] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s): s is WbcBindingKind => s === 'builtin' || s === 'onnx' || s === 'remote');
  const exact = m[G1_BRIDGE_METADATA.exactReset];
  return {
    executionDomain: domain,
    // Only an advertised root_state channel means a global root (a simulator, or motion capture).
    globalRootPosition: advertisedTopics.has(G1_BRIDGE_TOPICS.rootState),
    rootOrientation: true,
    contacts: m[G1_BRIDGE_METADATA.contacts] === 'true',
    jointTorque: m[G1_BRIDGE_METADATA.jointTorque] !== 'false',
    stateRateHz: Number.isFinite(rate) && rate > 0 ? rate : 50,
    exactReset: exact === undefined ? domain === 'simulation' : exact === 'true',
    bindingKinds: kinds.length > 0 ? kinds : ['remote'],
  };
}

/** `stamp_origin_unix_ms` of the metadata, parsed; null when absent or not a number. */
export function stampOriginOf(metadata: Readonly<Record<string, string>>): number | null {
  const v = metadata[G1_BRIDGE_METADATA.stampOriginUnixMs];
  if (v === undefined) return null;
  const n = Number(v);
  return v.trim() !== '' && Number.isFinite(n) ? n : null;
}

/**
 * The capabilities of a ROS 2 robot through foxglove_bridge (docs/ROS2_LINK.md): the real robot's
 * sensors only — no global root (no motion capture topic is read), the IMU's attitude as root
 * orientation, estimated torques, no contacts, no reset, and no WBC binding it can run (it has no
 * g1-bridge/1 runner). unitree_ros2 publishes `lowstate` at the high rate, `lf/lowstate` at a low
 * one (example/src/src/read_low_state_hg.cpp, HIGH_FREQ); 500 Hz is the G1's rt/lowstate rate.
 */
export const ROS2_LOWSTATE_CAPABILITIES: Readonly<BackendCapabilities> = Object.freeze({
  executionDomain: 'real_robot',
  globalRootPosition: false,
  rootOrientation: true,
  contacts: false,
  jointTorque: true,
  stateRateHz: 500,
  exactReset: false,
  bindingKinds: [],
});

/** Why a ROS 2 foxglove_bridge link is watch-only (acquire's refusal, the gate driver's, the docs'). */
export const ROS2_LINK_WATCH_ONLY_REASON =
  'this robot link is a ROS 2 foxglove_bridge: it has no g1-bridge/1 runner, so a clip cannot be prepared, started or stopped here (watch, calibrate and measure only)';
