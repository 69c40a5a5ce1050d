/**
 * @module
 * The Models view's filters as the user sees them: each filter's label and its choices in words,
 * drawn as labelled selects. What a filter keeps is model-search.ts's.
 */
import { html } from 'lit';
import type { Filters } from './model-search';

/** The choices of each filter, as the selects offer them. */
const CHOICES: { [K in keyof Filters]: [Filters[K], string][] } = {
  size: [
    ['any', 'Any size'],
    ['small', 'Under 1 GB'],
    ['medium', '1–4 GB'],
    ['large', 'Over 4 GB'],
  ],
  capability: [
    ['any', 'Anything'],
    ['chat', 'Chat'],
    ['coding', 'Coding'],
    ['reasoning', 'Reasoning'],
    ['tools', 'Tools'],
    ['maths', 'Maths'],
    ['embeddings', 'Embeddings (retrieval)'],
  ],
  engine: [
    ['any', 'Any engine'],
    ['webllm', 'WebLLM'],
    ['llama.cpp', 'llama.cpp'],
    ['server', 'Your servers'],
  ],
  show: [
    ['runnable', 'What runs here'],
    ['downloaded', 'Downloaded'],
    ['all', 'All models'],
  ],
  sort: [
    ['recommended', 'Recommended'],
    ['smallest', 'Smallest first'],
    ['largest', 'Largest first'],
    ['name', 'Name'],
  ],
};

const LABELS: Record<keyof Filters, string> = {
  size: 'Size',
  capability: 'Good for',
  engine: 'Engine',
  show: 'Show',
  sort: 'Sort by',
};

/** The filters' selects, each showing `filters`' choice; `pick` gets the value the user picked. */
export function renderFilters(filters: Filters, pick: (key: keyof Filters, value: string) => void) {
  return html`<div class="filters">
    ${(Object.keys(CHOICES) as (keyof Filters)[]).map(
      (key) =>
        html`<div class="filter">
          <label for="filter-${key}">${LABELS[key]}</label>
          <select
            id="filter-${key}"
            .value=${filters[key]}
            @change=${(e: Event) => pick(key, (e.target as HTMLSelectElement).value)}
          >
            ${CHOICES[key].map(
              ([value, label]) =>
                html`<option value=${value} ?selected=${filters[key] === value}>${label}</option>`,
            )}
          </select>
        </div>`,
    )}
  </div>`;
}
