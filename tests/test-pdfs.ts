/**
 * PDFs made at test time (no binary is committed): a valid PDF 1.4 written by hand — a catalog,
 * a page tree, Helvetica (one of the standard fonts, so nothing is embedded), one content stream
 * per page that shows the page's lines, and a correct cross-reference table. Pure (no Node
 * module), so a browser test or the bench can use it as the unit tests do.
 */

/** A PDF string's text: `(`, `)` and `\` escaped; a character outside Latin-1 becomes `?`. */
function pdfString(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0x3f;
    if (char === '(' || char === ')' || char === '\\') out += `\\${char}`;
    else if (code >= 0x20 && code < 0x7f) out += char;
    else if (code >= 0xa0 && code <= 0xff) out += `\\${code.toString(8).padStart(3, '0')}`;
    else out += '?';
  }
  return out;
}

/** A page's content stream: each line 14 points below the one before, from the top left. */
function pageContent(lines: readonly string[]): string {
  if (lines.length === 0) return '';
  const shown = lines.map((line, i) => `${i === 0 ? '' : '0 -14 Td '}(${pdfString(line)}) Tj`);
  return `BT /F1 12 Tf 72 720 Td ${shown.join('\n')} ET`;
}

/**
 * A PDF of `pages.length` pages, each showing its lines in Helvetica 12 (a page with no lines has
 * no text, as a scan's). Only ASCII and Latin-1 text survives as written.
 */
export function makePdf(pages: readonly (readonly string[])[]): Uint8Array {
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + 2 * i);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  pages.forEach((lines, i) => {
    const page = pageIds[i] ?? 0;
    const content = pageContent(lines);
    objects[page] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] ` +
      `/Resources << /Font << /F1 3 0 R >> >> /Contents ${page + 1} 0 R >>`;
    objects[page + 1] = `<< /Length ${content.length} >>\nstream\n${content}\nendstream`;
  });
  // Every character is one byte (ASCII), so string lengths are byte offsets.
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = pdf.length;
    pdf += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++)
    pdf += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(pdf);
}

const WORDS = (
  'the device keeps every document it reads and answers from them without a server the index ' +
  'lives beside the model and a search finds a passage by its words or by what it means'
).split(' ');

/**
 * `count` pages of `linesPerPage` lines of plain English-like words, the same every time; `rare`
 * puts a word found nowhere else on its page (from 1), for a search to find.
 */
export function samplePages(
  count: number,
  {
    linesPerPage = 40,
    rare,
  }: { linesPerPage?: number; rare?: { page: number; word: string } } = {},
): string[][] {
  return Array.from({ length: count }, (_, p) =>
    Array.from({ length: linesPerPage }, (_, l) => {
      const words = Array.from(
        { length: 12 },
        (_, w) => WORDS[(p * 7 + l * 13 + w * 5) % WORDS.length] ?? '',
      );
      if (rare && rare.page === p + 1 && l === Math.floor(linesPerPage / 2)) words[6] = rare.word;
      return `${l === 0 ? `Page ${p + 1}. ` : ''}${words.join(' ')}.`;
    }),
  );
}
