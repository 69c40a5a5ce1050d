/**
 * @module
 * What a server's input may be: the names it may take, its base URL as kept, and the bodies of
 * `POST` and `PATCH /v1/hearth/servers`, with the errors they answer when wrong.
 */
import * as v from 'valibot';
import { OpenAIError } from '../protocol/errors';
import { noArray } from '../protocol/schema';
import { issueToError } from '../protocol/validate';

/** Names no server may take: Hearth's own, and WebLLM's. */
export const RESERVED = new Set(['hearth', 'mlc-ai', 'local', 'self-hosted']);
export const NAME = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
export const DEFAULT_TIMEOUT_MS = 10_000;

/** The base URL as it is kept: absolute http(s), no query or fragment, no trailing slash. */
export function normalizeBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new OpenAIError(
      'invalid_value',
      `Invalid value for 'base_url': ${JSON.stringify(text)} is not an absolute URL; give the server's OpenAI address, e.g. http://gpu-box:8000/v1.`,
      { param: 'base_url' },
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    // `gpu-box:8000/v1` parses, with `gpu-box:` as its scheme: it lacks `http://`.
    const message = text.includes('//')
      ? `only http and https servers can be added (got ${url.protocol})`
      : `${JSON.stringify(text)} has no http:// or https:// in front; give the server's OpenAI address, e.g. http://gpu-box:8000/v1`;
    throw new OpenAIError('invalid_value', `Invalid value for 'base_url': ${message}.`, {
      param: 'base_url',
    });
  }
  if (url.username || url.password) {
    throw new OpenAIError(
      'invalid_value',
      "Invalid value for 'base_url': put the key in 'api_key', not in the URL.",
      { param: 'base_url' },
    );
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The body of `POST /v1/hearth/servers`. */
export const addBody = noArray(
  v.strictObject({
    name: v.string(),
    base_url: v.string(),
    api_key: v.optional(v.nullable(v.string())),
    /** `session`: the key in the service worker's memory only (see `ServerRecord.key_kept`). */
    keep_key: v.optional(v.picklist(['stored', 'session'])),
    allow_private_network: v.optional(v.boolean()),
  }),
);

/** The first schema issue as an error; a field the body does not take is named as such. */
export function bodyError(issue: v.BaseIssue<unknown>, fields: string): OpenAIError {
  if (issue.kind === 'schema' && issue.type === 'strict_object' && issue.expected === 'never') {
    const field = issue.path?.map((p) => String(p.key)).join('.') ?? 'body';
    return new OpenAIError(
      'unsupported_parameter',
      `Unsupported parameter: '${field}'; this endpoint takes ${fields}.`,
      { param: field },
    );
  }
  return issueToError(issue);
}

/** The body of `PATCH /v1/hearth/servers/{name}`: the models to offer, or its key again. */
export const patchBody = noArray(
  v.strictObject({
    offered: v.optional(v.array(v.string())),
    /** The key again (one kept for the session only is gone when the worker stops). */
    api_key: v.optional(v.string()),
  }),
);

export function notFound(name: string): OpenAIError {
  return new OpenAIError('model_not_found', `No server named '${name}' was added.`, {
    param: 'name',
  });
}
