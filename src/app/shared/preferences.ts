/**
 * @module
 * The app's preferences (Settings → Preferences): theme, the model, system prompt and parameters
 * a new conversation starts with, and which key sends a message. Kept in `localStorage` — they are
 * small, read at boot before anything paints, and every tab hears a change through the `storage`
 * event. Conversations keep their own model and options; these are only where new ones start.
 */

import { parseSampling, type ConversationSettings, type Sampling } from './chat-settings';

export type Theme = 'system' | 'light' | 'dark';
/** `enter`: Enter sends, Shift+Enter is a new line. `mod-enter`: Ctrl/⌘+Enter sends, Enter is a new line. */
export type SendKey = 'enter' | 'mod-enter';

export interface Preferences {
  theme: Theme;
  /** The model a new conversation starts with; null: the one on the GPU, else one on the device. */
  defaultModel: string | null;
  /** The system prompt a new conversation starts with. */
  defaultSystem: string;
  /** The parameters a new conversation starts with (temperature, top P, seed, stop…). */
  defaultSampling: Sampling;
  sendKey: SendKey;
}

export const DEFAULT_PREFERENCES: Preferences = {
  theme: 'system',
  defaultModel: null,
  defaultSystem: '',
  defaultSampling: parseSampling({}),
  sendKey: 'enter',
};

const KEY = 'hearth:preferences';
/** Fired on `window` when the preferences change, in this tab or another. */
export const PREFERENCES_EVENT = 'hearth-preferences';

/** What was stored, each field checked: a damaged or older entry falls back field by field. */
export function parsePreferences(raw: string | null): Preferences {
  let stored: Record<string, unknown> = {};
  try {
    const value: unknown = raw === null ? {} : JSON.parse(raw);
    if (value && typeof value === 'object') stored = value as Record<string, unknown>;
  } catch {
    // A damaged entry: the defaults.
  }
  const d = DEFAULT_PREFERENCES;
  return {
    theme: stored.theme === 'light' || stored.theme === 'dark' ? stored.theme : d.theme,
    defaultModel: typeof stored.defaultModel === 'string' ? stored.defaultModel : d.defaultModel,
    defaultSystem:
      typeof stored.defaultSystem === 'string' ? stored.defaultSystem : d.defaultSystem,
    defaultSampling: parseSampling(stored.defaultSampling),
    sendKey: stored.sendKey === 'mod-enter' ? 'mod-enter' : d.sendKey,
  };
}

function read(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null; // storage blocked: the defaults, for this page
  }
}

export function preferences(): Preferences {
  return parsePreferences(read());
}

/** Changes some preferences; applies the theme and tells this tab (other tabs hear `storage`). */
export function setPreferences(patch: Partial<Preferences>): Preferences {
  const next = { ...preferences(), ...patch };
  try {
    localStorage.setItem(KEY, JSON.stringify(next));
  } catch {
    // Storage blocked or full: the change holds for this page only.
  }
  applyTheme(next.theme);
  dispatchEvent(new CustomEvent(PREFERENCES_EVENT, { detail: next }));
  return next;
}

/** Puts the theme on the document (`data-theme`; `system` follows the system's choice). */
export function applyTheme(theme: Theme = preferences().theme): void {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

/** Applies the stored theme, and follows changes made in other tabs. Call once at boot. */
export function watchPreferences(): void {
  applyTheme();
  window.addEventListener('storage', (event: StorageEvent) => {
    if (event.key !== KEY) return;
    const next = parsePreferences(event.newValue);
    applyTheme(next.theme);
    dispatchEvent(new CustomEvent(PREFERENCES_EVENT, { detail: next }));
  });
}

/** The settings a new conversation starts with: the preferred system prompt and parameters. */
export function newSettings(p: Preferences = preferences()): ConversationSettings {
  return { system: p.defaultSystem, ...p.defaultSampling, stop: [...p.defaultSampling.stop] };
}

/** Whether a key press sends the message, under the preferred send key. */
export function isSendKey(event: KeyboardEvent, sendKey: SendKey = preferences().sendKey): boolean {
  // An input method composing (Japanese, Chinese…) uses Enter to pick its text: not to send.
  if (event.key !== 'Enter' || event.isComposing || event.keyCode === 229) return false;
  if (sendKey === 'enter') return !event.shiftKey;
  return event.ctrlKey || event.metaKey;
}
