/**
 * @module
 * Saved system prompts: a small library the user keeps in Settings → Preferences and picks from
 * in a conversation's Chat options. Kept in `localStorage` beside the preferences (small, read at
 * once, and every tab hears a change through the `storage` event).
 */

export interface SavedPrompt {
  id: string;
  name: string;
  text: string;
}

const KEY = 'hearth:saved-prompts';
/** Fired on `window` when the library changes in this tab (other tabs hear `storage`). */
const EVENT = 'hearth-saved-prompts';
/** A name longer than this would not fit the picker. */
export const MAX_NAME = 60;

/** What was stored, each entry checked: a damaged one is left out, the others kept. */
export function parseSavedPrompts(raw: string | null): SavedPrompt[] {
  let value: unknown;
  try {
    value = raw === null ? [] : JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  return value.filter(
    (p): p is SavedPrompt =>
      p !== null &&
      typeof p === 'object' &&
      typeof (p as SavedPrompt).id === 'string' &&
      typeof (p as SavedPrompt).name === 'string' &&
      typeof (p as SavedPrompt).text === 'string',
  );
}

export function savedPrompts(): SavedPrompt[] {
  try {
    return parseSavedPrompts(localStorage.getItem(KEY));
  } catch {
    return []; // storage blocked: none, for this page
  }
}

function store(prompts: SavedPrompt[]): void {
  try {
    localStorage.setItem(KEY, JSON.stringify(prompts));
  } catch {
    // Storage blocked or full: the change holds until the page is left.
  }
  dispatchEvent(new CustomEvent(EVENT));
}

/** Why `name` cannot name a prompt (other than the one with id `except`), or null. */
export function nameProblem(name: string, except?: string): string | null {
  const trimmed = name.trim();
  if (trimmed === '') return 'Give the prompt a name.';
  if (trimmed.length > MAX_NAME) return `A name has at most ${MAX_NAME} characters.`;
  const taken = savedPrompts().some(
    (p) => p.id !== except && p.name.toLowerCase() === trimmed.toLowerCase(),
  );
  return taken ? `There is a prompt named “${trimmed}” already.` : null;
}

/** Adds a prompt (its name checked with `nameProblem` first). */
export function addPrompt(name: string, text: string): SavedPrompt {
  const prompt = { id: crypto.randomUUID(), name: name.trim(), text };
  store([...savedPrompts(), prompt]);
  return prompt;
}

export function renamePrompt(id: string, name: string): void {
  store(savedPrompts().map((p) => (p.id === id ? { ...p, name: name.trim() } : p)));
}

export function deletePrompt(id: string): void {
  store(savedPrompts().filter((p) => p.id !== id));
}

/** Calls `listener` with the library whenever it changes, in this tab or another; returns the unsubscribe. */
export function watchSavedPrompts(listener: (prompts: SavedPrompt[]) => void): () => void {
  const inTab = () => listener(savedPrompts());
  const otherTab = (event: StorageEvent) => {
    if (event.key === KEY || event.key === null) listener(savedPrompts());
  };
  addEventListener(EVENT, inTab);
  addEventListener('storage', otherTab);
  return () => {
    removeEventListener(EVENT, inTab);
    removeEventListener('storage', otherTab);
  };
}
