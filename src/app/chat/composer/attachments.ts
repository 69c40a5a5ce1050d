/**
 * @module
 * Images attached to the composer's draft: files picked with the attach button, pasted, or
 * dropped (documents among them go to the conversation's documents, ../../documents/), checked as the API would check them (its formats, its 20 MiB a file) so that a refusal
 * comes at once, by the file's name, and read as `data:` URLs, which the conversation keeps and
 * the API takes as they are.
 */

/** The formats the API takes (GIF: its first frame). */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];
/** The API's limit on one image's file (src/api/images.ts). */
export const IMAGE_FILE_LIMIT = 20 * 1024 * 1024;

/**
 * The files of a paste or a drop the chat takes: images, and documents by `isDocument` (other
 * files and text are left to the browser).
 */
export function attachableFiles(
  transfer: DataTransfer | null,
  isDocument: (file: File) => boolean,
): File[] {
  return [...(transfer?.files ?? [])].filter(
    (file) => file.type.startsWith('image/') || isDocument(file),
  );
}

/** Why `file` cannot be attached, or null when it can. */
export function refusal(file: File): string | null {
  if (!IMAGE_TYPES.includes(file.type)) {
    return `${file.name || 'That file'} is not a PNG, JPEG, WebP or GIF image, nor a PDF, Markdown, text or HTML document.`;
  }
  if (file.size > IMAGE_FILE_LIMIT) {
    // Rounded up: a file just over the limit must not read as exactly at it.
    const mb = (Math.ceil((file.size / 1024 / 1024) * 10) / 10).toFixed(1);
    return `${file.name || 'That image'} is ${mb} MiB; an image may be at most 20 MiB.`;
  }
  return null;
}

/** `file` as a `data:` URL. */
function dataUrlOf(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result as string);
    reader.onerror = () => reject(reader.error ?? new Error(`${file.name} could not be read.`));
    reader.readAsDataURL(file);
  });
}

/** The files that can be attached, as data URLs, and a sentence for each that cannot. */
export async function readAttachments(
  files: readonly File[],
): Promise<{ images: string[]; refused: string[] }> {
  const images: string[] = [];
  const refused: string[] = [];
  for (const file of files) {
    const why = refusal(file);
    if (why) {
      refused.push(why);
      continue;
    }
    try {
      images.push(await dataUrlOf(file));
    } catch (err) {
      refused.push(err instanceof Error ? err.message : String(err));
    }
  }
  return { images, refused };
}
