/**
 * @module
 * Where a GGUF model the user adds comes from: a URL, a path of the app, or a Hugging Face id
 * (`hf:<user>/<repo>:<quant>`, as llama.cpp's `-hf` takes it), resolved to its files in order
 * and the id it gets unless the user names one (gguf-check.ts then checks the files). Every
 * refusal is a 400 `invalid_value` on `source` that says what went wrong, unreachable servers
 * included: the fault is in what the user gave, or in a server only the user can mend.
 */
import { OpenAIError } from '../../protocol/errors';
import type { CacheStorageLike } from '../on-device';

/** Hugging Face, where `hf:` ids are looked up. */
export const HUB_URL = 'https://huggingface.co';
/** The quantisation llama.cpp's `-hf` picks when the id names none. */
export const DEFAULT_HF_QUANT = 'Q4_K_M';
/** How long a server has to answer one look-up. */
const TIMEOUT_MS = 30_000;
/**
 * The most parts a split GGUF may have: the name alone says how many (`-of-99999`), and each is
 * a request. llama.cpp's gguf-split makes tens of parts for the largest models, not hundreds.
 */
export const MAX_SPLIT_PARTS = 256;

/** `fetch` as the service worker has it. */
export type FetchLike = (url: string, init?: RequestInit) => Promise<Response>;

/** What resolving and checking a source needs. */
export interface SourceDeps {
  /** The app's address: paths resolve against it, and its files may already be in the cache. */
  appUrl: string;
  fetch: FetchLike;
  caches: CacheStorageLike;
  /** Hugging Face's address (tests point it at a server of their own). */
  hubUrl?: string;
  timeoutMs?: number;
}

/** A source resolved: the id it gets unless the user names one, and its files. */
export interface GgufSource {
  id: string;
  /** Absolute URLs: the file, or the parts of a split GGUF in order. */
  files: string[];
  /** The vision projector a Hugging Face repo has beside the model (absolute URL). */
  mmproj?: string;
}

export function refuse(message: string): OpenAIError {
  return new OpenAIError('invalid_value', message, { param: 'source' });
}

/** `name-00001-of-00003.gguf`: llama.cpp's gguf-split names its parts so. */
const SPLIT = /-(\d{5})-of-(\d{5})\.gguf$/i;

/** Throws 400 when a split GGUF says it has more parts than `MAX_SPLIT_PARTS`. */
function assertPartCount(total: number, name: string): void {
  if (total <= MAX_SPLIT_PARTS) return;
  throw refuse(
    `${name} says it is one of ${total} parts of a split GGUF; at most ${MAX_SPLIT_PARTS} parts are accepted.`,
  );
}
/** A quantisation at the end of a file's stem: `…-Q4_K_M`, `….Q5_K_S`, `…-f16`, `…-IQ4_XS`. */
const QUANT = /(?:^|[-._])(I?Q\d(?:_[a-z0-9]+)*|TQ\d_\d|B?F16|F32|MXFP4)$/i;
/** A name that may be part of an id (`[\w.-]+`, as `parseGgufId` wants). */
const sanitize = (text: string) => text.replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '');

/** The file name of a path, its split suffix and `.gguf` taken off. */
function stemOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return name.replace(SPLIT, '').replace(/\.gguf$/i, '');
}

/** The quantisation a GGUF's file name ends with, as it is spelled there, or null. */
export function quantOf(path: string): string | null {
  return QUANT.exec(stemOf(path))?.[1] ?? null;
}

/** The parts of a split GGUF (`-00001-of-0000N`), in order; a plain file alone. */
function expandSplit(url: URL): string[] {
  const match = SPLIT.exec(url.pathname);
  if (!match?.[1] || !match[2]) return [url.href];
  const total = Number(match[2]);
  assertPartCount(total, url.href);
  const first = url.pathname.replace(SPLIT, `-00001-of-${match[2]}.gguf`);
  if (Number(match[1]) !== 1) {
    throw refuse(
      `${url.href} is part ${Number(match[1])} of ${total} of a split GGUF: give the first part, ${first.slice(first.lastIndexOf('/') + 1)}.`,
    );
  }
  return Array.from({ length: total }, (_, i) => {
    const part = new URL(url.href);
    part.pathname = url.pathname.replace(
      SPLIT,
      `-${String(i + 1).padStart(5, '0')}-of-${match[2]}.gguf`,
    );
    return part.href;
  });
}

