import { clipFromDto } from '../../../src/api/clipDto';
import type { ApiError, ClipDto } from '../../../src/api/contract';
import { MAX_CLIP_FILE_BYTES } from '../../../src/api/contract';
import { toApiError } from '../api/apiErrors';
import { bytesToBase64 } from '../api/base64';
import { useConnectionStore } from '../api/connectionStore';
import type { ConsoleClient } from '../api/consoleClient';
import { resetPlayhead } from '../playback/playback';
import { type ClipSource, useClipStore } from '../playback/clipStore';

// Opening clips. Every path ends in `runLoad`: success replaces the clip on display, failure
// shows the structured error and keeps the previous clip.

/** The fps the operator stated, or undefined when the field is empty; NaN when it is not a number. */
export function statedFps(fpsText: string): number | undefined {
  const t = fpsText.trim();
  if (t === '') return undefined;
  const v = Number(t);
  return Number.isFinite(v) && v > 0 ? v : Number.NaN;
}

/** Decodes a clip source in the services (clips.decode for bytes, clips.load for a path). */
export function fetchClip(client: ConsoleClient, source: ClipSource, fps: { fps?: number }): Promise<ClipDto> {
  return source.kind === 'bytes'
    ? client.call('clips.decode', { fileName: source.fileName, bytesBase64: source.bytesBase64, ...fps })
    : client.call('clips.load', { path: source.path, ...fps });
}

/** The fps to send, or an error when the field holds something that is not a positive number. */
function fpsParam(): { fps?: number } | ApiError {
  const { fpsText } = useClipStore.getState();
  const fps = statedFps(fpsText);
  if (fps === undefined) return {};
  if (Number.isNaN(fps))
    return { code: 'bad_params', field: 'params.fps', message: `fps "${fpsText}" is not a positive number` };
  return { fps };
}

async function runLoad(
  source: ClipSource | null,
  load: (fps: { fps?: number }) => Promise<ClipDto | null>,
): Promise<void> {
  const client = useConnectionStore.getState().client;
  if (!client) {
    useClipStore.setState({ error: { code: 'internal', message: 'not connected to the console services' } });
    return;
  }
  const fps = fpsParam();
  if ('code' in fps) {
    useClipStore.setState({ error: fps });
    return;
  }
  useClipStore.setState({ loading: true, ...(source && { lastSource: source }) });
  try {
    const dto = await load(fps);
    if (!dto) {
      useClipStore.setState({ loading: false });
      return;
    }
    useClipStore.setState({ loaded: clipFromDto(dto), loading: false, error: null });
    resetPlayhead();
  } catch (err) {
    const error = toApiError(err);
    // A file chosen in the native dialog that failed: remember it, so Reload can retry it.
    const lastSource = source ?? (error.location ? ({ kind: 'path', path: error.location.file } as const) : null);
    useClipStore.setState({ loading: false, error, ...(lastSource && { lastSource }) });
  }
}

function loadSource(source: ClipSource): Promise<void> {
  const client = useConnectionStore.getState().client;
  return runLoad(source, (fps) => fetchClip(client!, source, fps));
}

/** A file the operator picked in the browser's file input. */
export async function openClipFile(file: File): Promise<void> {
  if (file.size > MAX_CLIP_FILE_BYTES) {
    useClipStore.setState({
      error: {
        code: 'too_large',
        message: `${file.name}: ${file.size} bytes is more than the ${MAX_CLIP_FILE_BYTES}-byte limit`,
      },
    });
    return;
  }
  const bytesBase64 = bytesToBase64(new Uint8Array(await file.arrayBuffer()));
  await loadSource({ kind: 'bytes', fileName: file.name, bytesBase64 });
}

/** Electron: the native "Open clip…" dialog. */
export async function openClipDialog(): Promise<void> {
  const client = useConnectionStore.getState().client;
  await runLoad(null, async (fps) => {
    const r = await client!.call('clips.openDialog', fps);
    if (r.cancelled) return null;
    useClipStore.setState({ lastSource: { kind: 'path', path: r.clip.file } });
    return r.clip;
  });
}

/** Loads the last attempted file again, e.g. after the operator typed an fps. */
export async function reloadClip(): Promise<void> {
  const source = useClipStore.getState().lastSource;
  if (source) await loadSource(source);
}

export function dismissClipError(): void {
  useClipStore.setState({ error: null });
}
