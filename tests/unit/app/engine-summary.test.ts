import { describe, expect, it } from 'vitest';
import type { HostStatus } from '../../../src/protocol/host/status';
import { summarize } from '../../../src/app/engine-summary';

const host = (over: Partial<HostStatus> = {}): HostStatus =>
  ({
    host: { id: 'abc', build: 'b' },
    models: [],
    loaded_model: null,
    loading: null,
    load_error: null,
    failing_models: {},
    last_speed: null,
    downloads: [],
    evicted_models: {},
    queue: { running: 0, waiting: 0 },
    open_ports: 0,
    device: null,
    ...over,
  }) as HostStatus;

const download = (bytes_done: number, bytes_total: number | null) => ({
  object: 'hearth.download' as const,
  model: 'm',
  phase: 'files' as const,
  bytes_done,
  bytes_total,
  files_done: 0,
  files_total: null,
  file: null,
});

describe('the engine indicator', () => {
  it('says what is wrong before anything else', () => {
    expect(summarize('unsupported', 'checking', null)).toEqual({
      tone: 'bad',
      text: 'Not supported here',
    });
    expect(summarize('refused', 'ready', host())).toEqual({ tone: 'bad', text: 'Reload needed' });
    expect(summarize('host', 'failed', host())).toEqual({ tone: 'bad', text: 'Not answering' });
  });

  it('says it is on its way while it starts and checks', () => {
    expect(summarize('starting', 'checking', null)).toEqual({ tone: 'busy', text: 'Starting…' });
    expect(summarize('waiting', 'checking', null)).toEqual({ tone: 'busy', text: 'Checking…' });
  });

  it('shows how far a model load or a download is', () => {
    const loading = { model: 'm', phase: 'fetch', progress: 0.426, text: '' };
    expect(summarize('host', 'ready', host({ loading })).text).toBe('Loading model 42 %');
    expect(summarize('host', 'ready', host({ downloads: [download(25, 100)] })).text).toBe(
      'Downloading 25 %',
    );
    expect(
      summarize('host', 'ready', host({ downloads: [download(5, null), download(1, 2)] })).text,
    ).toBe('Downloading… (+1)');
  });

  it('is ready when nothing else is going on', () => {
    expect(summarize('waiting', 'ready', host())).toEqual({ tone: 'ok', text: 'Ready' });
    expect(summarize('host', 'ready', null)).toEqual({ tone: 'ok', text: 'Ready' });
  });
});
