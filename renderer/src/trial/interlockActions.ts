import { useSafetyStore } from '../safety/safetyStore';
import { trialCall } from './trialCall';
import { patchTrialForm, useTrialStore } from './trialStore';

// The interlock box of the Trial runner (DESIGN §5.2): serial ports listed (guarded in the
// services: never SerialPort.list() without udev), the box opened and closed, ARM / DISARM by hand
// (the runner also arms it when a trial is confirmed). Refusals are shown verbatim under the row.

export async function listPorts(): Promise<void> {
  const ports = await trialCall(
    'ports',
    (c) => c.call('interlock.list', {}),
    (m) => useTrialStore.setState({ interlockError: m }),
  );
  if (ports) {
    useTrialStore.setState({ ports });
    if (!useTrialStore.getState().form.interlockPath && ports.ports[0])
      patchTrialForm({ interlockPath: ports.ports[0].path });
  }
}

const interlockErr = (m: string): void => useTrialStore.setState({ interlockError: m });

export async function openInterlockBox(): Promise<void> {
  const path = useTrialStore.getState().form.interlockPath.trim();
  if (!path) return interlockErr('give the interlock device path (e.g. /dev/ttyUSB0)');
  useTrialStore.setState({ interlockError: null });
  const st = await trialCall('interlock', (c) => c.call('interlock.open', { path }), interlockErr);
  if (st) useSafetyStore.setState({ interlock: st, receivedAtMs: performance.now() });
}

export async function closeInterlockBox(): Promise<void> {
  useTrialStore.setState({ interlockError: null });
  await trialCall('interlock', (c) => c.call('interlock.close', {}), interlockErr);
}

/** ARM / DISARM; a refusal is shown verbatim ("not_safe: the box reports ESTOP …"). */
export async function armInterlock(arm: boolean): Promise<void> {
  useTrialStore.setState({ interlockError: null });
  const r = await trialCall('arm', (c) => c.call(arm ? 'interlock.arm' : 'interlock.disarm', {}), interlockErr);
  if (!r) return;
  useSafetyStore.setState({ interlock: r.status, receivedAtMs: performance.now() });
  if (!r.ok) interlockErr(`${arm ? 'ARM' : 'DISARM'} refused (${r.reason}): ${r.detail}`);
}
