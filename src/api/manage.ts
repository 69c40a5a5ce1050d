/**
 * @module
 * Hearth's own model endpoints, `/v1/hearth/models/{org}/{name}[/action]` and
 * `/v1/hearth/unload`: what is on the device (GET), downloads (POST and DELETE `…/download`),
 * deletion (DELETE), loading onto the GPU (POST `…/load`) and unloading. Each is offered only
 * when the backend can do it.
 */
import * as v from 'valibot';
import {
  HostLostError,
  type LoadingBackend,
  type ModelInspection,
  type ModelService,
} from '../protocol/host/backend';
import { readOptionalJsonBody } from '../protocol/body';
import { timedOut, within } from './chat-run';
import { finished, type DownloadProgress } from '../protocol/host/downloads';
import { OpenAIError } from '../protocol/errors';
import { ECHO_MODEL, resolveModel, type ModelDirectory, type ModelInfo } from '../models/models';
import { jsonResponse, sseHeaders } from '../protocol/respond';
import { sseEvent } from '../protocol/sse';

/** A backend with the parts of model management it implements. */
export type ManagingBackend = LoadingBackend & Partial<ModelService>;

/** What the endpoints need. */
export interface ManageDeps {
  backend: ManagingBackend;
  models: ModelDirectory;
  /** A load that takes longer is answered 503 `model_loading`, and carries on. */
  firstTokenTimeoutMs: number;
}

/** One call of a model endpoint. */
interface ModelCall {
  deps: ManageDeps;
  id: string;
  request: Request;
  requestId: string;
}

type Method = 'GET' | 'POST' | 'DELETE';
type ModelHandler = (call: ModelCall) => Promise<Response>;

/** `{org}/{name}` and the action (`''` for none), from the path after `hearth/models/`. */
export function parseModelPath(rest: string): { id: string; action: string } | undefined {
  let path: string;
  try {
    // The slash of the id may arrive encoded (`mlc-ai%2F…`), as the openai SDK sends ids.
    path = decodeURIComponent(rest);
  } catch {
    return undefined;
  }
  const match = /^([^/]+\/[^/]+)(?:\/([a-z-]+))?$/.exec(path);
  return match?.[1] ? { id: match[1], action: match[2] ?? '' } : undefined;
}

/** 400 for actions on files when the model is the built-in echo engine, which has none. */
function assertHasFiles(model: ModelInfo): void {
  if (model.id !== ECHO_MODEL.id) return;
  throw new OpenAIError(
    'invalid_value',
    `${ECHO_MODEL.id} is built into Hearth: it has no files to download or delete.`,
    { param: 'model' },
  );
}

/** `POST …/load`: puts a model on the GPU, fetching through WebLLM whatever files are missing. */
async function loadModel({ deps, id, requestId }: ModelCall): Promise<Response> {
  const { model, ready } = await resolveModel(deps.models, id);
  await ready({ files: false });
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

const downloadBody = v.strictObject({ stream: v.optional(v.boolean()) });

/** Whether the caller wants progress as SSE (the default) or only the outcome, as JSON. */
async function wantsStream(request: Request): Promise<boolean> {
  const json = await readOptionalJsonBody(request, 4096);
  if (json === undefined) return true;
  const parsed = v.safeParse(downloadBody, json);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const param = issue.path?.map((p) => String(p.key)).join('.') || null;
    throw new OpenAIError(
      'invalid_value',
      param === 'stream'
        ? `'stream' must be a boolean.`
        : `The body of a download may only hold 'stream' (got ${param ?? 'something else'}).`,
      { param },
    );
  }
  return parsed.output.stream ?? true;
}

/** How often the progress of one download survives its host tab closing. */
const HOST_LOSSES_TOLERATED = 3;

/**
 * The progress of a download, carried across host changes: the next host resumes the download
 * where the files stop, and this joins it there.
 */
async function* followDownload(
  service: ModelService,
  model: string,
  signal: AbortSignal,
  requestId: string,
): AsyncGenerator<DownloadProgress> {
  for (let losses = 0; ; losses += 1) {
    try {
      for await (const progress of service.download(model, { signal, requestId })) {
        yield progress;
      }
      return;
    } catch (err) {
      if (!(err instanceof HostLostError) || losses >= HOST_LOSSES_TOLERATED) throw err;
    }
  }
}