/** `<user>/<repo>` of a Hub download URL (`…/<user>/<repo>/resolve/<revision>/<file>`). */
function hubRepo(url: URL, hubUrl: string): string | null {
  for (const hub of new Set([HUB_URL, hubUrl])) {
    const base = `${hub.replace(/\/+$/, '')}/`;
    if (!url.href.startsWith(base)) continue;
    const match = /^([\w.-]+\/[\w.-]+)\/resolve\/[^/]+\//.exec(url.href.slice(base.length));
    if (match?.[1]) return match[1];
  }
  return null;
}

/** The default id of a file at `url`: `<hf-user>/<repo>`, `local` or the host, `/<stem>:<quant>`. */
function idOfUrl(url: URL, deps: SourceDeps): string {
  let stem = stemOf(url.pathname);
  try {
    stem = decodeURIComponent(stem);
  } catch {
    // A stray `%` stays as it is and is sanitised below.
  }
  const quant = QUANT.exec(stem);
  const tag = quant?.[1] ?? 'GGUF';
  const repo = hubRepo(url, deps.hubUrl ?? HUB_URL);
  if (repo) return `${repo}:${tag}`;
  const owner = url.origin === new URL(deps.appUrl).origin ? 'local' : sanitize(url.host);
  const bare = quant ? stem.slice(0, quant.index) : stem;
  return `${owner}/${sanitize(bare) || sanitize(stem)}:${tag}`;
}

/** A URL or a path of the app, checked to be http(s) and to name a `.gguf`. */
function fileSource(source: string, deps: SourceDeps): GgufSource {
  const what =
    `'source' must be the http(s) URL of a .gguf file, a path of this app ending in .gguf, ` +
    `or a Hugging Face id as hf:<user>/<repo>:<quant>`;
  let url: URL;
  try {
    url = new URL(source, deps.appUrl);
  } catch {
    throw refuse(`${what} (got ${JSON.stringify(source)}).`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw refuse(`${what} (got a ${url.protocol} URL).`);
  }
  if (!/\.gguf$/i.test(url.pathname)) {
    const hint = /^[\w.-]+\/[\w.-]+(:[\w.-]+)?$/.test(source)
      ? `; did you mean hf:${source}?`
      : '.';
    throw refuse(`${what} (got ${JSON.stringify(source)})${hint}`);
  }
  const files = expandSplit(url);
  return { id: idOfUrl(url, deps), files };
}

/** Fetches with the deadline, saying in words what failed to answer. */
export async function reach(url: string, init: RequestInit, deps: SourceDeps): Promise<Response> {
  const timeoutMs = deps.timeoutMs ?? TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    return await deps.fetch(url, { ...init, signal });
  } catch (err) {
    const host = new URL(url).host;
    if (signal.aborted)
      throw refuse(`${host} did not answer within ${timeoutMs / 1000} s (${url}).`);
    const detail = err instanceof Error ? err.message : String(err);
    throw refuse(
      `Hearth could not reach ${host} (${detail}): the device may be offline, the server down, ` +
        `or it does not let this app read its files (CORS). URL: ${url}`,
    );
  }
}

