import { describe, expect, it } from 'vitest';
import {
  described,
  fieldAria,
  errorField,
  nameFromUrl,
} from '../../../../../src/app/settings/servers/server-form';

describe('nameFromUrl', () => {
  it.each([
    ['http://gpu-box:8000/v1', 'gpu-box'],
    ['gpu-box:8000/v1', 'gpu-box'],
    ['  https://API.Example.com/v1  ', 'api-example-com'],
    ['http://192.168.1.20:11434/v1', '192-168-1-20'],
  ])('names a server at %s "%s"', (url, name) => {
    expect(nameFromUrl(url)).toBe(name);
  });

  it('gives no name for what is no address', () => {
    expect(nameFromUrl('')).toBe('');
    expect(nameFromUrl('not an address')).toBe('');
  });
});

describe('errorField', () => {
  it("takes the field from the API's param", () => {
    expect(errorField('name', 'http://x/v1')).toBe('name');
    expect(errorField('base_url', 'http://x/v1')).toBe('base_url');
    expect(errorField('api_key', 'http://x/v1')).toBe('api_key');
  });

  it('blames the address when none was typed, else no field', () => {
    expect(errorField(null, '')).toBe('base_url');
    expect(errorField('model', '')).toBe('base_url');
    expect(errorField(null, 'http://x/v1')).toBeNull();
  });
});

describe('described', () => {
  it('adds why the field is disabled while a server is being added', () => {
    expect(described('server-name-hint', false)).toBe('server-name-hint');
    expect(described('server-name-hint', true)).toBe('server-name-hint server-adding');
    expect(described('', true)).toBe('server-adding');
  });
});

describe('fieldAria', () => {
  const nameError = { text: 'The name is taken.', field: 'name' as const };

  it('marks only the field the error is about invalid, and points it at the error after its hint', () => {
    expect(fieldAria('name', 'server-name-hint', nameError, false)).toEqual({
      invalid: 'true',
      describedBy: 'server-name-hint server-error',
    });
    expect(fieldAria('api_key', 'server-key-hint', nameError, false)).toEqual({
      invalid: 'false',
      describedBy: 'server-key-hint',
    });
  });

  it('describes a field with no hint and no error by nothing, or only by why it waits while adding', () => {
    expect(fieldAria('base_url', null, null, false)).toEqual({ invalid: 'false', describedBy: '' });
    expect(fieldAria('base_url', null, null, true).describedBy).toBe('server-adding');
    expect(fieldAria('base_url', null, { text: 'Down.', field: 'base_url' }, true)).toEqual({
      invalid: 'true',
      describedBy: 'server-error server-adding',
    });
  });
});