/** `POST …/download`: starts a download or joins the one under way. */
async function downloadModel({ deps, id, request, requestId }: ModelCall): Promise<Response> {
  const service = deps.backend as ModelService;
  const { model, ready } = await resolveModel(deps.models, id);
  assertHasFiles(model);
  const stream = await wantsStream(request);
  await ready({ files: false });
  const abort = new AbortController();
  const progress = followDownload(service, model.id, abort.signal, requestId);
  const settle = (last: DownloadProgress | undefined) => {
    if (last && finished(last.phase)) deps.models.forget?.();
  };
  if (!stream) {
    let last: DownloadProgress | undefined;
    for await (const report of progress) last = report;
    settle(last);
    if (last?.phase === 'failed' && last.error) throw OpenAIError.deserialize(last.error);
    return jsonResponse(last, requestId);
  }
  // The first report comes before the response, so that a refusal is a status, not an event.
  const first = await progress.next();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const encoder = new TextEncoder();
      let last = first.done ? undefined : first.value;
      try {
        if (last) controller.enqueue(encoder.encode(sseEvent(last)));
        for (let step = await progress.next(); !step.done; step = await progress.next()) {
          last = step.value;
          controller.enqueue(encoder.encode(sseEvent(last)));
        }
      } catch (err) {
        if (abort.signal.aborted) return;
        controller.enqueue(encoder.encode(sseEvent(OpenAIError.from(err).toBody())));
      }
      settle(last);
      controller.close();
    },
    cancel() {
      // The caller stopped listening; the download goes on in the host.
      abort.abort();
    },
  });
  return new Response(body, { headers: sseHeaders(requestId) });
}

/** `DELETE …/download`: stops a download; the files it completed stay, for a later resume. */
async function cancelDownload({ deps, id, requestId }: ModelCall): Promise<Response> {
  const { model } = await resolveModel(deps.models, id);
  assertHasFiles(model);
  await (deps.backend as ModelService).cancelDownload(model.id);
  return jsonResponse({ id: model.id, object: 'hearth.download', cancelled: true }, requestId);
}

/**
 * `DELETE /v1/hearth/models/{org}/{name}`: removes every file of the model, and a model the user
 * added leaves the catalogue too (once its files are gone: a refusal keeps both).
 */
async function deleteModel({ deps, id, requestId }: ModelCall): Promise<Response> {
  const { model } = await resolveModel(deps.models, id);
  assertHasFiles(model);
  try {
    await (deps.backend as ModelService).deleteModel(model.id);
  } finally {
    deps.models.forget?.();
  }
  await deps.models.remove?.(model.id);
  return jsonResponse({ id: model.id, object: 'model', deleted: true }, requestId);
}

/** What `GET /v1/hearth/models/{org}/{name}` answers. */
export interface ModelState extends ModelInspection {
  id: string;
  object: 'hearth.model';
  /** Every file is on the device (Hearth's check: config, tokenizer, shards and library). */
  downloaded: boolean;
}

/** `GET /v1/hearth/models/{org}/{name}`: the model's files as Hearth and WebLLM see them. */
async function inspectModel({ deps, id, requestId }: ModelCall): Promise<Response> {
  const { model } = await resolveModel(deps.models, id);
  const inspection: ModelInspection =
    model.id === ECHO_MODEL.id
      ? {
          missing_files: [],
          webllm_has_model_in_cache: false,
          loaded: false,
          download: null,
          evicted: null,
        }
      : await (deps.backend as ModelService).inspect(model.id);
  const state: ModelState = {
    id: model.id,
    object: 'hearth.model',
    downloaded: inspection.missing_files.length === 0,
    ...inspection,
  };
  return jsonResponse(state, requestId);
}

/** The model endpoints the backend can serve, by action and method. */
function modelActions(backend: ManagingBackend): Map<string, Map<Method, ModelHandler>> {
  const actions = new Map<string, Map<Method, ModelHandler>>([
    ['load', new Map([['POST', loadModel]])],
  ]);
  if (backend.download && backend.cancelDownload) {
    actions.set(
      'download',
      new Map<Method, ModelHandler>([
        ['POST', downloadModel],
        ['DELETE', cancelDownload],
      ]),
    );
  }
  const model = new Map<Method, ModelHandler>();
  if (backend.inspect) model.set('GET', inspectModel);
  if (backend.deleteModel) model.set('DELETE', deleteModel);
  if (model.size > 0) actions.set('', model);
  return actions;
}

/** Answers a request under `/v1/hearth/models/`, whose path after it is `rest`. */
export function modelEndpoints(
  deps: ManageDeps,
): (request: Request, rest: string, requestId: string) => Promise<Response> {
  const actions = modelActions(deps.backend);
  return (request, rest, requestId) => {
    const target = parseModelPath(rest);
    const handlers = target && actions.get(target.action);
    if (!target || !handlers) {
      throw new OpenAIError(
        'unknown_url',
        `Unknown request URL: ${request.method} /v1/hearth/models/${rest}.`,
      );
    }
    const handler = handlers.get(request.method as Method);
    if (!handler) {
      const allow = [...handlers.keys()].join(', ');
      throw new OpenAIError(
        'method_not_allowed',
        `Method ${request.method} is not allowed for /v1/hearth/models/${rest}; use ${allow}.`,
        { headers: { allow } },
      );
    }
    return handler({ deps, id: target.id, request, requestId });
  };
}

/** `POST /v1/hearth/unload`: takes the model off the GPU (409 while requests use it). */
export async function unloadModel(
  service: Pick<ModelService, 'unload'>,
  requestId: string,
): Promise<Response> {
  await service.unload();
  return jsonResponse({ object: 'hearth.unload', loaded_model: null }, requestId);
}
