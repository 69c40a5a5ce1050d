import { afterEach, describe, expect, it } from 'vitest';
import { addedModelsChannelName } from '../../../src/models/added/added-models';
import { installName, installScope, setInstall } from '../../../src/protocol/install';
import { llamaCompatCache } from '../../../sw/llama-compat';
import { statusChannelName } from '../../../src/protocol/host/status';

afterEach(() => setInstall('http://127.0.0.1/'));

describe('install names', () => {
  it('keep their bare names at the root, so a root install finds what it stored before', () => {
    setInstall('https://user.github.io/');
    expect(installScope()).toBe('/');
    expect(statusChannelName()).toBe('hearth:status');
    expect(installName('hearth-models')).toBe('hearth-models');
  });

  it('carry the path of an install under a folder', () => {
    setInstall('https://user.github.io/repo/');
    expect(installScope()).toBe('/repo/');
    expect(statusChannelName()).toBe('hearth:status@/repo/');
    expect(addedModelsChannelName()).toBe('hearth:added-models@/repo/');
    expect(llamaCompatCache()).toBe('hearth-llama-compat@/repo/');
  });

  it('differ between two installs of one origin', () => {
    setInstall('https://user.github.io/a/');
    const a = [statusChannelName(), installName('hearth:engine-host'), installName('hearth-chat')];
    setInstall(new URL('https://user.github.io/b/'));
    const b = [statusChannelName(), installName('hearth:engine-host'), installName('hearth-chat')];
    for (const [i, name] of a.entries()) expect(name).not.toBe(b[i]);
  });

  it('take the path alone, whatever page or query the URL was given with', () => {
    setInstall('https://user.github.io/a/b/?x=1#y');
    expect(installName('hearth-engine')).toBe('hearth-engine@/a/b/');
  });
});
