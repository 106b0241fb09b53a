import { useRef } from 'react';
import { useConnectionStore } from '../api/connectionStore';
import { openClipDialog, openClipFile, reloadClip } from './clipActions';
import { statedFps } from './clipActions';
import { useClipStore } from '../playback/clipStore';
import { LabelledInput } from '../ui/LabelledInput';

/** Open a clip (native dialog in the desktop app, file input in a browser) and state its fps. */
export function ClipPanel() {
  const fileInput = useRef<HTMLInputElement>(null);
  const nativeDialog = useConnectionStore((s) => s.appInfo?.capabilities.nativeOpenDialog ?? false);
  const connected = useConnectionStore((s) => s.status === 'connected');
  const { fpsText, loading, lastSource } = useClipStore();
  const fpsInvalid = Number.isNaN(statedFps(fpsText));

  const open = (): void => {
    if (nativeDialog) void openClipDialog();
    else fileInput.current?.click();
  };

  return (
    <section className="panel">
      <h2>Clip</h2>
      <div className="row">
        <button
          type="button"
          className="primary"
          onClick={open}
          disabled={!connected || loading}
          data-testid="open-clip"
        >
          {loading ? 'Loading…' : 'Open clip…'}
        </button>
        <button
          type="button"
          onClick={() => void reloadClip()}
          disabled={!connected || loading || !lastSource}
          title="Load the last file again, e.g. with another fps"
          data-testid="reload-clip"
        >
          Reload
        </button>
        <input
          ref={fileInput}
          type="file"
          accept=".csv,.npz,.json"
          hidden
          data-testid="clip-file-input"
          onChange={(e) => {
            const file = e.target.files?.[0];
            e.target.value = '';
            if (file) void openClipFile(file);
          }}
        />
      </div>
      <LabelledInput
        className="field"
        label="FPS"
        inputMode="decimal"
        placeholder="from file"
        value={fpsText}
        aria-invalid={fpsInvalid}
        testId="fps-input"
        onText={(fpsText) => useClipStore.setState({ fpsText })}
        after={
          <span className="hint">
            Empty: the file’s own rate. CSV files have none: LAFAN1 names (walk1_subject1.csv) are 30 fps, others need
            it typed (G1 Moves: 60).
          </span>
        }
      />
    </section>
  );
}
