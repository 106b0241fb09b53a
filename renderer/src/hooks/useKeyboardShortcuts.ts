import { useEffect } from 'react';
import { pause, seekFrame, stepFrames, togglePlay } from '../playback/playback';
import { operatorStop } from '../safety/operatorStop';
import { useClipStore } from '../stores/clipStore';

// Global keys. STOP (Space, Escape) is handled first, in the capture phase, whatever has focus,
// and also swallows the key-up so a focused button is not "clicked" by the same Space press.
// One exception: a text field marked data-stop-keys="escape" (the reset note a human types)
// takes Space as a space; Escape still stops there.
// Frame keys: ←/→ one frame, Shift+←/→ ten, Home/End, P play/pause.

const isTextEntry = (t: EventTarget | null): boolean =>
  t instanceof HTMLInputElement ? t.type !== 'range' && t.type !== 'checkbox' && t.type !== 'button' : t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement;

/** A text field where Space types a space (Escape remains STOP). */
const spaceTypes = (t: EventTarget | null): boolean => t instanceof HTMLElement && t.dataset.stopKeys === 'escape' && isTextEntry(t);

export function useKeyboardShortcuts(): void {
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent): void => {
      if (e.code === 'Space' && spaceTypes(e.target)) return;
      if (e.code === 'Space' || e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        if (!e.repeat) operatorStop(e.key === 'Escape' ? 'key:Escape' : 'key:Space');
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
      if (e.code === 'Space' && !spaceTypes(e.target)) e.preventDefault();
    };
    window.addEventListener('keydown', onKeyDown, { capture: true });
    window.addEventListener('keyup', onKeyUp, { capture: true });
    return () => {
      window.removeEventListener('keydown', onKeyDown, { capture: true });
      window.removeEventListener('keyup', onKeyUp, { capture: true });
    };
  }, []);
}
