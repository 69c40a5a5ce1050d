/**
 * @module
 * Syntax highlighting for the code blocks of replies, with highlight.js loaded only when a reply
 * has code in a language it knows, and then only that language's grammar (each is its own
 * chunk, precached with the app for offline use). highlight.js escapes the code and wraps its
 * tokens in `<span class="hljs-…">`, nothing else: no inline style, so the page's Content
 * Security Policy holds, and the colours come from classes (chat-message.ts).
 */
import type { HLJSApi, LanguageFn } from 'highlight.js';

/** The grammars Hearth highlights, by highlight.js name. */
const GRAMMARS: Record<string, () => Promise<{ default: LanguageFn }>> = {
  bash: () => import('highlight.js/lib/languages/bash'),
  c: () => import('highlight.js/lib/languages/c'),
  cpp: () => import('highlight.js/lib/languages/cpp'),
  css: () => import('highlight.js/lib/languages/css'),
  diff: () => import('highlight.js/lib/languages/diff'),
  go: () => import('highlight.js/lib/languages/go'),
  java: () => import('highlight.js/lib/languages/java'),
  javascript: () => import('highlight.js/lib/languages/javascript'),
  json: () => import('highlight.js/lib/languages/json'),
  markdown: () => import('highlight.js/lib/languages/markdown'),
  python: () => import('highlight.js/lib/languages/python'),
  rust: () => import('highlight.js/lib/languages/rust'),
  sql: () => import('highlight.js/lib/languages/sql'),
  typescript: () => import('highlight.js/lib/languages/typescript'),
  xml: () => import('highlight.js/lib/languages/xml'),
  yaml: () => import('highlight.js/lib/languages/yaml'),
};

/** Other names a fence uses for them. */
const ALIASES: Record<string, string> = {
  'c++': 'cpp',
  cc: 'cpp',
  h: 'c',
  hpp: 'cpp',
  html: 'xml',
  js: 'javascript',
  jsx: 'javascript',
  md: 'markdown',
  mjs: 'javascript',
  patch: 'diff',
  py: 'python',
  rs: 'rust',
  sh: 'bash',
  shell: 'bash',
  svg: 'xml',
  ts: 'typescript',
  tsx: 'typescript',
  yml: 'yaml',
  zsh: 'bash',
  golang: 'go',
};

/** The grammar for a fence's language, or null for one Hearth does not highlight. */
export function grammarOf(language: string): string | null {
  const name = language.toLowerCase();
  const grammar = ALIASES[name] ?? name;
  return Object.hasOwn(GRAMMARS, grammar) ? grammar : null;
}

let core: Promise<HLJSApi> | null = null;
let hljs: HLJSApi | null = null;
const loading = new Map<string, Promise<void>>();

/**
 * Highlighted HTML for `code` in `grammar` (from `grammarOf`), or null while highlight.js or
 * the grammar is not loaded yet: then it starts loading them, and `load` is the promise of it.
 */
export function highlight(
  code: string,
  grammar: string,
): { html: string } | { html: null; load: Promise<void> } {
  if (hljs?.getLanguage(grammar)) {
    return { html: hljs.highlight(code, { language: grammar, ignoreIllegals: true }).value };
  }
  return { html: null, load: loadGrammar(grammar) };
}

function loadGrammar(grammar: string): Promise<void> {
  let load = loading.get(grammar);
  if (!load) {
    core ??= import('highlight.js/lib/core').then(
      (m) => (hljs = m.default),
      (err: unknown) => {
        core = null;
        throw err;
      },
    );
    load = Promise.all([core, GRAMMARS[grammar]!()]).then(([api, language]) => {
      api.registerLanguage(grammar, language.default);
    });
    // A failed load (offline before the chunk was cached) is tried again next time.
    load.catch(() => loading.delete(grammar));
    loading.set(grammar, load);
  }
  return load;
}
