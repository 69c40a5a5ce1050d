/**
 * @module
 * The engine's state in a word or three, for the one-line indicator under the conversations:
 * what it says and its tone (the colour of its dot; the words always say the same). Pure: no DOM.
 */
import type { HostStatus } from '../protocol/host/status';

/** How things stand: `ok` ready, `busy` on its way, `bad` needs the user. */
export type Tone = 'ok' | 'busy' | 'bad';

export interface EngineSummary {
  tone: Tone;
  text: string;
}

/** This tab's part in the engine-host election, as the page reports it. */
export type TabRole = 'starting' | 'waiting' | 'host' | 'refused' | 'unsupported' | 'uncontrolled';

/** Whether the API answered. */
export type ApiState = 'checking' | 'ready' | 'failed';

const percent = (fraction: number) => `${Math.floor(100 * Math.min(1, Math.max(0, fraction)))} %`;

/** The indicator's words for a role, the API's state and the host's last status. */
export function summarize(role: TabRole, api: ApiState, host: HostStatus | null): EngineSummary {
  if (role === 'unsupported') return { tone: 'bad', text: 'Not supported here' };
  if (role === 'refused' || role === 'uncontrolled') return { tone: 'bad', text: 'Reload needed' };
  if (role === 'starting') return { tone: 'busy', text: 'Starting…' };
  if (api === 'failed') return { tone: 'bad', text: 'Not answering' };
  if (api === 'checking') return { tone: 'busy', text: 'Checking…' };
  if (host?.loading)
    return { tone: 'busy', text: `Loading model ${percent(host.loading.progress)}` };
  const download = host?.downloads[0];
  if (download) {
    const more = host.downloads.length > 1 ? ` (+${host.downloads.length - 1})` : '';
    const done = download.bytes_total
      ? ` ${percent(download.bytes_done / download.bytes_total)}`
      : '…';
    return { tone: 'busy', text: `Downloading${done}${more}` };
  }
  return { tone: 'ok', text: 'Ready' };
}
