import { useEffect } from 'react';
import { useClipStore } from '../playback/clipStore';
import { pause, seekFrame, stepFrames, togglePlay } from '../playback/playback';
import { operatorStop } from './operatorStop';
import { stopKeyDown, stopKeyUp } from '../safety/stopKeys';

// Global keys. STOP (Escape anywhere; Space unless focus is in a text field, list or editable
// content — renderer/src/safety/stopKeys.ts) is decided first, on the window in the capture phase,
// so no focused widget sees the key before it or can stop its propagation; a STOP key is
// swallowed, key-up included, so a focused button is not also "clicked" by the same Space press.
// Frame keys: ←/→ one frame, Shift+←/→ ten, Home/End, P play/pause.

/** Focus where the frame keys are left to the control (arrows move a caret, a select, a radio group). */
const isTextEntry = (t: EventTarget | null): boolean =>
  t instanceof HTMLInputElement
    ? t.type !== 'range' && t.type !== 'checkbox' && t.type !== 'button'
    : t instanceof HTMLTextAreaElement ||
      t instanceof HTMLSelectElement ||
      (t instanceof HTMLElement && t.isContentEditable);

export function useKeyboardShortcuts(): void {
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent): void => {
      const stop = stopKeyDown(e);
      if (stop.kind !== 'pass') {
        e.preventDefault();
        e.stopPropagation();
        if (stop.kind === 'stop') operatorStop(stop.source);
        return;
      }
      if (e.ctrlKey || e.metaKey || e.altKey || isTextEntry(e.target)) return;
      const clip = useClipStore.getState().loaded?.clip;
      switch (e.key) {
        case 'ArrowRight':
        case 'ArrowLeft': {
          e.preventDefault(); // also keeps a focused slider from stepping on its own
          const n = e.shiftKey ? 10 : 1;
          stepFrames(e.key === 'ArrowRight' ? n : -n);
          break;
        }
        case 'Home':
          e.preventDefault();
          pause();
          seekFrame(0);
          break;
        case 'End':
          e.preventDefault();
          pause();
          if (clip) seekFrame(clip.frameCount - 1);
          break;
        case 'p':
        case 'P':
          e.preventDefault();
          togglePlay();
          break;
      }
    };
    const onKeyUp = (e: KeyboardEvent): void => {
      if (stopKeyUp(e).kind === 'pass') return;
      e.preventDefault();
      e.stopPropagation();
    };
    window.addEventListener('keydown', onKeyDown, { capture: true });
    window.addEventListener('keyup', onKeyUp, { capture: true });
    return () => {
      window.removeEventListener('keydown', onKeyDown, { capture: true });
      window.removeEventListener('keyup', onKeyUp, { capture: true });
    };
  }, []);
}
