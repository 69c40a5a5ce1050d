/**
 * @module
 * `HearthError`, what every call of `hearth-llm` rejects with. The bundled entry (`lib/index.js`)
 * and the copied loader (`{base}hearth/hearth.js`) are two bundles, each with its own copy of this
 * class, and the errors a site catches are made by the loader's: `instanceof` is answered by a
 * brand both copies share (`Symbol.for`), not by the prototype chain, so that
 * `err instanceof HearthError` holds whichever copy the site imported.
 */

/** The brand every `HearthError` carries, the same symbol in every bundle. */
const BRAND = Symbol.for('hearth-llm.HearthError');

/**
 * Why `startHearth` failed: `unsupported` (no service workers or Web Locks, or not a secure
 * context), `uncontrolled` (no worker could be registered or take control of the page),
 * `worker_conflict` (the site's own service worker holds the scope, and `registerWorker: false`
 * was not given) or `version_mismatch` (the site's files are of two builds).
 */
export type StartErrorCode =
  'unsupported' | 'uncontrolled' | 'worker_conflict' | 'version_mismatch';

/**
 * A `HearthError`'s code: one of `startHearth`'s, or the API's own `error.code`
 * (`model_not_found`, `model_exists`, `storage_full`, `download_unreachable`…; see the error table
 * in the docs), or `network_error` when the service worker did not answer at all.
 */
export type HearthErrorCode = StartErrorCode | (string & {});

/** What a `HearthError` carries besides its message. */
export interface HearthErrorOptions {
  /** The HTTP status the API answered; null for errors of the page itself. */
  status?: number | null;
  /** The request field the error is about, as the API names it. */
  param?: string | null;
  /** What caused it (a `TypeError` of `fetch`, say). */
  cause?: unknown;
}

/** An error of Hearth's: `code` for code, `message` for people. */
export class HearthError extends Error {
  /** The API's error code, or `startHearth`'s. */
  readonly code: HearthErrorCode;
  /** The HTTP status of the API's answer; null when no answer was involved. */
  readonly status: number | null;
  /** The request field it is about; null when none. */
  readonly param: string | null;

  constructor(code: HearthErrorCode, message: string, options: HearthErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HearthError';
    this.code = code;
    this.status = options.status ?? null;
    this.param = options.param ?? null;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** True for a `HearthError` of any copy of this class (see the module's comment). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && BRAND in value;
  }
}

/** The API's error body, as `{error: {message, code, param}}`. */
interface ErrorBody {
  error?: { message?: unknown; code?: unknown; param?: unknown; type?: unknown };
}

/** The `HearthError` of an answer that is not 2xx: the API's own fields where it sent them. */
export async function errorOfResponse(response: Response): Promise<HearthError> {
  const text = await response.text().catch(() => '');
  let body: ErrorBody | undefined;
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    body = undefined;
  }
  const error = body?.error;
  const status = response.status;
  if (error && typeof error.message === 'string') {
    const code = typeof error.code === 'string' ? error.code : String(error.type ?? 'http_error');
    const param = typeof error.param === 'string' ? error.param : null;
    return new HearthError(code, error.message, { status, param });
  }
  return new HearthError(
    'http_error',
    `${response.url || 'The request'} answered ${status} ${response.statusText}${text ? `: ${text.slice(0, 200)}` : ''}`,
    { status },
  );
}
