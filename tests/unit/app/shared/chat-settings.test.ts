/**
 * A conversation's parameters as typed: each field's range, the error said beside a value out of
 * it, stop sequences one a line, and settings read back field by field (older conversations).
 */
import { describe, expect, it } from 'vitest';
import {
  checkNumber,
  parseSampling,
  parseStops,
  stopsText,
  withDefaults,
} from '../../../../src/app/shared/chat-settings';
import { DEFAULT_SETTINGS } from '../../../../src/app/conversations/conversation';

describe('a number typed in a field', () => {
  it.each([
    ['temperature', '0', 0],
    ['temperature', '2', 2],
    ['temperature', '0.35', 0.35],
    ['top_p', '0', 0],
    ['top_p', '1', 1],
    ['top_p', '', null],
    ['seed', '0', 0],
    ['seed', '4294967295', 4294967295],
    ['seed', '', null],
    ['max_tokens', '1', 1],
    ['max_tokens', '', null],
    ['context_tokens', '128', 128],
    ['context_tokens', '', null],
  ] as const)('%s %j is kept as %j', (key, raw, value) => {
    expect(checkNumber(key, raw)).toEqual({ ok: true, value });
  });

  it.each([
    ['temperature', '2.5', /from 0 to 2/],
    ['temperature', '-1', /from 0 to 2/],
    ['temperature', '', /from 0 to 2/],
    ['top_p', '1.5', /Top P is from 0 to 1/],
    ['seed', '-1', /from 0 to 4294967295/],
    ['seed', '4294967296', /from 0 to 4294967295/],
    ['seed', '1.5', /whole number/],
    ['max_tokens', '0', /1 or more/],
    ['context_tokens', '64', /from 128 to 1048576/],
    ['context_tokens', '4096.5', /whole number/],
  ] as const)('%s %j is refused, saying the range', (key, raw, error) => {
    const checked = checkNumber(key, raw);
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.error).toMatch(error);
  });

  it('is refused when the browser could not read it as a number, even if its value is empty', () => {
    expect(checkNumber('top_p', '', true)).toMatchObject({ ok: false });
    expect(checkNumber('top_p', 'abc')).toMatchObject({ ok: false });
  });
});

describe('stop sequences', () => {
  it('are one a line, empty lines left out, with \\n, \\t and \\\\ for a line break, a tab and a backslash', () => {
    expect(parseStops('END\n\nUser:\\n\n\\t|\\\\n')).toEqual({
      ok: true,
      value: ['END', 'User:\n', '\t|\\n'],
    });
    expect(parseStops('')).toEqual({ ok: true, value: [] });
  });

  it('are at most four, as the API takes', () => {
    expect(parseStops('a\nb\nc\nd')).toMatchObject({ ok: true });
    expect(parseStops('a\nb\nc\nd\ne')).toEqual({
      ok: false,
      error: 'At most 4 stop sequences, one a line (there are 5).',
    });
  });

  it('show as they are typed', () => {
    const stops = ['END', 'User:\n', '\t|\\n'];
    expect(parseStops(stopsText(stops))).toEqual({ ok: true, value: stops });
  });
});

describe('settings read back', () => {
  it('give an older conversation, stored before the new fields, their defaults', () => {
    expect(withDefaults({ system: 'Be kind.', temperature: 0.2, max_tokens: 100 })).toEqual({
      ...DEFAULT_SETTINGS,
      system: 'Be kind.',
      temperature: 0.2,
      max_tokens: 100,
    });
  });

  it('keep each valid field and put the default in place of each wrong one', () => {
    const good = {
      temperature: 1.2,
      max_tokens: 64,
      top_p: 0.9,
      seed: 7,
      stop: ['END'],
      context_tokens: 4096,
    };
    expect(parseSampling(good)).toEqual(good);
    expect(
      parseSampling({
        temperature: 3,
        max_tokens: 0,
        top_p: '0.9',
        seed: -1,
        stop: ['a', 'b', 'c', 'd', 'e'],
        context_tokens: 1.5,
      }),
    ).toEqual(parseSampling({}));
    expect(parseSampling({ stop: ['', 'x'] }).stop).toEqual([]);
    for (const raw of [null, undefined, 42, 'x', []]) {
      const { system: _, ...sampling } = DEFAULT_SETTINGS;
      expect(parseSampling(raw)).toEqual(sampling);
    }
  });

  it('fall back to the given defaults (Settings) rather than the built-in ones', () => {
    const defaults = { ...parseSampling({}), top_p: 0.8, seed: 3 };
    expect(parseSampling({ temperature: 1 }, defaults)).toEqual({ ...defaults, temperature: 1 });
  });
});
