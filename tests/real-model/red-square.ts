/**
 * The picture the real-model vision tests show a model: a plain red square, drawn on a canvas in
 * the page and read back as a PNG `data:` URL, as a page's own code would send it.
 */
import type { Page } from '@playwright/test';

/** A `size`×`size` red square as a PNG data URL, made in `page`. */
export function redSquare(page: Page, size: number): Promise<string> {
  return page.evaluate(async (size) => {
    const canvas = new OffscreenCanvas(size, size);
    const context = canvas.getContext('2d')!;
    context.fillStyle = '#ff0000';
    context.fillRect(0, 0, size, size);
    const blob = await canvas.convertToBlob({ type: 'image/png' });
    return new Promise<string>((resolve) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result as string);
      reader.readAsDataURL(blob);
    });
  }, size);
}
