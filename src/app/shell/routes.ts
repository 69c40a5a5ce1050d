/**
 * @module
 * The app's views as addresses: the hash names the view and its section (`#/settings/developer`,
 * `#/models/add`), so that a link, a reload or Back lands where it points. Pure: no `location`.
 */

/** One of the app's views. */
export type View = 'chat' | 'models' | 'documents' | 'settings';

/** The views in the order the nav lists them, with their names. */
export const VIEWS: { view: View; label: string }[] = [
  { view: 'chat', label: 'Chat' },
  { view: 'models', label: 'Models' },
  { view: 'documents', label: 'Documents' },
  { view: 'settings', label: 'Settings' },
];

/** The view and its section of an address's hash (`#/settings/developer`, `#/models/add`). */
export function routeOf(hash: string): { view: View; section: string } {
  const [name = '', section = ''] = hash.replace(/^#\/?/, '').split('/');
  // The API panel was a view of its own; old links land where it lives now.
  if (name === 'api') return { view: 'settings', section: 'developer' };
  const view = VIEWS.find((v) => v.view === name)?.view ?? 'chat';
  if (view === 'settings') return { view, section: section || 'preferences' };
  // `#/models/add` opens "Add a model" (the first-run card links to it).
  return { view, section: view === 'models' && section === 'add' ? 'add' : '' };
}
