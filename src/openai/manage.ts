/**
 * @module
 * Hearth's own model endpoints under `/v1/hearth/models/{org}/{name}/…`: for now, `load`, which
 * puts a model on the GPU, fetching through WebLLM whatever of its files is missing.
 */
import type { ModelBackend } from './backend';
import { timedOut, within } from './chat-run';
import { OpenAIError } from './errors';
import type { ModelDirectory } from './models';
import { jsonResponse } from './respond';

/** What the endpoints need. */
export interface ManageDeps {
  backend: ModelBackend;
  models: ModelDirectory;
  /** A load that takes longer is answered 503 `model_loading`, and carries on. */
  firstTokenTimeoutMs: number;
}

/** `{org}/{name}` and the action, from the path after `hearth/models/` (the slash may be encoded). */
export function parseModelPath(rest: string): { id: string; action: string } | undefined {
  let path: string;
  try {
    path = decodeURIComponent(rest);
  } catch {
    return undefined;
  }
  const match = /^([^/]+\/[^/]+)\/([a-z]+)$/.exec(path);
  return match?.[1] && match[2] ? { id: match[1], action: match[2] } : undefined;
}

/** `POST /v1/hearth/models/{org}/{name}/load`. */
export async function loadModel(
  deps: ManageDeps,
  id: string,
  requestId: string,
): Promise<Response> {
  const model = await deps.models.find(id);
  if (!model) {
    throw new OpenAIError('model_not_found', `The model '${id}' does not exist.`, {
      param: 'model',
    });
  }
  await deps.models.ensureReady(model, { files: false });
  const abort = new AbortController();
  const events = deps.backend.load(model.id, { signal: abort.signal, requestId });
  const steps = events[Symbol.asyncIterator]();
  const deadline = Date.now() + deps.firstTokenTimeoutMs;
  try {
    for (;;) {
      const step = await within(steps.next(), deadline - Date.now(), () =>
        timedOut('loading', deps.firstTokenTimeoutMs),
      );
      if (step.done) break;
    }
  } catch (err) {
    // The load itself carries on in the engine: only this request gives up waiting.
    abort.abort();
    throw err;
  } finally {
    deps.models.forget?.();
  }
  return jsonResponse({ id: model.id, object: 'model', loaded: true }, requestId);
}
