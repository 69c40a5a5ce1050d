import { describe, expect, it } from 'vitest';
import { OpenAIError } from '../../../src/protocol/errors';

describe('OpenAIError', () => {
  it.each([
    ['invalid_json', 400, 'invalid_request_error'],
    ['invalid_api_key', 401, 'authentication_error'],
    ['model_not_found', 404, 'not_found_error'],
    ['method_not_allowed', 405, 'invalid_request_error'],
    ['request_too_large', 413, 'invalid_request_error'],
    ['unsupported_media_type', 415, 'invalid_request_error'],
    ['queue_full', 429, 'rate_limit_error'],
    ['engine_error', 500, 'server_error'],
    ['engine_unavailable', 503, 'unavailable_error'],
    ['download_unreachable', 503, 'unavailable_error'],
  ] as const)('gives %s the status %i and type %s', (code, status, type) => {
    const error = new OpenAIError(code, 'm');
    expect(error.status).toBe(status);
    expect(error.toBody()).toEqual({ error: { message: 'm', type, param: null, code } });
  });

  it('renders retry-after in whole seconds and x-should-retry', () => {
    const error = new OpenAIError('webgpu_unavailable', 'm', {
      retryAfter: 1.2,
      shouldRetry: false,
    });
    expect(error.responseHeaders()).toEqual({ 'retry-after': '2', 'x-should-retry': 'false' });
  });

  it('survives structured cloning as SerializedError', () => {
    const error = new OpenAIError('queue_full', 'busy', { param: 'x', retryAfter: 5 });
    const copy = OpenAIError.deserialize(structuredClone(error.serialize()));
    expect(copy).toBeInstanceOf(OpenAIError);
    expect(copy.toBody()).toEqual(error.toBody());
    expect(copy.responseHeaders()).toEqual(error.responseHeaders());
  });

  it('turns an unknown serialized code into engine_error', () => {
    const copy = OpenAIError.deserialize({ code: 'nope' as 'engine_error', message: 'm' });
    expect(copy.code).toBe('engine_error');
  });

  it('turns anything unexpected thrown in the API layer into a 500 server_error that says it is an internal error, keeping its message', () => {
    const error = OpenAIError.from(new TypeError('boom'));
    expect(error.status).toBe(500);
    expect(error.toBody().error).toMatchObject({ type: 'server_error', code: 'server_error' });
    expect(error.message).toMatch(/internal error/i);
    expect(error.message).toContain('TypeError: boom');
    expect(error.responseHeaders()).toEqual({ 'x-should-retry': 'false' });
    expect(OpenAIError.from('a string').message).toContain('a string');
  });

  it('turns anything an engine threw into a 500 engine_error keeping its message', () => {
    const error = OpenAIError.fromEngine(new RangeError('out of memory'));
    expect(error.status).toBe(500);
    expect(error.toBody().error).toMatchObject({ type: 'server_error', code: 'engine_error' });
    expect(error.message).toContain('RangeError: out of memory');
    expect(OpenAIError.fromEngine('a string').message).toContain('a string');
  });

  it('passes an OpenAIError through either way', () => {
    const error = new OpenAIError('queue_full', 'busy');
    expect(OpenAIError.from(error)).toBe(error);
    expect(OpenAIError.fromEngine(error)).toBe(error);
  });
});

describe('errors a retry cannot help', () => {
  it('tells clients not to retry a full disk (the openai SDK retries a 507 otherwise)', () => {
    expect(new OpenAIError('storage_full', 'full').responseHeaders()).toMatchObject({
      'x-should-retry': 'false',
    });
    // It survives the bridge, and an error that says otherwise keeps its word.
    const crossed = OpenAIError.deserialize(new OpenAIError('storage_full', 'full').serialize());
    expect(crossed.shouldRetry).toBe(false);
    expect(new OpenAIError('engine_busy', 'busy').shouldRetry).toBeUndefined();
  });
});
