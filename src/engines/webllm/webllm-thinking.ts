/**
 * @module
 * A reasoning model's text split into thinking and answer at `<think>…</think>`, as WebLLM
 * streams it: WebLLM mixes the thinking into content, tags split across chunks included.
 */

const OPEN = '<think>';
const CLOSE = '</think>';

/** The length of the longest suffix of `text` that is a prefix of `tag`. */
function partialTagAtEnd(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n -= 1) {
    if (tag.startsWith(text.slice(-n))) return n;
  }
  return 0;
}

/** A piece of a reasoning model's output: its thinking, or its answer. */
export interface Piece {
  text: string;
  reasoning: boolean;
}

/**
 * Splits a reasoning model's streamed text into thinking and answer at `<think>…</think>`, tags
 * split across chunks included. Some models (DeepSeek-R1) start thinking without the opening
 * tag, which their prompt template already wrote.
 */
export class ThinkSplitter {
  readonly #startsThinking: boolean;
  #state: 'start' | 'thinking' | 'answer' = 'start';
  #held = '';
  #trimNext = false;

  constructor(options: { startsThinking?: boolean } = {}) {
    this.#startsThinking = options.startsThinking ?? false;
  }

  /** The pieces `text` completes; some of it may be held back until the next call. */
  push(text: string): Piece[] {
    this.#held += text;
    const pieces: Piece[] = [];
    for (;;) {
      if (this.#state === 'start') {
        const lead = this.#held.trimStart();
        if (lead.startsWith(OPEN)) {
          this.#held = lead.slice(OPEN.length);
          this.#state = 'thinking';
          this.#trimNext = true;
          continue;
        }
        if (OPEN.startsWith(lead) && lead.length < OPEN.length) return pieces; // undecided yet
        this.#state = this.#startsThinking ? 'thinking' : 'answer';
        if (this.#state === 'thinking') this.#trimNext = true;
        continue;
      }
      if (this.#state === 'answer') {
        this.#emit(pieces, this.#held, false);
        this.#held = '';
        return pieces;
      }
      const close = this.#held.indexOf(CLOSE);
      if (close !== -1) {
        this.#emit(pieces, this.#held.slice(0, close).trimEnd(), true);
        this.#held = this.#held.slice(close + CLOSE.length);
        this.#state = 'answer';
        this.#trimNext = true;
        continue;
      }
      // Hold back a possible start of `</think>`, and whitespace that may precede it.
      const keep = partialTagAtEnd(this.#held, CLOSE);
      let cut = this.#held.length - keep;
      while (cut > 0 && /\s/.test(this.#held[cut - 1] ?? '')) cut -= 1;
      this.#emit(pieces, this.#held.slice(0, cut), true);
      this.#held = this.#held.slice(cut);
      return pieces;
    }
  }

  /** Whatever is still held, at the end of the output. */
  flush(): Piece[] {
    const pieces: Piece[] = [];
    const reasoning =
      this.#state === 'thinking' || (this.#state === 'start' && this.#startsThinking);
    this.#emit(pieces, this.#held, reasoning);
    this.#held = '';
    return pieces;
  }

  #emit(pieces: Piece[], text: string, reasoning: boolean): void {
    let out = text;
    if (this.#trimNext) {
      out = out.trimStart();
      if (out === '') return;
      this.#trimNext = false;
    }
    if (out !== '') pieces.push({ text: out, reasoning });
  }
}

/** Whether a reasoning model begins thinking before any tag (its template opened it). */
export function startsThinking(modelId: string): boolean {
  return /DeepSeek-R1/i.test(modelId);
}
