// Which key presses are the operator's STOP (DESIGN §6: a stop control bound to a key that typing
// cannot fire). Pure: it reads only plain fields of the event and its target, so it is unit-tested
// without a DOM (test/unit/rendererStopKeys.test.ts) and useKeyboardShortcuts applies it to every
// key event in the window's capture phase, before any focused widget sees the key.
//
//   Escape — STOP from anywhere: text fields, selects, buttons, the page itself; with any
//            modifier. Typing never produces it. Safety wins over whatever Escape would have
//            done there (clear a search field, close a popup).
//   Space  — STOP when focus is not in an editable control. In a text-like <input> (text, search,
//            number, url, …), a <textarea>, a <select> or contenteditable content it is left to
//            the control (it types a space), and STOP is not fired. On a button, checkbox, radio,
//            slider or the page it fires STOP and the press is swallowed (key-down and key-up),
//            so the focused button is not also clicked by it.
//   Held keys — auto-repeat key-downs are swallowed where the first press was a STOP but do not
//            fire STOP again: one press, one stop request (no stream of trial.stop calls and stop
//            events while the key is held).

/** The key hint shown on the STOP button. */
export const STOP_KEYS_LABEL = 'Esc / Space';

/** The STOP button's tooltip: which keys stop, and where Space does not. */
export const STOP_KEYS_TITLE =
  'STOP everything that moves or runs. Esc works everywhere, also while typing; Space works unless the cursor is in a text field or list (there it types a space).';

export type StopKeySource = 'key:Escape' | 'key:Space';

/** What the handler does with one key event. */
export type StopKeyAction =
  /** Fire the operator STOP; preventDefault + stopPropagation. */
  | { kind: 'stop'; source: StopKeySource }
  /** A STOP key that must not act on the focused control (a repeat, a key-up): preventDefault + stopPropagation, no STOP. */
  | { kind: 'swallow' }
  /** Not a STOP key here: leave the event alone. */
  | { kind: 'pass' };

/** The fields of a focused element this decision reads (a DOM element has all of them). */
export interface StopKeyTarget {
  tagName?: string;
  type?: string;
  isContentEditable?: boolean;
  readOnly?: boolean;
}

/** The fields of a KeyboardEvent this decision reads. */
export interface StopKeyEvent {
  key: string;
  code: string;
  repeat?: boolean;
  target: unknown;
}

/** <input> types that are pressed, not typed into: Space activates them, so it is STOP there. */
const NON_TEXT_INPUT_TYPES = new Set([
  'button',
  'submit',
  'reset',
  'checkbox',
  'radio',
  'range',
  'file',
  'image',
  'color',
  'hidden',
]);

const asTarget = (t: unknown): StopKeyTarget | null =>
  t !== null && typeof t === 'object' ? (t as StopKeyTarget) : null;

/**
 * True when Space belongs to the focused control: a text-like input that is not read-only (any
 * type but the button-like ones — an unknown type is a text field, as in the browser), a
 * textarea, a select, or contenteditable content.
 */
export function isEditableTarget(target: unknown): boolean {
  const t = asTarget(target);
  if (!t) return false;
  if (t.isContentEditable === true) return true;
  const tag = typeof t.tagName === 'string' ? t.tagName.toUpperCase() : '';
  if (tag === 'SELECT') return true;
  if (tag === 'TEXTAREA') return t.readOnly !== true;
  if (tag === 'INPUT') {
    const type = typeof t.type === 'string' && t.type !== '' ? t.type.toLowerCase() : 'text';
    return !NON_TEXT_INPUT_TYPES.has(type) && t.readOnly !== true;
  }
  return false;
}

const isEscape = (e: StopKeyEvent): boolean => e.key === 'Escape' || e.key === 'Esc' || e.code === 'Escape';
const isSpace = (e: StopKeyEvent): boolean => e.code === 'Space' || e.key === ' ' || e.key === 'Spacebar';

/** The decision for a key-down (window, capture phase). */
export function stopKeyDown(e: StopKeyEvent): StopKeyAction {
  let source: StopKeySource;
  if (isEscape(e)) source = 'key:Escape';
  else if (isSpace(e) && !isEditableTarget(e.target)) source = 'key:Space';
  else return { kind: 'pass' };
  return e.repeat === true ? { kind: 'swallow' } : { kind: 'stop', source };
}

/** The decision for a key-up: a Space released outside a text field is swallowed (a focused button activates on key-up). */
export function stopKeyUp(e: StopKeyEvent): StopKeyAction {
  return isSpace(e) && !isEditableTarget(e.target) ? { kind: 'swallow' } : { kind: 'pass' };
}
