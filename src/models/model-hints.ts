/**
 * @module
 * What an answer about a missing model tells its reader to do next: where the whole catalogue
 * is, how to download a catalogue model that is not on the device, and which catalogue id a
 * near-miss (a bare MLC or GGUF name, a GGUF file's name, a repository without its quant)
 * probably meant. A near-miss is never answered in the model's place: a wrong guess would answer
 * with a model the caller did not ask for, so the 404 names the id and the caller chooses.
 * Pure: the service worker's directory, the API and the engine worker word these alike.
 */
import { OpenAIError } from '../protocol/errors';

/** A model a request may name (downloaded or not), as a near-miss is matched against it. */
export interface KnownModel {
  id: string;
  /** A GGUF model's files (URLs), whose names a caller may give instead of the id. */
  files?: readonly string[];
}

/** Why `GET /v1/openai/models` leaves out a model that Hearth knows. */
export type Absence =
  /** It is in the catalogue and could run here, but its files are not on the device. */
  | { why: 'not_downloaded' }
  /** It cannot answer here (this GPU cannot run it, or the device is offline): `reason` says why. */
  | { why: 'unavailable'; reason: string };

/** `base` (the app's path, e.g. `/` or `/repo/`) with exactly one trailing slash. */
function basePath(base: string | undefined): string {
  return (base ?? '/').replace(/\/*$/, '/');
}

/** The route of the whole catalogue, downloaded or not, as a sentence's reader types it. */
export function catalogRoute(base?: string): string {
  return `GET ${basePath(base)}v1/hearth/catalog`;
}

/**
 * The ways to download `id`, all in a page of the site (or Hearth's Models view): Hearth's own
 * routes are not offered through the relay, so a caller outside the browser is told where to go.
 */
export function downloadWays(id: string, base?: string): string {
  return `hearth.models.prepare('${id}') in a page of the site, or POST ${basePath(base)}v1/hearth/models/${id}/download from one (not through the relay)`;
}

/** Where to look, ending the sentences of a 404 about a model. */
function lookHere(base: string | undefined): string {
  return `GET ${basePath(base)}v1/openai/models lists the models ready on this device; the whole catalogue is at ${catalogRoute(base)}, in a page of the site.`;
}

/**
 * 404 `model_not_downloaded`: `id` is in the catalogue and not on the device. `state` says how it
 * came to be missing (never downloaded, or deleted); the message says how to get it.
 */
export function notDownloaded(
  id: string,
  base?: string,
  state = 'is not on this device',
): OpenAIError {
  return new OpenAIError(
    'model_not_downloaded',
    `The model '${id}' ${state}; download it first: ${downloadWays(id, base)}.`,
    { param: 'model' },
  );
}

/**
 * 404 `model_not_found` for `GET /v1/openai/models/{id}` of a model Hearth knows and the list
 * leaves out: the list and the lookup agree, and the message says why it is left out and how to
 * get it.
 */
export function notListed(id: string, absence: Absence, base?: string): OpenAIError {
  const why =
    absence.why === 'not_downloaded'
      ? `is in Hearth's catalogue but not on this device; download it first: ${downloadWays(id, base)}.`
      : `is known to Hearth but cannot answer here: ${absence.reason}`;
  return new OpenAIError('model_not_found', `The model '${id}' ${why} ${lookHere(base)}`, {
    param: 'model',
  });
}

/**
 * Model ids of OpenAI's own API that clients send by default (`gpt-4o-mini`, `o3`,
 * `text-embedding-3-small`, …): Hearth never answers them with a model of its own.
 */
const OPENAI_MODEL =
  /^(?:gpt-|chatgpt-|o\d(?:-|$)|text-embedding-|text-davinci|davinci|babbage|dall-e|whisper-|tts-|omni-moderation|text-moderation|codex-|computer-use)/i;

/** Whether `id` is one of OpenAI's model ids rather than a name for one of Hearth's. */
export function isOpenAIModelId(id: string): boolean {
  return OPENAI_MODEL.test(id.trim());
}

/** The parts of an id as a caller may write it: `[owner/]name[:quant]`. */
interface IdParts {
  owner: string | undefined;
  name: string;
  quant: string | undefined;
}

/** A GGUF repository's name compares without its `-GGUF` suffix: `Qwen3-1.7B` is `Qwen3-1.7B-GGUF`. */
const bareName = (name: string) => name.toLowerCase().replace(/-gguf$/, '');

function partsOf(id: string): IdParts {
  const colon = id.lastIndexOf(':');
  const path = colon > 0 ? id.slice(0, colon) : id;
  const quant = colon > 0 ? id.slice(colon + 1) : undefined;
  const slash = path.lastIndexOf('/');
  return {
    owner: slash >= 0 ? path.slice(0, slash) : undefined,
    name: path.slice(slash + 1),
    quant: quant === '' ? undefined : quant,
  };
}

/** A quant at the end of a GGUF file's stem: `…-Q4_K_M`, `….IQ3_XS`, `…-f16`, `…_BF16`. */
const FILE_QUANT = /[-_.]((?:I?Q\d[\w]*)|BF16|F16|F32)$/i;

/** The last part of a URL's or a path's name. */
const fileName = (url: string) => (url.split(/[?#]/, 1)[0] ?? '').split('/').pop() ?? '';

/**
 * The catalogue id a caller probably meant by `asked`, an id no model has, or undefined: the
 * same id in other letter case; a GGUF's file name (`Qwen3-1.7B-Q4_K_M.gguf`) or a URL of it; a
 * bare name without its owner (`Qwen3-0.6B-q4f16_1-MLC` for `mlc-ai/Qwen3-0.6B-q4f16_1-MLC`,
 * `Qwen3-1.7B-GGUF:Q4_K_M`); a repository without its quant (`unsloth/Qwen3-1.7B-GGUF`, whose
 * `Q4_K_M` is preferred, as Hearth's curated list is). An `hf:` prefix (how models are added) is
 * ignored. Among several matches, one under the owner asked for comes first, then catalogue order.
 */
export function suggestModelId(asked: string, known: readonly KnownModel[]): string | undefined {
  const text = asked.trim().replace(/^hf:/i, '');
  if (text === '') return undefined;
  const lower = text.toLowerCase();
  const same = known.find((m) => m.id.toLowerCase() === lower && m.id !== asked);
  if (same) return same.id;
  if (/\.gguf$/i.test(text)) return byFileName(fileName(text), known);
  const wanted = partsOf(text);
  const matches = known.filter((m) => {
    const parts = partsOf(m.id);
    if (bareName(parts.name) !== bareName(wanted.name)) return false;
    return wanted.quant === undefined || parts.quant?.toLowerCase() === wanted.quant.toLowerCase();
  });
  return best(matches, wanted.owner);
}

/** The catalogue model whose file is `name`, or else whose repository and quant `name` spells. */
function byFileName(name: string, known: readonly KnownModel[]): string | undefined {
  const lower = name.toLowerCase();
  const exact = known.find((m) => m.files?.some((f) => fileName(f).toLowerCase() === lower));
  if (exact) return exact.id;
  // A file of another quantiser's repository: `<Model>-<QUANT>.gguf` names the model and quant.
  const stem = name.replace(/\.gguf$/i, '');
  const quant = FILE_QUANT.exec(stem);
  if (!quant?.[1]) return undefined;
  const model = bareName(stem.slice(0, quant.index));
  const found = known.filter((m) => {
    const parts = partsOf(m.id);
    return bareName(parts.name) === model && parts.quant?.toLowerCase() === quant[1]?.toLowerCase();
  });
  return best(found, undefined);
}

/** The likeliest of several matches: the owner asked for, then `Q4_K_M`, then catalogue order. */
function best(matches: readonly KnownModel[], owner: string | undefined): string | undefined {
  const rank = (m: KnownModel) => {
    const parts = partsOf(m.id);
    const ownerScore = owner !== undefined && parts.owner?.toLowerCase() === owner.toLowerCase();
    return (ownerScore ? 2 : 0) + (parts.quant?.toUpperCase() === 'Q4_K_M' ? 1 : 0);
  };
  let chosen: KnownModel | undefined;
  for (const match of matches) if (!chosen || rank(match) > rank(chosen)) chosen = match;
  return chosen?.id;
}

/** Whether `id` looks like a GGUF model's name: an `owner/repo:quant`, a `-GGUF` repo, a file. */
const looksGguf = (id: string) => /\.gguf$|-gguf(?::|$)|^hf:/i.test(id.trim());

/**
 * 404 `model_not_found` for `asked`, an id no model has: it names the catalogue's route, the id a
 * near-miss probably meant (`suggestModelId`), and, for one of OpenAI's ids, that Hearth serves
 * the models on this device, not OpenAI's.
 */
export function unknownModel(
  asked: string,
  known: readonly KnownModel[],
  base?: string,
): OpenAIError {
  const suggestion = suggestModelId(asked, known);
  let text = `The model '${asked}' does not exist.`;
  if (suggestion !== undefined) {
    text += ` Did you mean '${suggestion}'?`;
  } else if (isOpenAIModelId(asked)) {
    text = `The model '${asked}' does not exist here: it is one of OpenAI's, and Hearth serves models that run on this device, not OpenAI's. Name one of Hearth's models.`;
  } else if (looksGguf(asked)) {
    text += ` A GGUF model that is not in the catalogue can be added with POST ${basePath(base)}v1/hearth/models.`;
  }
  return new OpenAIError('model_not_found', `${text} ${lookHere(base)}`, { param: 'model' });
}