/** The model's files on the Hub: the `.gguf` whose name carries the quantisation. */
async function hubSource(id: string, deps: SourceDeps): Promise<GgufSource> {
  const match = /^([\w.-]+)\/([\w.-]+)(?::([\w.-]+))?$/.exec(id);
  if (!match?.[1] || !match[2]) {
    throw refuse(`A Hugging Face id is hf:<user>/<repo>:<quant> (got hf:${id}).`);
  }
  const repo = `${match[1]}/${match[2]}`;
  const quant = match[3] ?? DEFAULT_HF_QUANT;
  const hub = (deps.hubUrl ?? HUB_URL).replace(/\/+$/, '');
  const response = await reach(`${hub}/api/models/${repo}`, {}, deps);
  if (!response.ok) {
    void response.body?.cancel();
    throw refuse(
      `Hugging Face has no public model ${repo} (it answered ${response.status}); for a private or gated model, give the URL of its file.`,
    );
  }
  const listing = (await response.json().catch(() => null)) as {
    siblings?: { rfilename?: unknown }[];
  } | null;
  const names = (listing?.siblings ?? [])
    .map((s) => s.rfilename)
    .filter((name): name is string => typeof name === 'string' && /\.gguf$/i.test(name));
  // A vision projector is not a model of its own: it goes with the model.
  const isProjector = (name: string) => /mmproj/i.test(stemOf(name));
  const ggufs = names.filter((name) => !isProjector(name));
  if (ggufs.length === 0) throw refuse(`${repo} on Hugging Face has no .gguf files.`);
  const escaped = quant.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // A whole quantisation: `Q4_K` is in `…-Q4_K.gguf`, not in `…-Q4_K_M.gguf`.
  const pattern = new RegExp(`(?:^|[-._])(${escaped})(?=[-.]|$)`, 'i');
  const chosen = ggufs.filter((name) => pattern.test(stemOf(name)));
  if (chosen.length === 0) {
    const quants = [...new Set(ggufs.map((name) => quantOf(name) ?? name))].sort();
    throw refuse(
      `${repo} has no .gguf file of the quantisation ${quant}; it has ${quants.join(', ')}.`,
    );
  }
  const models = new Set(chosen.map((name) => name.replace(SPLIT, '.gguf')));
  if (models.size > 1) {
    throw refuse(
      `Several files of ${repo} match ${quant} (${chosen.join(', ')}): give the URL of the one you want.`,
    );
  }
  const files = orderedParts(chosen);
  // The id spells the quantisation as the file does.
  const tag = pattern.exec(stemOf(files[0]!))?.[1] ?? quant;
  const path = (name: string) => name.split('/').map(encodeURIComponent).join('/');
  const url = (name: string) => `${hub}/${repo}/resolve/main/${path(name)}`;
  const projector = chooseProjector(names.filter(isProjector), tag);
  return {
    id: `${repo}:${tag}`,
    files: files.map(url),
    ...(projector !== undefined && { mmproj: url(projector) }),
  };
}

/** Projector quantisations in the order they are taken when none matches the model's. */
const PROJECTOR_QUANTS = ['F16', 'BF16', 'Q8_0', 'F32'];

/**
 * The projector of a repo's model (`mmproj-*.gguf`; `llama-server -hf` loads the repo's too):
 * the only one; else the one of the model's quantisation; else the first of F16, BF16, Q8_0, F32 (a
 * projector is small, and quantising it costs more than it saves); else the first by name.
 */
export function chooseProjector(names: readonly string[], quant: string): string | undefined {
  if (names.length <= 1) return names[0];
  const of = (q: string) => names.find((name) => quantOf(name)?.toUpperCase() === q.toUpperCase());
  for (const q of [quant, ...PROJECTOR_QUANTS]) {
    const found = of(q);
    if (found) return found;
  }
  return [...names].sort()[0];
}

/**
 * The URL of a projector the user names (`mmproj`): an http(s) URL or a path of the app, ending
 * in `.gguf`; a 400 on `mmproj` otherwise.
 */
export function projectorUrl(mmproj: string, deps: SourceDeps): string {
  let url: URL | null = null;
  try {
    url = new URL(mmproj, deps.appUrl);
  } catch {
    // Said below.
  }
  if (url && /^https?:$/.test(url.protocol) && /\.gguf$/i.test(url.pathname)) return url.href;
  throw new OpenAIError(
    'invalid_value',
    `'mmproj' must be the http(s) URL of a vision projector's .gguf file, or a path of this app ending in .gguf (got ${JSON.stringify(mmproj)}).`,
    { param: 'mmproj' },
  );
}

/** The files of one model in order: a split GGUF's parts, checked to be all there. */
function orderedParts(names: string[]): string[] {
  const first = names[0]!;
  const split = SPLIT.exec(first);
  if (!split?.[2]) return [first];
  const total = split[2];
  assertPartCount(Number(total), first);
  const wanted = Array.from({ length: Number(total) }, (_, i) =>
    first.replace(SPLIT, `-${String(i + 1).padStart(5, '0')}-of-${total}.gguf`),
  );
  const missing = wanted.filter((name) => !names.includes(name));
  if (missing.length > 0) throw refuse(`The split GGUF lacks ${missing.join(', ')}.`);
  return wanted;
}

/** Resolves what the user gave to the model's files and its default id. */
export async function resolveSource(source: string, deps: SourceDeps): Promise<GgufSource> {
  const trimmed = source.trim();
  if (trimmed.startsWith('hf:')) return hubSource(trimmed.slice('hf:'.length), deps);
  return fileSource(trimmed, deps);
}
