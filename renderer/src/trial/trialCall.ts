import { errorReport } from '../api/apiErrors';
import { useConnectionStore } from '../api/connectionStore';
import type { ConsoleClient } from '../api/consoleClient';
import { useTrialStore } from './trialStore';

// One console call of the Trial runner or the Calibration panel (interlock.*, calibration.*,
// trial.*): its key is in the store's `busy` list while it is in flight (buttons show it), and a
// failure is shown verbatim — the whole structured error, reasons included — in the Trial runner's
// error line, or where `onError` puts it.

export async function trialCall<T>(
  key: string,
  run: (c: ConsoleClient) => Promise<T>,
  onError: (msg: string) => void = (m) => useTrialStore.setState({ error: m }),
): Promise<T | null> {
  const c = useConnectionStore.getState().client;
  if (!c) {
    onError('not connected to the console services');
    return null;
  }
  useTrialStore.setState((s) => ({ busy: [...s.busy, key] }));
  try {
    return await run(c);
  } catch (err) {
    onError(errorReport(err));
    return null;
  } finally {
    useTrialStore.setState((s) => ({ busy: s.busy.filter((b) => b !== key) }));
  }
}
