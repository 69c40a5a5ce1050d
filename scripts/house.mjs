#!/usr/bin/env node
// The house's measures (docs/architecture.md): source files' sizes, folders' sizes and import
// cycles, over the code that ships (src/, sw/, relay/, bin/), tests and tooling aside.
// `node scripts/house.mjs` prints them; `--check` also exits 1 when one is over its limit.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROOTS = ['src', 'sw', 'relay', 'bin'];
const SOURCE = /\.(ts|js|mjs)$/;
/** The limits issue 29 set: no file over 400 lines, a median of at most 120, no cycle. */
export const LIMITS = { fileLines: 400, medianLines: 120, folderFiles: 12 };

/** @param {string} dir @returns {string[]} */
function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path);
    return SOURCE.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * Relative imports, static and dynamic, of one file, resolved to files that exist.
 * @param {string} file
 * @param {Set<string>} known
 * @returns {string[]}
 */
function importsOf(file, known) {
  const text = readFileSync(file, 'utf8');
  const found = [];
  const pattern =
    /(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;
  for (const match of text.matchAll(pattern)) {
    // `import type` costs nothing at run time, but a cycle of types still ties two modules.
    const spec = match[1] ?? match[2] ?? '';
    const base = resolve(dirname(file), spec);
    const candidates = [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
    const hit = candidates.find((candidate) => known.has(candidate));
    if (hit) found.push(hit);
  }
  return found;
}

/**
 * Strongly connected components of more than one file (Tarjan): each is an import cycle.
 * @param {Map<string, string[]>} graph
 * @returns {string[][]}
 */
function cycles(graph) {
  let index = 0;
  /** @type {string[]} */
  const stack = [];
  /** @type {Map<string, { index: number, low: number, onStack: boolean }>} */
  const meta = new Map();
  /** @type {string[][]} */
  const out = [];
  /** @param {string} node */
  const visit = (node) => {
    const at = (/** @type {string} */ name) =>
      /** @type {{ index: number, low: number, onStack: boolean }} */ (meta.get(name));
    meta.set(node, { index, low: index, onStack: true });
    index += 1;
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!meta.has(next)) {
        visit(next);
        at(node).low = Math.min(at(node).low, at(next).low);
      } else if (at(next).onStack) {
        at(node).low = Math.min(at(node).low, at(next).index);
      }
    }
    if (at(node).low === at(node).index) {
      /** @type {string[]} */
      const component = [];
      let member;
      do {
        member = /** @type {string} */ (stack.pop());
        at(member).onStack = false;
        component.push(member);
      } while (member !== node);
      if (component.length > 1) out.push(component);
    }
  };
  for (const node of graph.keys()) if (!meta.has(node)) visit(node);
  return out;
}

export function measure() {
  const files = ROOTS.flatMap((dir) => walk(join(root, dir)));
  const known = new Set(files);
  const lines = new Map(files.map((f) => [f, readFileSync(f, 'utf8').split('\n').length - 1]));
  const sorted = [...lines.values()].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  const at = (/** @type {number} */ i) => sorted[i] ?? 0;
  const median = sorted.length % 2 ? at(Math.floor(middle)) : (at(middle - 1) + at(middle)) / 2;
  /** @type {Map<string, number>} */
  const folders = new Map();
  for (const file of files) {
    const folder = relative(root, dirname(file));
    folders.set(folder, (folders.get(folder) ?? 0) + 1);
  }
  const graph = new Map(files.map((f) => [f, importsOf(f, known)]));
  const rel = (/** @type {string} */ f) => relative(root, f);
  return {
    files: files.length,
    median,
    tooLong: [...lines]
      .filter(([, n]) => n > LIMITS.fileLines)
      .sort((a, b) => b[1] - a[1])
      .map(([f, n]) => ({ file: rel(f), lines: n })),
    crowded: [...folders]
      .filter(([, n]) => n > LIMITS.folderFiles)
      .map(([folder, n]) => ({ folder, files: n })),
    cycles: cycles(graph).map((component) => component.map(rel).sort()),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const m = measure();
  console.log(`${m.files} source files, median ${m.median} lines (limit ${LIMITS.medianLines})`);
  console.log(`Files over ${LIMITS.fileLines} lines: ${m.tooLong.length}`);
  for (const { file, lines } of m.tooLong) console.log(`  ${String(lines).padStart(5)}  ${file}`);
  console.log(`Folders over ${LIMITS.folderFiles} files: ${m.crowded.length}`);
  for (const { folder, files } of m.crowded)
    console.log(`  ${String(files).padStart(5)}  ${folder}/`);
  console.log(`Import cycles: ${m.cycles.length}`);
  for (const cycle of m.cycles) console.log(`  ${cycle.join(' ↔ ')}`);
  const over =
    m.median > LIMITS.medianLines || m.tooLong.length || m.crowded.length || m.cycles.length;
  if (process.argv.includes('--check') && over) process.exit(1);
}
