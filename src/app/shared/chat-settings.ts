/**
 * @module
 * A conversation's parameters as the user types them: each field's range as the API takes it,
 * the error said beside a field whose text is out of it, and the settings read back from storage
 * or an import field by field (an older conversation, stored before a field existed, gets its
 * default). Only values that pass are ever kept, so a request is never sent with a wrong one.
 * Pure: no DOM, no storage.
 */
import { typedNumber } from './typed-number';

/** The settings of one conversation (conversation.ts re-exports them). */
export interface ConversationSettings {
  system: string;
  temperature: number;
  /** `max_completion_tokens`; null for the model's own limit. */
  max_tokens: number | null;
  /** `top_p`; null for the model's own. */
  top_p: number | null;
  /** `seed`; null for a random one each reply. */
  seed: number | null;
  /** `stop`: up to four strings; the reply ends before the first one it writes. */
  stop: string[];
  /**
   * How much of the conversation is sent, in (estimated) tokens: the latest messages that fit,
   * the system prompt always. A model's own window is fixed when it loads; null sends it all.
   */
  context_tokens: number | null;
}

/** The parameters of a conversation other than its system prompt (Settings holds defaults). */
export type Sampling = Omit<ConversationSettings, 'system'>;

/** A new conversation's parameters, unless Settings says otherwise. */
export const DEFAULT_SAMPLING: Readonly<Sampling> = {
  temperature: 0.7,
  max_tokens: null,
  top_p: null,
  seed: null,
  stop: [],
  context_tokens: null,
};

/** The parameters typed as numbers. */
export type NumberSetting = 'temperature' | 'top_p' | 'max_tokens' | 'seed' | 'context_tokens';

/** The API's `stop` takes at most four strings. */
export const MAX_STOPS = 4;

interface NumberRule {
  min: number;
  max: number;
  integer: boolean;
  /** Whether the field may be empty (null: not sent, the model's own or a random value). */
  optional: boolean;
  /** The range in words, said when a value falls outside it. */
  range: string;
}

/** Each numeric field's range: the API's own (docs/api.md's field table), or the chat's. */
export const NUMBER_RULES: Record<NumberSetting, NumberRule> = {
  temperature: {
    min: 0,
    max: 2,
    integer: false,
    optional: false,
    range: 'Temperature is from 0 to 2.',
  },
  top_p: {
    min: 0,
    max: 1,
    integer: false,
    optional: true,
    range: "Top P is from 0 to 1 (empty: the model's own).",
  },
  max_tokens: {
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    integer: true,
    optional: true,
    range: 'The maximum length is a whole number of tokens, 1 or more (empty: no limit).',
  },
  // Engines take 32 bits of a seed (llama.cpp's is a uint32): larger ones would only wrap.
  seed: {
    min: 0,
    max: 2 ** 32 - 1,
    integer: true,
    optional: true,
    range: 'The seed is a whole number from 0 to 4294967295 (empty: random).',
  },
  // Below a few dozen tokens nothing but the last message would ever fit.
  context_tokens: {
    min: 128,
    max: 1_048_576,
    integer: true,
    optional: true,
    range: 'The context limit is a whole number of tokens from 128 to 1048576 (empty: no limit).',
  },
};

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * The value of numeric field `key` typed as `raw`, or the error to say beside it. `badInput`: the
 * browser could not read the field's text as a number (its `validity.badInput`).
 */
export function checkNumber(
  key: NumberSetting,
  raw: string,
  badInput = false,
): Checked<number | null> {
  const rule = NUMBER_RULES[key];
  if (raw.trim() === '' && !badInput) {
    return rule.optional ? { ok: true, value: null } : { ok: false, error: rule.range };
  }
  const value = badInput ? null : typedNumber(raw);
  if (value === null || !inRange(key, value)) return { ok: false, error: rule.range };
  return { ok: true, value };
}

function inRange(key: NumberSetting, value: number): boolean {
  const rule = NUMBER_RULES[key];
  return (
    Number.isFinite(value) &&
    value >= rule.min &&
    value <= rule.max &&
    (!rule.integer || Number.isInteger(value))
  );
}

/**
 * Stop sequences as typed: one a line, `\n` and `\t` written out for a line break and a tab (and
 * `\\` for a backslash), empty lines left out; at most four, as the API takes.
 */
export function parseStops(text: string): Checked<string[]> {
  const stops = text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) =>
      line.replace(/\\(\\|n|t)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : '\\')),
    );
  if (stops.length > MAX_STOPS) {
    return {
      ok: false,
      error: `At most ${MAX_STOPS} stop sequences, one a line (there are ${stops.length}).`,
    };
  }
  return { ok: true, value: stops };
}

/** Stop sequences as the field shows them: the reverse of `parseStops`. */
export function stopsText(stops: readonly string[]): string {
  return stops
    .map((s) => s.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('\t', '\\t'))
    .join('\n');
}

/** A stored value of numeric field `key` if it is one the field takes, else `fallback`. */
function storedNumber(key: NumberSetting, value: unknown, fallback: number | null) {
  if (value === null && NUMBER_RULES[key].optional) return null;
  return typeof value === 'number' && inRange(key, value) ? value : fallback;
}

/**
 * Parameters read back from storage or a file, each field checked on its own: a missing or wrong
 * one (a conversation stored before it existed, a damaged entry) takes its default.
 */
export function parseSampling(
  raw: unknown,
  defaults: Readonly<Sampling> = DEFAULT_SAMPLING,
): Sampling {
  const r = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const stop =
    Array.isArray(r.stop) &&
    r.stop.length <= MAX_STOPS &&
    r.stop.every((s) => typeof s === 'string' && s !== '')
      ? (r.stop as string[])
      : defaults.stop;
  return {
    temperature:
      storedNumber('temperature', r.temperature, defaults.temperature) ?? defaults.temperature,
    max_tokens: storedNumber('max_tokens', r.max_tokens, defaults.max_tokens),
    top_p: storedNumber('top_p', r.top_p, defaults.top_p),
    seed: storedNumber('seed', r.seed, defaults.seed),
    stop: [...stop],
    context_tokens: storedNumber('context_tokens', r.context_tokens, defaults.context_tokens),
  };
}

/** A conversation's settings, each field checked (see `parseSampling`), the system prompt too. */
export function withDefaults(raw: unknown): ConversationSettings {
  const r = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  return { system: typeof r.system === 'string' ? r.system : '', ...parseSampling(r) };
}
