/**
 * @module
 * Turns a parsed JSON body into a `ChatRequest` every engine can take (`normalize.ts`), or throws
 * the 400 that names the first field at fault.
 */
import * as v from 'valibot';
import { OpenAIError } from './errors';
import { normalize } from './normalize';
import { chatCompletionRequestSchema, UNSUPPORTED } from './schema';
import type { ChatRequest } from './types';

export { PART_SEPARATOR, SYSTEM_SEPARATOR } from './normalize';

/** Validates and normalises a chat-completions body; throws a 400 `OpenAIError`. */
export function parseChatRequest(body: unknown): ChatRequest {
  const result = v.safeParse(chatCompletionRequestSchema, body, { abortEarly: true });
  if (!result.success) throw issueToError(result.issues[0]);
  return normalize(result.output);
}

/** `messages[2].content[0].type` from a valibot issue path. */
export function paramOf(issue: v.BaseIssue<unknown>): string | null {
  if (!issue.path) return null;
  let param = '';
  for (const item of issue.path) {
    const key = item.key;
    param += typeof key === 'number' ? `[${key}]` : param === '' ? String(key) : `.${String(key)}`;
  }
  return param;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') {
    return value.length > 40 ? `a string` : JSON.stringify(value);
  }
  if (typeof value === 'object') return 'an object';
  return typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : `a ${typeof value}`;
}

/** Maps the first schema issue to the error table's code and a sentence naming the field. */
export function issueToError(issue: v.BaseIssue<unknown>): OpenAIError {
  const param = paramOf(issue);
  const field = param ?? 'body';
  if (issue.message === UNSUPPORTED) {
    const what = typeof issue.input === 'string' ? ` ${JSON.stringify(issue.input)}` : '';
    return new OpenAIError(
      'unsupported_parameter',
      `Unsupported parameter: '${field}'${what} is not supported by Hearth.`,
      { param },
    );
  }
  if (issue.kind === 'schema') {
    // `null` counts as absent (docs/api.md, Request fields): a field set to null is missing, as OpenAI
    // says too; a null item of an array is a wrong type.
    const last = issue.path?.at(-1);
    const nullField = issue.input === null && last !== undefined && typeof last.key === 'string';
    if (issue.input === undefined || nullField) {
      return new OpenAIError('missing_field', `Missing required parameter: '${field}'.`, { param });
    }
    // A string where a fixed set of strings is expected is a wrong value, not a wrong type.
    const enumerated = issue.type === 'literal' || issue.type === 'picklist';
    const discriminator = issue.type === 'variant' && issue.expected !== 'Object';
    if ((enumerated || discriminator) && typeof issue.input === 'string') {
      return new OpenAIError(
        'invalid_value',
        `Invalid value for '${field}': expected ${issue.expected ?? 'another value'}, got ${describe(issue.input)}.`,
        { param },
      );
    }
    return new OpenAIError(
      'invalid_type',
      `Invalid type for '${field}': expected ${issue.expected ?? 'another type'}, got ${describe(issue.input)}.`,
      { param },
    );
  }
  if (issue.type === 'check') {
    return new OpenAIError('invalid_value', `Invalid value for '${field}': ${issue.message}`, {
      param,
    });
  }
  return new OpenAIError(
    'invalid_value',
    `Invalid value for '${field}': expected ${issue.expected ?? 'another value'}, got ${describe(issue.input)}.`,
    { param },
  );
}
