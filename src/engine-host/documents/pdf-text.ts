/**
 * @module
 * A PDF's text, page by page, with pdf.js (`pdfjs-dist`), in the engine worker: never on a
 * page's main thread, and not in the service worker, which the browser may stop at will. pdf.js
 * is imported when the first PDF comes, so the engine worker's first load does not grow. Its own
 * worker is not started: its worker code is imported beside it and runs in this thread (its
 * "fake worker"), since this already is a worker, and a worker started from a worker can hang its
 * parent in Firefox (page-workers.ts). Both are chunks of the build (`hearth/pdf.js`,
 * `hearth/pdf.worker.js`), in the app's precache; a site's worker caches them on first use.
 *
 * pdf.js's worker code, evaluated in a worker, also listens on the worker's own scope and says
 * `ready` there once: the host page ignores that message (it knows only `worker/*`), and pdf.js
 * ignores every message not addressed to it. Checked in Chromium 156 and Firefox 153: a
 * 100-page PDF's text in about 140 ms, under a CSP without `unsafe-eval` (`isEvalSupported`
 * off). No CMaps are shipped: a PDF whose fonts need one (some CJK) may read as no text.
 */
import { DocumentError, type Section } from '../../protocol/host/documents';

/** What this file uses of pdf.js: the browser's build in the engine worker, the legacy one in Node. */
export type PdfJs = Pick<typeof import('pdfjs-dist'), 'getDocument' | 'VerbosityLevel'>;

let loaded: Promise<PdfJs> | undefined;

/** pdf.js, with its worker code set to run in this thread; imported once, on the first PDF. */
export function loadPdfJs(): Promise<PdfJs> {
  loaded ??= Promise.all([import('pdfjs-dist'), import('pdfjs-dist/build/pdf.worker.mjs')]).then(
    ([pdfjs, worker]) => {
      (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = worker;
      return pdfjs;
    },
  );
  return loaded;
}

/** A page's text items as lines: items joined by spaces, a break where pdf.js saw a line end. */
function pageText(items: readonly object[]): string {
  let text = '';
  for (const item of items) {
    if (!('str' in item) || typeof item.str !== 'string') continue;
    text += item.str;
    text += 'hasEOL' in item && item.hasEOL ? '\n' : ' ';
  }
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function cancelled(): Error {
  return new DOMException('The extraction was cancelled.', 'AbortError');
}

/**
 * The sections of a PDF, one a page with text, `page` from 1. Throws a `DocumentError`
 * `invalid_file` naming the file when pdf.js cannot read it (not a PDF, encrypted, broken: with
 * pdf.js's reason) or when no page has text (a scan); an abort of `signal` stops it between pages.
 */
export async function pdfSections(
  bytes: Uint8Array,
  filename: string,
  signal?: AbortSignal,
  pdfjs: PdfJs | Promise<PdfJs> = loadPdfJs(),
): Promise<Section[]> {
  const { getDocument, VerbosityLevel } = await pdfjs;
  if (signal?.aborted) throw cancelled();
  const task = getDocument({
    // pdf.js takes the bytes it is given (it may detach them): a copy of its own.
    data: bytes.slice(),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: VerbosityLevel.ERRORS,
  });
  const stop = () => void task.destroy();
  signal?.addEventListener('abort', stop);
  try {
    let document;
    try {
      document = await task.promise;
    } catch (err) {
      if (signal?.aborted) throw cancelled();
      const reason = err instanceof Error ? err.message : String(err);
      const what =
        err instanceof Error && err.name === 'PasswordException'
          ? 'is encrypted with a password'
          : 'is not a PDF that pdf.js can read';
      throw new DocumentError('invalid_file', `${filename} ${what}: ${reason}`);
    }
    const sections: Section[] = [];
    for (let number = 1; number <= document.numPages; number++) {
      if (signal?.aborted) throw cancelled();
      const page = await document.getPage(number);
      const text = pageText((await page.getTextContent()).items);
      page.cleanup();
      if (text !== '') sections.push({ text, page: number });
    }
    if (sections.length === 0)
      throw new DocumentError(
        'invalid_file',
        `${filename} has no text (a scan?): Hearth reads a PDF's text, not its images.`,
      );
    return sections;
  } finally {
    signal?.removeEventListener('abort', stop);
    await task.destroy();
  }
}
