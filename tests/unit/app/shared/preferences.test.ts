/**
 * The app's preferences as kept in localStorage: each field checked on its own, so a damaged or
 * older entry loses only what is wrong in it; a change is kept, applied and heard.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_PREFERENCES,
  isSendKey,
  newSettings,
  parsePreferences,
  preferences,
  PREFERENCES_EVENT,
  setPreferences,
} from '../../../../src/app/shared/preferences';

const KEY = 'hearth:preferences';

describe('parsePreferences', () => {
  it('gives the defaults for nothing stored, a damaged entry, or one that is not an object', () => {
    for (const raw of [null, '', '{', 'null', '42', '"dark"', 'true']) {
      expect(parsePreferences(raw)).toEqual(DEFAULT_PREFERENCES);
    }
    expect(DEFAULT_PREFERENCES).toEqual({
      theme: 'system',
      defaultModel: null,
      defaultSystem: '',
      defaultSampling: {
        temperature: 0.7,
        max_tokens: null,
        top_p: null,
        seed: null,
        stop: [],
        context_tokens: null,
      },
      sendKey: 'enter',
    });
  });

  it('keeps each valid field and drops each wrong one on its own', () => {
    const stored = {
      theme: 'dark',
      defaultModel: 'Qwen2.5-0.5B-Instruct-q4f16_1-MLC',
      defaultSystem: 'Answer briefly.',
      defaultSampling: {
        temperature: 1,
        max_tokens: 256,
        top_p: 0.9,
        seed: 42,
        stop: ['END'],
        context_tokens: 4096,
      },
      sendKey: 'mod-enter',
    };
    expect(parsePreferences(JSON.stringify(stored))).toEqual(stored);
    expect(parsePreferences(JSON.stringify({ theme: 'light' }))).toEqual({
      ...DEFAULT_PREFERENCES,
      theme: 'light',
    });
    expect(
      parsePreferences(
        JSON.stringify({ ...stored, theme: 'sepia', defaultModel: 7, sendKey: 'shift-enter' }),
      ),
    ).toEqual({
      ...DEFAULT_PREFERENCES,
      defaultSystem: 'Answer briefly.',
      defaultSampling: stored.defaultSampling,
    });
    expect(
      parsePreferences(JSON.stringify({ ...stored, defaultSystem: ['x'] })).defaultSystem,
    ).toBe('');
    expect(parsePreferences(JSON.stringify({ defaultModel: null })).defaultModel).toBeNull();
    // The parameters, each on its own: a wrong top P goes, the seed stays.
    expect(
      parsePreferences(JSON.stringify({ defaultSampling: { top_p: 3, seed: 9 } })).defaultSampling,
    ).toEqual({ ...DEFAULT_PREFERENCES.defaultSampling, seed: 9 });
  });
});

describe('newSettings', () => {
  it('starts a conversation with the preferred system prompt and parameters, its own copy', () => {
    const prefs = parsePreferences(
      JSON.stringify({ defaultSystem: 'Be terse.', defaultSampling: { top_p: 0.8, stop: ['x'] } }),
    );
    const settings = newSettings(prefs);
    expect(settings).toEqual({
      ...DEFAULT_PREFERENCES.defaultSampling,
      system: 'Be terse.',
      top_p: 0.8,
      stop: ['x'],
    });
    settings.stop.push('y');
    expect(prefs.defaultSampling.stop).toEqual(['x']);
  });
});

describe('preferences in storage', () => {
  let store: Map<string, string>;
  let events: Event[];
  const dataset: Record<string, string> = {};

  beforeEach(() => {
    store = new Map();
    events = [];
    for (const k of Object.keys(dataset)) delete dataset[k];
    vi.stubGlobal('localStorage', {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => void store.set(k, v),
    });
    vi.stubGlobal('document', { documentElement: { dataset } });
    vi.stubGlobal('dispatchEvent', (e: Event) => events.push(e));
  });

  afterEach(() => vi.unstubAllGlobals());

  it('keeps a change with the other fields, puts the theme on the page and tells the tab', () => {
    setPreferences({ defaultSystem: 'Be terse.' });
    const next = setPreferences({ theme: 'dark' });
    expect(next).toEqual({ ...DEFAULT_PREFERENCES, defaultSystem: 'Be terse.', theme: 'dark' });
    expect(JSON.parse(store.get(KEY)!)).toEqual(next);
    expect(preferences()).toEqual(next);
    expect(dataset.theme).toBe('dark');
    expect(events.map((e) => e.type)).toEqual([PREFERENCES_EVENT, PREFERENCES_EVENT]);
    expect((events[1] as CustomEvent).detail).toEqual(next);
    // System: the page follows the system's choice again.
    setPreferences({ theme: 'system' });
    expect(dataset.theme).toBeUndefined();
  });

  it('gives the defaults when storage is blocked, and a change then holds for the call only', () => {
    vi.stubGlobal('localStorage', {
      getItem: () => {
        throw new Error('SecurityError');
      },
      setItem: () => {
        throw new Error('SecurityError');
      },
    });
    expect(preferences()).toEqual(DEFAULT_PREFERENCES);
    expect(setPreferences({ theme: 'light' }).theme).toBe('light');
    expect(dataset.theme).toBe('light');
  });
});

describe('isSendKey', () => {
  const key = (init: Partial<KeyboardEvent>) =>
    ({
      key: 'Enter',
      shiftKey: false,
      ctrlKey: false,
      metaKey: false,
      isComposing: false,
      keyCode: 13,
      ...init,
    }) as KeyboardEvent;

  it('Enter sends and Shift+Enter does not, under "enter"', () => {
    expect(isSendKey(key({}), 'enter')).toBe(true);
    expect(isSendKey(key({ shiftKey: true }), 'enter')).toBe(false);
    expect(isSendKey(key({ key: 'a' }), 'enter')).toBe(false);
  });

  it('only Ctrl/⌘+Enter sends under "mod-enter"', () => {
    expect(isSendKey(key({}), 'mod-enter')).toBe(false);
    expect(isSendKey(key({ ctrlKey: true }), 'mod-enter')).toBe(true);
    expect(isSendKey(key({ metaKey: true }), 'mod-enter')).toBe(true);
  });

  it('never sends while an input method is composing', () => {
    expect(isSendKey(key({ isComposing: true }), 'enter')).toBe(false);
    expect(isSendKey(key({ keyCode: 229, ctrlKey: true }), 'mod-enter')).toBe(false);
  });
});
