/**
 * @module
 * Signs of life from the engine's own work, not from the text it releases. A request is kept
 * alive (the first-token and stall limits, src/api/chat-run.ts) by the outputs it yields, and
 * some work yields none for a long time: a long prompt's prefill, a reply to tools (held back
 * whole until its calls parse). The engine beats at each step it computes (a prefill chunk, a
 * decoded token); while it waits on the engine, `during` turns the beats into `progress` outputs,
 * at most one a `everyMs`, and none while outputs flow anyway.
 */
import type { EngineOutput } from '../engine';

/** Beats of an engine's work, as `progress` outputs. */
export class Pulse {
  readonly #everyMs: number;
  #last = Date.now();
  #due = false;
  #wake: (() => void) | undefined;

  constructor(everyMs: number) {
    this.#everyMs = everyMs;
  }

  /** The engine computed a step. */
  beat(): void {
    if (this.#due || Date.now() - this.#last < this.#everyMs) return;
    this.#due = true;
    this.#wake?.();
  }

  /** An output went out: that is a sign of life already. */
  sent(): void {
    this.#last = Date.now();
    this.#due = false;
  }

  /** `work`'s value, with a `progress` output for each beat due while it runs. */
  async *during<T>(work: Promise<T>): AsyncGenerator<EngineOutput, T> {
    const done = work.then((value) => ({ value }));
    // Its failure is thrown by the race below, even if it comes while a beat is out.
    done.catch(() => undefined);
    for (;;) {
      if (this.#due) {
        this.sent();
        yield { type: 'progress' };
        continue;
      }
      const beat = new Promise<undefined>((resolve) => (this.#wake = () => resolve(undefined)));
      const settled = await Promise.race([done, beat]);
      this.#wake = undefined;
      if (settled) return settled.value;
    }
  }
}

/** Where each watched pipeline's steps are told: the pulse of the request it runs now. */
const listeners = new WeakMap<object, { beat: (() => void) | undefined }>();

/**
 * Makes each step `pipeline` computes beat `pulse`, until the returned function is called. In
 * WebLLM 0.2.86 every prefill chunk and every decoded token goes through the pipeline's
 * `embedAndForward`: it is wrapped once per pipeline, and the wrapper tells whichever pulse
 * listens now. A pipeline without it (another version) simply gives no beats.
 */
export function beatOnSteps(pipeline: object | undefined, pulse: Pulse): () => void {
  if (!pipeline) return () => undefined;
  let slot = listeners.get(pipeline);
  if (!slot) {
    const target = pipeline as { embedAndForward?: unknown };
    const forward = target.embedAndForward;
    if (typeof forward !== 'function') return () => undefined;
    const created: { beat: (() => void) | undefined } = { beat: undefined };
    listeners.set(pipeline, created);
    target.embedAndForward = function (this: unknown, ...args: unknown[]): unknown {
      created.beat?.();
      return (forward as (...a: unknown[]) => unknown).apply(this, args);
    };
    slot = created;
  }
  const beat = () => pulse.beat();
  const listening = slot;
  listening.beat = beat;
  return () => {
    if (listening.beat === beat) listening.beat = undefined;
  };
}
