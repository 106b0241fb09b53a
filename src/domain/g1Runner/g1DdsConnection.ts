// "G1 over DDS" in the Connections panel: the console services start `motionbench g1-runner` on a
// free loopback port for the given network interface and DDS domain, and connect to it as the
// robot link (docs/ROBOT_SETUP.md). What the operator types is checked here, before any process
// starts: the interface name goes into Cyclone DDS's configuration and onto a command line.

/** Linux IFNAMSIZ − 1: the longest network interface name. */
export const DDS_INTERFACE_NAME_MAX_CHARS = 15;
/** Largest DDS domain id Cyclone DDS accepts with the default RTPS port mapping. */
export const DDS_DOMAIN_ID_MAX = 232;
/** Letters, digits, `_`, `.`, `-`; starting with a letter or digit (e.g. lo, eth0, enp3s0, eth0.100). */
export const DDS_INTERFACE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** What keeps the robot up after a clip, as the operator declares it (docs/G1_RUNNER.md "After the clip"). */
export type G1DdsAfterClip = 'gantry' | 'standing_policy';
export const G1_DDS_AFTER_CLIP: readonly G1DdsAfterClip[] = ['gantry', 'standing_policy'];

/** Longest standing-controller folder path accepted, characters (Linux PATH_MAX). */
export const STANDING_POLICY_PATH_MAX_CHARS = 4096;

export interface G1DdsSpec {
  interfaceName: string;
  domainId: number;
  afterClip: G1DdsAfterClip;
  /**
   * With `standing_policy`: the standing controller's folder on the console's machine
   * (unitree_rl_lab's G1 velocity policy: params/deploy.yaml + exported/policy.onnx).
   */
  standingPolicyPath?: string;
}

/** Why the after-clip declaration cannot be used, or null when it can. */
export function afterClipProblem(afterClip: G1DdsAfterClip, standingPolicyPath: string | undefined): string | null {
  if (afterClip === 'standing_policy') {
    const p = standingPolicyPath?.trim() ?? '';
    if (p === '') return 'standing_policy needs the standing controller folder (unitree_rl_lab G1 velocity policy)';
    if (p.length > STANDING_POLICY_PATH_MAX_CHARS)
      return `the standing controller folder path is longer than ${STANDING_POLICY_PATH_MAX_CHARS} characters`;
    if (p.startsWith('-')) return 'the standing controller folder path must not start with "-"';
    return null;
  }
  return standingPolicyPath ? 'a standing controller folder is given only with standing_policy' : null;
}

/** Where the console's interlock keeper writes its e-stops (`g1-runner --interlock-trips`). */
export interface G1RunnerEstopSocket {
  /** A Unix socket path of the console's choosing; null: the runner listens for no interlock. */
  interlockTripSocket: string | null;
}

/** Why `name` cannot be a network interface name, or null when it can. */
export function ddsInterfaceNameProblem(name: string): string | null {
  if (name.length === 0) return 'the network interface name is empty';
  if (name.length > DDS_INTERFACE_NAME_MAX_CHARS) {
    return `the network interface name is ${name.length} characters long, more than ${DDS_INTERFACE_NAME_MAX_CHARS}`;
  }
  if (!DDS_INTERFACE_NAME_RE.test(name)) {
    return 'the network interface name must be letters, digits, _ . - (e.g. lo, eth0, enp3s0)';
  }
  return null;
}

/** Why `id` cannot be a DDS domain id, or null when it can. */
export function ddsDomainIdProblem(id: number): string | null {
  return Number.isInteger(id) && id >= 0 && id <= DDS_DOMAIN_ID_MAX
    ? null
    : `the DDS domain id must be an integer in [0, ${DDS_DOMAIN_ID_MAX}], found ${String(id)}`;
}

/** The Connections panel's name of the entry. */
export function g1DdsConnectionName(spec: Pick<G1DdsSpec, 'interfaceName' | 'domainId'>): string {
  return `G1 over DDS (${spec.interfaceName}, domain ${spec.domainId})`;
}

/**
 * The arguments of `motionbench g1-runner` for `spec`: bridge on 127.0.0.1 only, any free port
 * (its URL is read from the --json line), the operator's declaration after the clip, and the
 * console's interlock e-stop socket when it has one (the keeper writes the box's e-stops there,
 * so the runner damps without the console's process: docs/G1_RUNNER.md "Interlock e-stop").
 */
export function g1RunnerArgs(spec: G1DdsSpec & Partial<G1RunnerEstopSocket>): string[] {
  const iface = ddsInterfaceNameProblem(spec.interfaceName);
  if (iface) throw new RangeError(iface);
  const domain = ddsDomainIdProblem(spec.domainId);
  if (domain) throw new RangeError(domain);
  const after = afterClipProblem(spec.afterClip, spec.standingPolicyPath);
  if (after) throw new RangeError(after);
  return [
    'g1-runner',
    '--interface',
    spec.interfaceName,
    '--domain',
    String(spec.domainId),
    '--after-clip',
    spec.afterClip,
    ...(spec.afterClip === 'standing_policy' ? ['--standing-policy', spec.standingPolicyPath!.trim()] : []),
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--json',
    ...(spec.interlockTripSocket ? ['--interlock-trips', spec.interlockTripSocket] : []),
  ];
}
