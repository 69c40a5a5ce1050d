/**
 * The fakes under the WebLLM harness (./webllm-harness.ts): a byte-level tokenizer with ChatML's
 * special tokens, and the GPU device and adapter that WebLLM and Hearth watch.
 */

/** Special tokens of the fake vocabulary, each one id. */
const SPECIALS = ['<|im_start|>', '<|im_end|>', '<|endoftext|>'];
const SPECIAL_BASE = 256;
const PIECE_BASE = 512;

/** The ChatML template as MLC's `mlc-chat-config.json` gives it (Qwen, Hermes-2-Pro…). */
export const CHATML = {
  name: 'chatml',
  system_template: '<|im_start|>system\n{system_message}<|im_end|>\n',
  system_message: 'You are a helpful assistant.',
  roles: { user: '<|im_start|>user', assistant: '<|im_start|>assistant', tool: '<|im_start|>tool' },
  role_templates: {
    user: '{user_message}',
    assistant: '{assistant_message}',
    tool: '{tool_message}',
  },
  messages: [],
  seps: ['<|im_end|>\n'],
  role_content_sep: '\n',
  role_empty_sep: '\n',
  stop_str: ['<|im_end|>'],
  system_prefix_token_ids: [],
  // `<|im_end|>`: WebLLM takes stop tokens from the chat config's template at every prefill.
  stop_token_ids: [SPECIAL_BASE + 1],
  add_role_after_system_message: true,
};

/** A template without a tool role (Llama-2, Phi…). */
export const NO_TOOL_ROLE = {
  ...CHATML,
  name: 'no-tool-role',
  roles: { user: '<|im_start|>user', assistant: '<|im_start|>assistant' },
};

/**
 * A byte-level tokenizer: single bytes (the byte fallback), special tokens, then pieces a test
 * registers — text, or raw bytes that end mid-character, as real tokenizers split CJK and emoji.
 */
export class FakeTokenizer {
  readonly #pieces: Uint8Array[] = [];
  readonly #texts: string[] = [];

  /** The id of `piece`: a special token, or a registered piece of text. */
  idOf(piece: string): number {
    const special = SPECIALS.indexOf(piece);
    if (special !== -1) return SPECIAL_BASE + special;
    return this.#register(new TextEncoder().encode(piece), piece);
  }

  /** The id of a token made of raw bytes (one byte is the byte fallback's own token). */
  idOfBytes(bytes: readonly number[]): number {
    if (bytes.length === 1) return bytes[0] ?? 0;
    return this.#register(Uint8Array.from(bytes), '');
  }

  #register(bytes: Uint8Array, text: string): number {
    let index = this.#pieces.findIndex(
      (p) => p.length === bytes.length && p.every((b, i) => b === bytes[i]),
    );
    if (index === -1) {
      index = this.#pieces.push(bytes) - 1;
      this.#texts.push(text);
    }
    return PIECE_BASE + index;
  }

  #bytesOf(id: number): Uint8Array {
    if (id < SPECIAL_BASE) return Uint8Array.of(id);
    if (id < PIECE_BASE) return new TextEncoder().encode(SPECIALS[id - SPECIAL_BASE] ?? '');
    return this.#pieces[id - PIECE_BASE] ?? new Uint8Array();
  }

  encode(text: string): Int32Array {
    const ids: number[] = [];
    let i = 0;
    outer: while (i < text.length) {
      for (const special of SPECIALS) {
        if (text.startsWith(special, i)) {
          ids.push(this.idOf(special));
          i += special.length;
          continue outer;
        }
      }
      let best = -1;
      this.#texts.forEach((t, index) => {
        if (
          t !== '' &&
          text.startsWith(t, i) &&
          (best === -1 || t.length > (this.#texts[best] ?? '').length)
        )
          best = index;
      });
      if (best !== -1) {
        ids.push(PIECE_BASE + best);
        i += this.#texts[best]?.length ?? 1;
        continue;
      }
      const char = String.fromCodePoint(text.codePointAt(i) ?? 0);
      ids.push(...new TextEncoder().encode(char));
      i += char.length;
    }
    return Int32Array.from(ids);
  }

  decode(ids: Int32Array): string {
    const bytes = [...ids].flatMap((id) => [...this.#bytesOf(id)]);
    return new TextDecoder().decode(Uint8Array.from(bytes));
  }

  getVocabSize(): number {
    return PIECE_BASE + this.#pieces.length;
  }

  dispose(): void {}
}

/** A GPU device as WebLLM and Hearth watch it. */
export class FakeDevice {
  readonly lost: Promise<{ reason: string; message: string }>;
  #resolve!: (info: { reason: string; message: string }) => void;
  destroyed = false;
  /** What `reloadInternal` checks a record's `required_features` against. */
  readonly features = new Set(['shader-f16']);
  readonly limits = { maxStorageBufferBindingSize: 2 ** 30 };

  constructor() {
    this.lost = new Promise((resolve) => (this.#resolve = resolve));
  }

  /** What `device.destroy()` does: WebLLM calls it on a failed allocation (out of memory). */
  destroy(): void {
    this.destroyed = true;
    this.#resolve({ reason: 'destroyed', message: 'Device was destroyed.' });
  }

  /** A loss the browser decided (a driver reset, a GPU process crash). */
  loseUnexpectedly(message = 'GPU process crashed'): void {
    this.#resolve({ reason: 'unknown', message });
  }
}

/** The adapter the harness installs as `globalThis.GPUAdapter`, so Hearth's device watch sees devices. */
export class FakeGPUAdapter {
  async requestDevice(): Promise<FakeDevice> {
    return new FakeDevice();
  }
}
