/**
 * @module
 * How the UI reaches the engine: over HTTP, through the service worker, exactly as third-party
 * code does.
 */
import type { ListBody, ModelObject } from '../openai/types';

/** The key the app's own pages send (any non-empty key is accepted by default). */
export const APP_KEY = 'hearth-app';

/** The API base for SDKs: `{origin}{base}v1/openai`, absolute as SDKs need it. */
export function sdkBaseUrl(): string {
  return new URL(`${import.meta.env.BASE_URL}v1/openai`, location.origin).href;
}

/** `GET /v1/openai/models`; throws with the API's message on an error status. */
export async function listModels(signal?: AbortSignal): Promise<ModelObject[]> {
  const response = await fetch(`${sdkBaseUrl()}/models`, {
    headers: { authorization: `Bearer ${APP_KEY}` },
    ...(signal && { signal }),
  });
  const body = (await response.json()) as ListBody<ModelObject> & { error?: { message: string } };
  if (!response.ok) throw new Error(body.error?.message ?? `HTTP ${response.status}`);
  return body.data;
}
