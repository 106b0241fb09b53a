import { useEffect, useRef } from 'react';
import { useClipStore } from './clipStore';
import { pause, seekFrame, stepFrames, togglePlay } from './playback';
import { slowPlaybackNote } from './playbackRate';
import { PLAYBACK_SPEEDS, usePlaybackStore } from './playbackStore';
import { poseStore } from './poseStore';
import { FirstIcon, LastIcon, PauseIcon, PlayIcon, StepBackIcon, StepForwardIcon } from './TransportIcons';

/**
 * Transport controls and the scrubber. The slider and the time/frame readouts follow the
 * playhead through a store subscription that writes the DOM directly (no React render per
 * frame); everything else here is low-rate React state.
 */
export function Timeline() {
  const loaded = useClipStore((s) => s.loaded);
  const { playing, speed, loop, measuredSpeed } = usePlaybackStore();
  const slowNote = slowPlaybackNote(measuredSpeed, speed);
  const slider = useRef<HTMLInputElement>(null);
  const timeText = useRef<HTMLSpanElement>(null);
  const frameText = useRef<HTMLSpanElement>(null);
  const clip = loaded?.clip ?? null;
  const lastFrame = clip ? clip.frameCount - 1 : 0;

  useEffect(() => {
    const show = (): void => {
      const { frame, timeS } = poseStore.getState();
      if (slider.current) slider.current.value = String(frame);
      if (timeText.current) timeText.current.textContent = `${timeS.toFixed(3)} s`;
      if (frameText.current) frameText.current.textContent = String(frame);
    };
    show();
    return poseStore.subscribe(show);
  }, [clip]);

  const disabled = !clip;
  const goTo = (frame: number): void => {
    pause();
    seekFrame(frame);
  };
  return (
    <footer className="timeline" data-testid="timeline" data-measured-speed={measuredSpeed ?? ''}>
      <div className="transport">
        <button
          type="button"
          disabled={disabled}
          title="First frame (Home)"
          aria-label="First frame"
          onClick={() => goTo(0)}
        >
          <FirstIcon />
        </button>
        <button
          type="button"
          disabled={disabled}
          title="Previous frame (←, Shift+← ten)"
          aria-label="Previous frame"
          data-testid="step-back"
          onClick={() => stepFrames(-1)}
        >
          <StepBackIcon />
        </button>
        <button
          type="button"
          className="play"
          disabled={disabled}
          title="Play / pause (P)"
          data-testid="play-pause"
          aria-pressed={playing}
          onClick={togglePlay}
        >
          {playing ? <PauseIcon /> : <PlayIcon />}
          {playing ? 'Pause' : 'Play'}
        </button>
        <button
          type="button"
          disabled={disabled}
          title="Next frame (→, Shift+→ ten)"
          aria-label="Next frame"
          data-testid="step-forward"
          onClick={() => stepFrames(1)}
        >
          <StepForwardIcon />
        </button>
        <button
          type="button"
          disabled={disabled}
          title="Last frame (End)"
          aria-label="Last frame"
          onClick={() => goTo(lastFrame)}
        >
          <LastIcon />
        </button>
      </div>
      <input
        ref={slider}
        className="scrubber"
        type="range"
        min={0}
        max={lastFrame}
        step={1}
        defaultValue={0}
        disabled={disabled}
        aria-label="Frame"
        data-testid="scrubber"
        onInput={(e) => {
          pause();
          seekFrame(Number(e.currentTarget.value));
        }}
      />
      <div className="readout">
        <span className="readout-item">
          <span className="muted">t</span> <span ref={timeText} className="mono time" data-testid="time-label" />
          <span className="muted"> / {clip ? `${loaded!.durationS.toFixed(3)} s` : '—'}</span>
        </span>
        <span className="readout-item">
          <span className="muted">frame</span> <span ref={frameText} className="mono frame" data-testid="frame-label" />
          <span className="muted"> / {clip ? lastFrame : '—'}</span>
        </span>
        <label className="readout-item">
          <span className="muted">speed</span>{' '}
          <select
            value={speed}
            onChange={(e) => usePlaybackStore.setState({ speed: Number(e.target.value) })}
            data-testid="speed"
          >
            {PLAYBACK_SPEEDS.map((s) => (
              <option key={s} value={s}>
                {s}×
              </option>
            ))}
          </select>
        </label>
        <label className="readout-item check">
          <input
            type="checkbox"
            checked={loop}
            onChange={(e) => usePlaybackStore.setState({ loop: e.target.checked })}
          />{' '}
          loop
        </label>
        {slowNote && (
          <span
            className="readout-item warn-text"
            role="status"
            title="the playhead advances at most 0.25 s of clip per drawn frame; frames drawn slower than that play the clip slower than asked"
            data-testid="playback-rate"
          >
            {slowNote}
          </span>
        )}
      </div>
    </footer>
  );
}
