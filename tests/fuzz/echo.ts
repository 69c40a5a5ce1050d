/**
 * @module
 * The echo engine as docs/api.md's "The echo engine" defines it, written from the contract alone
 * (nothing of src/ is imported): the reply R, its tokens, the usage, `stop` and the token limit,
 * and the tools — a `/call` message calls the offered functions, and after tool results R is what
 * the tools answered. Both endpoints' oracles (oracle.ts for chat, responses-oracle.ts for the
 * Responses API) reduce a request to an `EchoRequest` and ask `echoAnswer`.
 */

/** Lone UTF-16 surrogates become U+FFFD (docs/api.md, Messages). */
export function wellFormed(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += text[i]! + text[i + 1]!;
        i += 1;
        continue;
      }
      out += '\uFFFD';
    } else if (c >= 0xdc00 && c <= 0xdfff) out += '\uFFFD';
    else out += text[i];
  }
  return out;
}

/** R split by `/\S+\s*\/g`, leading whitespace joined to the first; only whitespace: one token. */
export function echoTokens(reply: string): string[] {
  const tokens = reply.match(/\S+\s*/g) ?? [];
  if (tokens.length === 0) return reply === '' ? [] : [reply];
  const lead = reply.slice(0, reply.length - tokens.join('').length);
  tokens[0] = lead + tokens[0];
  return tokens;
}

/** One message as the echo engine reads it: its role, its text, and how many calls it made. */
export interface EchoMessage {
  /** `system` stands for system and developer messages alike. */
  role: 'system' | 'user' | 'assistant' | 'tool';
  text: string;
  calls?: number;
}

/** What of a valid request decides the echo engine's answer. */
export interface EchoRequest {
  messages: EchoMessage[];
  /** The names of the functions offered. */
  tools: string[];
  /** `tool_choice: "none"`. */
  noTools: boolean;
  stop: string[];
  /** `max_tokens` (or the Responses API's `max_output_tokens`); null for none. */
  limit: number | null;
}

/** A call the echo engine makes. */
export interface EchoCall {
  id: string;
  name: string;
  arguments: string;
}

/** The echo engine's answer to a valid request. */
export interface EchoAnswer {
  content: string;
  /** The tokens of `content`, one stream chunk (or text delta) each. */
  tokens: string[];
  finish_reason: 'stop' | 'length' | 'tool_calls';
  prompt_tokens: number;
  /** Null where the contract does not fix it (a call: "counts the tokens emitted", and none is). */
  completion_tokens: number | null;
  calls: EchoCall[];
}

/** A `/call <name> <arguments>` line: the name, and the arguments as written (`{}` for none). */
const CALL_LINE = /^\/call[ \t]+(\S+)(?:[ \t]+(.*))?$/;

/**
 * The calls of a last user message whose every non-empty line (one at least) is `/call <name>
 * <arguments>`, each naming an offered function; null when it is not such a message.
 */
function callsOf(text: string, offered: string[], earlier: number): EchoCall[] | null {
  const lines = text.split(/\r?\n/).filter((line) => line !== '');
  const calls: EchoCall[] = [];
  for (const line of lines) {
    const match = CALL_LINE.exec(line);
    if (!match || !offered.includes(match[1]!)) return null;
    const args = match[2]?.trim() || '{}';
    calls.push({ id: `call_echo_${earlier + calls.length}`, name: match[1]!, arguments: args });
  }
  return calls.length > 0 ? calls : null;
}

/** The exact answer of the echo engine to a valid request. */
export function echoAnswer(request: EchoRequest): EchoAnswer {
  const system: string[] = [];
  const others: EchoMessage[] = [];
  for (const m of request.messages) {
    if (m.role === 'system') system.push(m.text);
    else others.push(m);
  }
  // System and developer messages merge into one, joined by one space, placed first.
  const merged = system.join(' ');
  const prompt_tokens =
    (system.length > 0 ? echoTokens(merged).length : 0) +
    others.reduce((n, m) => n + echoTokens(m.text).length, 0);
  const last = others.at(-1);
  const earlier = others.reduce((n, m) => n + (m.calls ?? 0), 0);
  const calls =
    request.tools.length > 0 && !request.noTools && last?.role === 'user'
      ? callsOf(last.text, request.tools, earlier)
      : null;
  if (calls) {
    return {
      content: '',
      tokens: [],
      finish_reason: 'tool_calls',
      prompt_tokens,
      completion_tokens: null,
      calls,
    };
  }
  let said = last?.text ?? '';
  if (last?.role === 'tool') {
    // After tool results, R is what the tools answered since the last call.
    const since = others.findLastIndex((m) => m.role !== 'tool');
    said = others
      .slice(since + 1)
      .map((m) => m.text)
      .join('\n');
  }
  const reply = system.length > 0 ? `[${merged}] ${said}` : said;
  let end = reply.length;
  for (const s of request.stop) {
    const at = reply.indexOf(wellFormed(s));
    if (at !== -1 && at < end) end = at;
  }
  let tokens = echoTokens(reply.slice(0, end));
  let finish_reason: EchoAnswer['finish_reason'] = 'stop';
  if (request.limit !== null && tokens.length > request.limit) {
    tokens = tokens.slice(0, request.limit);
    finish_reason = 'length';
  }
  return {
    content: tokens.join(''),
    tokens,
    finish_reason,
    prompt_tokens,
    completion_tokens: tokens.length,
    calls: [],
  };
}
