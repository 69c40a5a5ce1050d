/**
 * Saved system prompts as kept in localStorage: damaged entries left out, names checked (not
 * empty, not too long, not taken), and every change heard by the tab.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  addPrompt,
  deletePrompt,
  nameProblem,
  parseSavedPrompts,
  renamePrompt,
  savedPrompts,
  watchSavedPrompts,
} from '../../../../src/app/shared/saved-prompts';

describe('parseSavedPrompts', () => {
  it('is empty for nothing stored, a damaged entry, or one that is not a list', () => {
    for (const raw of [null, '', '{', '{}', '42', '"x"'])
      expect(parseSavedPrompts(raw)).toEqual([]);
  });

  it('keeps the well-formed prompts and leaves out the others', () => {
    const good = { id: 'a', name: 'Pirate', text: 'Arr.' };
    expect(
      parseSavedPrompts(JSON.stringify([good, null, { id: 'b', name: 3, text: '' }, 'x'])),
    ).toEqual([good]);
  });
});

describe('the library', () => {
  let store: Map<string, string>;
  let heard: number;
  let stop: () => void;

  beforeEach(() => {
    store = new Map();
    heard = 0;
    const target = new EventTarget();
    vi.stubGlobal('localStorage', {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => void store.set(k, v),
    });
    vi.stubGlobal('addEventListener', target.addEventListener.bind(target));
    vi.stubGlobal('removeEventListener', target.removeEventListener.bind(target));
    vi.stubGlobal('dispatchEvent', target.dispatchEvent.bind(target));
    stop = watchSavedPrompts(() => (heard += 1));
  });

  afterEach(() => {
    stop();
    vi.unstubAllGlobals();
  });

  it('adds, renames and deletes prompts, and the tab hears each change', () => {
    const pirate = addPrompt('  Pirate ', 'Answer like a pirate.');
    const brief = addPrompt('Brief', 'Answer in one line.');
    expect(savedPrompts().map((p) => p.name)).toEqual(['Pirate', 'Brief']);
    renamePrompt(pirate.id, 'Captain');
    deletePrompt(brief.id);
    expect(savedPrompts()).toEqual([
      { id: pirate.id, name: 'Captain', text: 'Answer like a pirate.' },
    ]);
    expect(heard).toBe(4);
  });

  it('refuses an empty, overlong or taken name, but a prompt may keep its own', () => {
    const pirate = addPrompt('Pirate', 'Arr.');
    expect(nameProblem('  ')).toBe('Give the prompt a name.');
    expect(nameProblem('x'.repeat(61))).toMatch(/at most 60/);
    expect(nameProblem('pirate')).toBe('There is a prompt named “pirate” already.');
    expect(nameProblem('PIRATE', pirate.id)).toBeNull();
    expect(nameProblem('Brief')).toBeNull();
  });
});
