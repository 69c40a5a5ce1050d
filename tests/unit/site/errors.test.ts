import { describe, expect, it, vi } from 'vitest';
import { errorOfResponse, HearthError } from '../../../src/site/errors';

describe('HearthError', () => {
  it('is an instance of the class of another bundle’s copy, as the loader’s errors are of the entry’s', async () => {
    vi.resetModules();
    const other = (await import('../../../src/site/errors')).HearthError;
    expect(other).not.toBe(HearthError);
    const fromLoader = new other('model_not_found', 'no such model', { status: 404 });
    expect(fromLoader instanceof HearthError).toBe(true);
    expect(new HearthError('uncontrolled', 'x') instanceof other).toBe(true);
    expect(fromLoader instanceof Error).toBe(true);
  });

  it('is not claimed by a plain Error, nor by an object named HearthError', () => {
    expect(new Error('x') instanceof HearthError).toBe(false);
    const lookalike = Object.assign(new Error('x'), { name: 'HearthError', code: 'uncontrolled' });
    expect(lookalike instanceof HearthError).toBe(false);
    expect((null as unknown as object) instanceof HearthError).toBe(false);
  });

  it('carries the code, status and param it was given, and null where it was not', () => {
    const given = new HearthError('model_exists', 'taken', { status: 409, param: 'id' });
    expect([given.name, given.code, given.status, given.param, given.message]).toEqual([
      'HearthError',
      'model_exists',
      409,
      'id',
      'taken',
    ]);
    const bare = new HearthError('unsupported', 'no');
    expect([bare.status, bare.param]).toEqual([null, null]);
  });
});

describe('errorOfResponse', () => {
  it('takes the API’s code, message, param and the status from an OpenAI-shaped error', async () => {
    const response = Response.json(
      {
        error: {
          message: 'No model',
          type: 'invalid_request_error',
          param: 'model',
          code: 'model_not_found',
        },
      },
      { status: 404 },
    );
    const error = await errorOfResponse(response);
    expect(error).toBeInstanceOf(HearthError);
    expect([error.code, error.message, error.param, error.status]).toEqual([
      'model_not_found',
      'No model',
      'model',
      404,
    ]);
  });

  it('says what came back when the body is not the API’s', async () => {
    const error = await errorOfResponse(new Response('<html>gateway</html>', { status: 502 }));
    expect(error.code).toBe('http_error');
    expect(error.status).toBe(502);
    expect(error.message).toContain('502');
    expect(error.message).toContain('<html>gateway</html>');
  });
});
