import { clipFromDto, type LoadedClip } from '../../../src/api/clipDto';
import { presetIdOf } from '../../../src/domain/wbc/policyPresets';
import { toApiError } from '../api/apiErrors';
import { useConnectionStore } from '../api/connectionStore';
import type { ConsoleClient } from '../api/consoleClient';
import { useClipStore } from '../playback/clipStore';
import { resetPlayhead } from '../playback/playback';
import { usePolicyStore, type PolicyInfo } from './policyStore';

// Opening a released policy (policies.open) by a path on the machine running the services: a
// policy file (.onnx) or a policy folder (unitree_rl_mjlab's exported/ + params/, wbc-mjlab's
// policy.onnx + config.yaml, or a folder with one .onnx). Success replaces the policy in the
// Policy panel and, when the file carries its own motion, puts that motion on display as the
// loaded clip (the viewport shows it, the Sim panel runs it); failure shows the structured error
// in the panel and keeps the previous policy. Runs and qualifications then name the policy by its
// id (policy-…), never by the path. An .onnx export that does not carry its own interface is
// opened under a declared preset the operator picks; the services check it against the file.

export const patchPolicyPath = (pathText: string): void => usePolicyStore.setState({ pathText });

/** The declared preset to open the next policy under ('' for none). */
export const patchPolicyPreset = (preset: string): void => usePolicyStore.setState({ preset });

/** The baked motion on display, as a clip opened from a file would be (no file to reload: lastSource null). */
function showClip(loaded: LoadedClip): void {
  useClipStore.setState({ loaded, loading: false, error: null, lastSource: null });
  resetPlayhead();
}

/** Opens the policy named in the path field. */
export async function openPolicy(): Promise<void> {
  const client = useConnectionStore.getState().client;
  if (!client) {
    usePolicyStore.setState({ error: { code: 'internal', message: 'not connected to the console services' } });
    return;
  }
  const { pathText, preset, opening } = usePolicyStore.getState();
  if (opening) return;
  const path = pathText.trim();
  if (path === '') {
    usePolicyStore.setState({
      error: {
        code: 'bad_params',
        field: 'params.path',
        message: 'give a policy file (.onnx) or folder: a path on the machine running the services',
      },
    });
    return;
  }
  usePolicyStore.setState({ opening: true });
  try {
    const { bakedClip, ...info } = await client.call('policies.open', { path, ...(preset !== '' && { preset }) });
    const loaded = bakedClip ? clipFromDto(bakedClip) : null;
    usePolicyStore.setState({ info, bakedClip: loaded, error: null, opening: false });
    if (loaded) showClip(loaded);
  } catch (err) {
    usePolicyStore.setState({ error: toApiError(err), opening: false });
  }
}

/** Puts the open policy's baked motion back on display (after another clip was opened). */
export function showPolicyMotion(): void {
  const loaded = usePolicyStore.getState().bakedClip;
  if (loaded) showClip(loaded);
}

export function dismissPolicyError(): void {
  usePolicyStore.setState({ error: null });
}

/** The open policy's baked motion is the clip on display (or it has none). */
export function policyMotionShown(info: PolicyInfo, clipId: string | null): boolean {
  return info.motion === null || info.motion.clipId === clipId;
}

/**
 * The services forgot the open policy or its motion (restarted, or the clip cache evicted it):
 * opens it again by its path. True when it came back under the same ids.
 */
export async function reopenPolicy(client: ConsoleClient): Promise<boolean> {
  const info = usePolicyStore.getState().info;
  if (!info) return false;
  const preset = presetIdOf(info.preset);
  const dto = await client.call('policies.open', { path: info.path, ...(preset !== null && { preset }) });
  return dto.policyId === info.policyId && (dto.motion?.clipId ?? null) === (info.motion?.clipId ?? null);
}
