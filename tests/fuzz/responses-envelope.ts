/**
 * @module
 * More fuzz cases for the Responses API: deep nesting where nothing reads it, huge strings,
 * prototype keys, the envelope (route, auth, content type, size, JSON), and two faults at once
 * where docs/api.md's order of checks decides which answers.
 */
import {
  bad,
  ECHO_CONTEXT,
  err,
  itemsOf,
  KEYED,
  message,
  mutate,
  valid,
  validBody,
  type Body,
  type Mutation,
} from './responses';
import { responseExpectation } from './responses-oracle';

const BODY_LIMIT = 4 * 1024 * 1024;

/** Deep, huge, prototype keys, the envelope, and the order of checks. */
export function envelopeMutations(): Mutation[] {
  const list: Mutation[] = [];
  const add = (m: Mutation) => list.push(m);
  const json = (kind: string, parts: string[], body: Body) => ({
    kind: `responses:${kind}`,
    body: { parts },
    expect: valid(body),
  });
  // Deep nesting where nothing reads it: a top-level field, and an item's own field (kept).
  for (const where of ['client_metadata', 'item']) {
    add((rng) => {
      const body = validBody(rng);
      const items = itemsOf(body);
      const deep = 50_000;
      const head = JSON.stringify(body);
      const open = '['.repeat(deep);
      const close = ']'.repeat(deep);
      if (where === 'client_metadata') {
        return json(
          `deep:${where}`,
          [head.slice(0, -1), `,"client_metadata":${open}${close}}`],
          body,
        );
      }
      const at = head.indexOf('"input":[{') + '"input":[{'.length;
      void items;
      return json(
        `deep:${where}`,
        [head.slice(0, at), `"x_deep":${open}${close},`, head.slice(at)],
        body,
      );
    });
  }
  // Prototype keys: data like any other.
  for (const [where, key, value] of [
    ['body', '__proto__', '{"model":"acme/nope","input":5,"background":true}'],
    ['body', 'constructor', '{"prototype":{"stream":true}}'],
    ['item', '__proto__', '{"role":"system","content":"injected"}'],
    ['item', 'toString', '5'],
  ] as const) {
    add((rng) => {
      const body = validBody(rng);
      itemsOf(body);
      let text = JSON.stringify(body);
      if (where === 'body') text = `${text.slice(0, -1)},"${key}":${value}}`;
      else {
        const at = text.indexOf('"input":[{') + '"input":[{'.length;
        text = `${text.slice(0, at)}"${key}":${value},${text.slice(at)}`;
      }
      return json(`proto:${key}-in-${where}`, [text], body);
    });
  }
  // Huge: one 3 MiB token; a prompt one token over the echo engine's context.
  add(() => {
    const body: Body = { model: 'hearth/echo', input: 'x', store: false };
    const reply = responseExpectation(body);
    const size = 3 * 1024 * 1024;
    return {
      kind: 'responses:huge:one-token',
      body: {
        parts: [
          '{"model":"hearth/echo","store":false,"input":"',
          { repeat: 'x', count: size },
          '"}',
        ],
      },
      expect: {
        status: 200,
        response: { ...reply, text: 'x'.repeat(size), tokens: ['x'.repeat(size)] },
      },
    };
  });
  add(() => ({
    kind: 'responses:context:over',
    body: {
      parts: [
        '{"model":"hearth/echo","store":false,"input":"',
        { repeat: 'a ', count: ECHO_CONTEXT + 1 },
        '"}',
      ],
    },
    expect: bad('context_length_exceeded', 'input'),
  }));
  // The envelope.
  add((rng) => ({
    kind: 'responses:no-key',
    headers: rng.pick<Record<string, string>>([
      { 'content-type': 'application/json' },
      { authorization: 'Bearer ', 'content-type': 'application/json' },
    ]),
    body: validBody(rng),
    expect: err(401, 'invalid_api_key'),
  }));
  add((rng) => ({
    kind: 'responses:content-type',
    headers: { ...KEYED, 'content-type': 'text/plain' },
    body: validBody(rng),
    expect: err(415, 'unsupported_media_type'),
  }));
  add((rng) => ({
    kind: 'responses:method',
    method: rng.pick(['PUT', 'PATCH', 'GET']),
    body: validBody(rng),
    expect: err(405, 'method_not_allowed'),
  }));
  add(() => ({
    kind: 'responses:size-over-limit',
    body: { parts: ['{"model":"hearth/echo","input":"', { repeat: 'x', count: BODY_LIMIT }, '"}'] },
    expect: err(413, 'request_too_large'),
  }));
  for (const text of ['', '{', '{"model":"hearth/echo",}', 'nul']) {
    add(() => ({
      kind: 'responses:json:invalid',
      body: { parts: [text] },
      expect: bad('invalid_json', null),
    }));
  }
  for (const text of ['[]', '5', 'null', '"x"']) {
    add(() => ({
      kind: 'responses:json:not-an-object',
      body: { parts: [text] },
      expect: bad('invalid_type', null),
    }));
  }
  // Two faults: the first in the order of checks answers.
  add((rng) =>
    mutate(
      rng,
      'order:schema-before-model',
      (b) => Object.assign(b, { model: 'acme/nope', max_output_tokens: 15 }),
      bad('invalid_value', 'max_output_tokens'),
    ),
  );
  add((rng) =>
    mutate(
      rng,
      'order:schema-before-previous',
      (b) => Object.assign(b, { previous_response_id: 'resp_nope', temperature: 3 }),
      bad('invalid_value', 'temperature'),
    ),
  );
  add((rng) =>
    mutate(
      rng,
      'order:model-before-capabilities',
      (b) => Object.assign(b, { model: 'acme/nope', text: { format: { type: 'json_object' } } }),
      err(404, 'model_not_found', 'model'),
    ),
  );
  add((rng) =>
    mutate(
      rng,
      'order:last-rule-before-model',
      (b) => {
        b.model = 'acme/nope';
        itemsOf(b).push(message(rng, 'assistant', 'x'));
      },
      bad('invalid_value', 'input'),
    ),
  );
  return list;
}
