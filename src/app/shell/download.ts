/**
 * @module
 * Saves text as a file the browser downloads: the way the chat's exports reach the user.
 */

/** Downloads `text` as a file named `name`. */
export function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  // The download has started by then; the object URL would otherwise live as long as the page.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
