import { describe, expect, it } from 'vitest';
import { sharedOrigin } from '../../../../../src/app/settings/servers/shared-origin';

describe('sharedOrigin', () => {
  it.each([
    ['alice.github.io', '/hearth/', 'github.io'],
    ['alice.github.io', '/', 'github.io'],
    ['Group.GitLab.io', '/', 'gitlab.io'],
    ['bob.codeberg.page', '/', 'codeberg.page'],
  ])('calls %s (base %s) shared: a host that serves many projects', (host, base, suffix) => {
    expect(sharedOrigin(host, base)).toEqual({ kind: 'host', host: host.toLowerCase(), suffix });
  });

  it('calls an install below the root of its own host shared, by its path', () => {
    expect(sharedOrigin('tools.example.com', '/hearth/')).toEqual({
      kind: 'path',
      host: 'tools.example.com',
      base: '/hearth/',
    });
    expect(sharedOrigin('hearth.example.com', 'https://hearth.example.com/apps/h/')).toMatchObject({
      kind: 'path',
      base: '/apps/h/',
    });
  });

  it.each([
    ['hearth.example.com', '/'],
    ['localhost', '/'],
    ['my-hearth.netlify.app', '/'],
    ['notgithub.io', '/'],
    ['github.io.example.com', '/'],
  ])('calls %s at %s its own', (host, base) => {
    expect(sharedOrigin(host, base)).toBeNull();
  });
});
