/**
 * @module
 * The add-a-server form's rules, pure: the name a server gets when the user gives none, which
 * field an error of the API is about, and the ids that tie the form's fields, hints and errors
 * and the servers' cards together. Shared by `<servers-view>` and its controller.
 */
/**
 * A server's name from its address when the user gave none: `gpu-box` for
 * `http://gpu-box:8000/v1` (and for `gpu-box:8000/v1`, whose missing `http://` the API names).
 */
export function nameFromUrl(text: string): string {
  const typed = text.trim();
  for (const candidate of [typed, `http://${typed}`]) {
    let url: URL;
    try {
      url = new URL(candidate);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    const slug = url.hostname
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .slice(0, 40)
      .replace(/^-+|-+$/g, '');
    if (slug) return slug;
  }
  return '';
}

/** An error of the form, with the field it is about (the API's `param`). */
export interface FormError {
  text: string;
  field: 'name' | 'base_url' | 'api_key' | null;
}

/** The id of the line that says why the form is disabled while a server is being added. */
export const ADDING = 'server-adding';

/** A field's `aria-describedby`: its own hints, and while adding, why it is disabled. */
export function described(ids: string, adding: boolean): string {
  return adding ? `${ids} ${ADDING}`.trim() : ids;
}

/** The id of the line that shows the form's error. */
export const FORM_ERROR = 'server-error';

/**
 * A field's ARIA state: invalid when the form's error is about it; described by its hint (if it
 * has one), by that error, and while adding, by why it is disabled.
 */
export function fieldAria(
  field: NonNullable<FormError['field']>,
  hint: string | null,
  error: FormError | null,
  adding: boolean,
): { invalid: 'true' | 'false'; describedBy: string } {
  const about = error?.field === field;
  const ids = [hint, about ? FORM_ERROR : null].filter((id) => id !== null).join(' ');
  return { invalid: about ? 'true' : 'false', describedBy: described(ids, adding) };
}

/** What an error says, for the user. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The id of a server's heading (names are slugs: safe in an id). */
export const headingId = (name: string) => `server-heading-${name}`;

/** The id of the form's field for the API's `param`. */
export function fieldId(field: 'name' | 'base_url' | 'api_key'): string {
  return field === 'name' ? 'server-name' : field === 'base_url' ? 'server-url' : 'server-key';
}

/**
 * The field an error of adding a server is about: the API's `param`, else, with no address typed,
 * the address.
 */
export function errorField(param: string | null, baseUrl: string): FormError['field'] {
  if (param === 'name' || param === 'base_url' || param === 'api_key') return param;
  // No name typed: the one made from the address is the user's only by that address.
  return !baseUrl ? 'base_url' : null;
}
