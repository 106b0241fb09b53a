// A simulation run on the machine that runs a real trial takes the cores the robot's timing needs
// (the interlock's heartbeats, the link's watchdog: 100 ms of silence trips them). While real-robot
// work runs in these services (a trial job or a calibration capture), a run on the embedded
// simulator, or on a remote simulator at a loopback address (the same machine), is refused unless
// the request overrides it. A remote simulator elsewhere loads another machine: allowed.

export interface SimDuringRealTrialFacts {
  /** The real-robot work running now (e.g. "trial trial-… is running (pair …)"); null when none. */
  realWork: string | null;
  /** The simulator runs in these services (the embedded one). */
  embedded: boolean;
  /** A remote simulator's ws:// URL; null for the embedded simulator and for a robot. */
  url: string | null;
  /** The request's explicit override. */
  override: boolean;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1', '0.0.0.0']);

/** Whether the simulator runs on this machine: the embedded one, or a remote one at a loopback host. */
export function simulatorOnThisMachine(embedded: boolean, url: string | null): boolean {
  if (embedded) return true;
  if (url === null) return false;
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return LOOPBACK_HOSTS.has(host) || host.startsWith('127.');
}

/** The refusal's message, or null when the run may go ahead. */
export function simDuringRealTrialRefusal(f: SimDuringRealTrialFacts): string | null {
  if (f.realWork === null || f.override || !simulatorOnThisMachine(f.embedded, f.url)) return null;
  return `${f.realWork} on this machine: a simulation here would take the cores its robot's timing needs; wait for its end, or set allowDuringRealTrial to run anyway`;
}
