/**
 * @module
 * Stop strings, held back and cut, the same for every engine. An engine that trims a matched
 * stop string only from its final text (WebLLM 0.2.86 does) has already streamed the start of
 * it by the time it matches; so tokens whose text could be the start of a stop string wait here
 * until the next token settles it, and the end of the reply says how much the engine took back.
 */
import type { Token } from './backend';

const textOf = (token: Token): string => (typeof token === 'string' ? token : token.text);

/** `token` with other text, its flags and logprobs kept (logprobs stay with its first piece). */
function withText(token: Token, text: string, keepLogprobs = true): Token {
  if (typeof token === 'string') return text;
  const { logprobs, ...rest } = token;
  return keepLogprobs && logprobs ? { ...rest, text, logprobs } : { ...rest, text };
}

/** The length of the longest end of `text` that is the start of one of `stops`. */
function partialStopAtEnd(text: string, stops: readonly string[]): number {
  let longest = 0;
  for (const stop of stops) {
    for (let n = Math.min(stop.length - 1, text.length); n > longest; n -= 1) {
      if (text.endsWith(stop.slice(0, n))) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}

/** Holds back text that may be the start of a stop string; cuts the reply at a whole one. */
export class StopFilter {
  readonly #stops: readonly string[];
  #held: Token[] = [];
  #stopped = false;

  constructor(stops: readonly string[] | undefined) {
    this.#stops = (stops ?? []).filter((s) => s !== '');
  }

  /** Whether there are stop strings to watch for at all (when not, `push` holds nothing). */
  get holds(): boolean {
    return this.#stops.length > 0;
  }

  /** Whether a whole stop string was seen: the reply ends there, whatever follows is dropped. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** The tokens that can go out now, of those held and `tokens`. */
  push(tokens: readonly Token[]): Token[] {
    if (this.#stopped) return [];
    if (this.#stops.length === 0) return [...tokens];
    this.#held.push(...tokens);
    const text = this.#held.map(textOf).join('');
    let cut = -1;
    for (const stop of this.#stops) {
      const at = text.indexOf(stop);
      if (at !== -1 && (cut === -1 || at < cut)) cut = at;
    }
    if (cut !== -1) {
      this.#stopped = true;
      return this.#take(cut, true);
    }
    return this.#take(text.length - partialStopAtEnd(text, this.#stops), false);
  }

  /**
   * What is still held, at the end of the reply, less its last `retract` characters: the start
   * of a stop string that the engine matched and took back from its own text.
   */
  end(retract = 0): Token[] {
    if (this.#stopped) return [];
    const text = this.#held.map(textOf).join('');
    return this.#take(Math.max(0, text.length - retract), true);
  }

  /** Releases the first `length` characters held; the rest stays held, or is dropped. */
  #take(length: number, dropRest: boolean): Token[] {
    const out: Token[] = [];
    let left = length;
    let i = 0;
    for (; i < this.#held.length; i += 1) {
      const token = this.#held[i] as Token;
      const text = textOf(token);
      // A token without text (part of a character, its logprobs still due) goes with the text
      // before it; once that is out, only such tokens may follow.
      if (left === 0 && text !== '') break;
      if (text.length <= left) {
        out.push(token);
        left -= text.length;
        continue;
      }
      out.push(withText(token, text.slice(0, left)));
      this.#held[i] = withText(token, text.slice(left), false);
      break;
    }
    this.#held = dropRest ? [] : this.#held.slice(i);
    return out;
  }
}
