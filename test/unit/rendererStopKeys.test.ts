import { describe, expect, it } from 'vitest';
import { isEditableTarget, stopKeyDown, stopKeyUp, type StopKeyTarget } from '../../renderer/src/safety/stopKeys';

// The operator STOP keys (renderer/src/safety/stopKeys.ts). Escape stops from
// anywhere; Space stops only when focus is not in an editable control, where it types a space.

const SPACE = { key: ' ', code: 'Space' };
const ESCAPE = { key: 'Escape', code: 'Escape' };

const input = (type: string, extra: Partial<StopKeyTarget> = {}): StopKeyTarget => ({
  tagName: 'INPUT',
  type,
  isContentEditable: false,
  readOnly: false,
  ...extra,
});
const el = (tagName: string, extra: Partial<StopKeyTarget> = {}): StopKeyTarget => ({
  tagName,
  isContentEditable: false,
  ...extra,
});

/** Focus where Space types (or picks, in a select): no STOP from Space. */
const EDITABLE: [string, StopKeyTarget][] = [
  ['text input', input('text')],
  ['input without a type (text)', { tagName: 'INPUT', type: '' }],
  ['input of an unknown type (text in the browser)', input('bogus')],
  ['search input', input('search')],
  ['number input', input('number')],
  ['url input', input('url')],
  ['email input', input('email')],
  ['tel input', input('tel')],
  ['password input', input('password')],
  ['date input', input('date')],
  ['textarea', el('TEXTAREA', { readOnly: false })],
  ['select', el('SELECT')],
  ['contenteditable div', el('DIV', { isContentEditable: true })],
  ['span inside contenteditable', el('SPAN', { isContentEditable: true })],
  ['lower-case tag name (XHTML)', { tagName: 'input', type: 'TEXT' }],
];

/** Focus that is pressed, not typed into: Space is STOP. */
const NOT_EDITABLE: [string, unknown][] = [
  ['body', el('BODY')],
  ['button', el('BUTTON', { type: 'button' })],
  ['checkbox', input('checkbox')],
  ['radio', input('radio')],
  ['range slider', input('range')],
  ['submit input', input('submit')],
  ['file input', input('file')],
  ['color input', input('color')],
  ['read-only text input', input('text', { readOnly: true })],
  ['read-only textarea', el('TEXTAREA', { readOnly: true })],
  ['canvas', el('CANVAS')],
  ['contenteditable="false" div', el('DIV', { isContentEditable: false })],
  ['the window (no tag name)', {}],
  ['no target', null],
];

describe('STOP keys: Space while typing', () => {
  it.each(EDITABLE)('Space in a %s does not fire STOP and is left to the control', (_, target) => {
    expect(isEditableTarget(target)).toBe(true);
    expect(stopKeyDown({ ...SPACE, target })).toEqual({ kind: 'pass' });
    expect(stopKeyUp({ ...SPACE, target })).toEqual({ kind: 'pass' });
  });

  it('a space from a layout that reports only key " " (no code) or the old "Spacebar" is typed too', () => {
    expect(stopKeyDown({ key: ' ', code: '', target: input('text') })).toEqual({ kind: 'pass' });
    expect(stopKeyDown({ key: 'Spacebar', code: '', target: el('TEXTAREA') })).toEqual({ kind: 'pass' });
  });

  it('Shift+Space (a space too) in a text field does not fire', () => {
    expect(stopKeyDown(Object.assign({ ...SPACE, target: input('text') }, { shiftKey: true }))).toEqual({
      kind: 'pass',
    });
  });
});

describe('STOP keys: Escape from anywhere', () => {
  it.each([...EDITABLE, ...NOT_EDITABLE])('Escape in/on a %s fires STOP', (_, target) => {
    expect(stopKeyDown({ ...ESCAPE, target })).toEqual({ kind: 'stop', source: 'key:Escape' });
  });

  it('with any modifier held, Escape still fires STOP (and Space on a button)', () => {
    const mods = { shiftKey: true, ctrlKey: true, altKey: true, metaKey: true };
    expect(stopKeyDown(Object.assign({ ...ESCAPE, target: input('text') }, mods))).toEqual({
      kind: 'stop',
      source: 'key:Escape',
    });
    expect(stopKeyDown(Object.assign({ ...SPACE, target: el('BUTTON') }, mods))).toEqual({
      kind: 'stop',
      source: 'key:Space',
    });
  });

  it('the old "Esc" key name fires STOP too', () => {
    expect(stopKeyDown({ key: 'Esc', code: '', target: input('search') })).toEqual({
      kind: 'stop',
      source: 'key:Escape',
    });
  });
});

describe('STOP keys: Space outside text fields', () => {
  it.each(NOT_EDITABLE)(
    'Space on a %s fires STOP; its key-up is swallowed (a focused button is not clicked)',
    (_, target) => {
      expect(isEditableTarget(target)).toBe(false);
      expect(stopKeyDown({ ...SPACE, target })).toEqual({ kind: 'stop', source: 'key:Space' });
      expect(stopKeyUp({ ...SPACE, target })).toEqual({ kind: 'swallow' });
    },
  );
});

describe('STOP keys: held keys and other keys', () => {
  it('auto-repeat of a STOP key is swallowed but does not fire STOP again', () => {
    expect(stopKeyDown({ ...ESCAPE, repeat: true, target: el('BODY') })).toEqual({ kind: 'swallow' });
    expect(stopKeyDown({ ...SPACE, repeat: true, target: el('BUTTON') })).toEqual({ kind: 'swallow' });
    expect(stopKeyDown({ ...ESCAPE, repeat: true, target: input('text') })).toEqual({ kind: 'swallow' });
    // A held Space in a text field keeps typing spaces.
    expect(stopKeyDown({ ...SPACE, repeat: true, target: input('text') })).toEqual({ kind: 'pass' });
  });

  it('negative control: other keys never fire STOP, wherever focus is', () => {
    const keys = [
      { key: 'a', code: 'KeyA' },
      { key: 'Enter', code: 'Enter' },
      { key: 'Tab', code: 'Tab' },
      { key: 'ArrowRight', code: 'ArrowRight' },
      { key: 'p', code: 'KeyP' },
      { key: 'Backspace', code: 'Backspace' },
    ];
    for (const k of keys) {
      for (const [, target] of [...EDITABLE, ...NOT_EDITABLE]) {
        expect(stopKeyDown({ ...k, target })).toEqual({ kind: 'pass' });
        expect(stopKeyUp({ ...k, target })).toEqual({ kind: 'pass' });
      }
    }
  });

  it('the key-up of Escape is left alone', () => {
    expect(stopKeyUp({ ...ESCAPE, target: el('BODY') })).toEqual({ kind: 'pass' });
  });
});
