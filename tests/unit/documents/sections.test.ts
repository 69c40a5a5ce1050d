import { describe, expect, it } from 'vitest';
import { DocumentError } from '../../../src/documents/errors';
import { isPdf, textSections } from '../../../src/documents/sections';
import { solidPng } from '../../test-images';
import { makePdf } from '../../test-pdfs';

const bytes = (text: string) => new TextEncoder().encode(text);
const md = (text: string) => textSections(bytes(text), 'text/markdown', 'notes.md');
const html = (text: string) => textSections(bytes(text), 'text/html', 'page.html');

function failure(run: () => unknown): DocumentError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(DocumentError);
    return err as DocumentError;
  }
  throw new Error('it did not throw');
}

describe('Markdown', () => {
  it('gives a section per ATX heading, the text before the first one without a heading', () => {
    expect(md('Intro line.\n\n# One\nBody one.\n\n## Two ##\nBody two.\n### Three\n')).toEqual([
      { text: 'Intro line.' },
      { heading: 'One', text: 'One\n\nBody one.' },
      { heading: 'Two', text: 'Two\n\nBody two.' },
      { heading: 'Three', text: 'Three' },
    ]);
  });

  it('reads setext headings, a paragraph of several lines as one heading', () => {
    expect(md('Title\n=====\nText.\n\nSub\ntitle\n---\nMore.\n\n---\nAfter a rule.')).toEqual([
      { heading: 'Title', text: 'Title\n\nText.' },
      { heading: 'Sub title', text: 'Sub title\n\nMore.\n\n---\nAfter a rule.' },
    ]);
  });

  it('starts no heading inside a code fence, nor in indented code, nor from #tag', () => {
    const text =
      '# Code\n```sh\n# a comment\nls\n```\n~~~~\n## not either\n~~~\n```\n~~~~\n    # indented\n#tag\n# Next\nx';
    const sections = md(text);
    expect(sections.map((s) => s.heading)).toEqual(['Code', 'Next']);
    expect(sections[0]?.text).toContain('# a comment');
    expect(sections[0]?.text).toContain('## not either');
    expect(sections[0]?.text).toContain('#tag');
  });

  it('is taken by extension when the type says nothing, and CRLF lines are lines', () => {
    const sections = textSections(bytes('# A\r\nb\r\n# C\r\nd'), '', 'x.markdown');
    expect(sections).toEqual([
      { heading: 'A', text: 'A\n\nb' },
      { heading: 'C', text: 'C\n\nd' },
    ]);
  });
});

describe('HTML', () => {
  it('gives a section per h1–h6, decodes entities, skips scripts, styles and templates', () => {
    const page = `<!doctype html><html><head><title>T &amp; T</title><style>p{}</style>
      <script>var x = "<h1>no</h1>";</script></head><body>
      <p>Before &lt;any&gt; heading&nbsp;here.</p>
      <h1>First <em>heading</em></h1><p>One.</p><p>Two
      lines.</p><noscript>no</noscript><template><h2>hidden</h2></template>
      <h2>Second</h2><ul><li>a</li><li>b</li></ul>x<br>y
      <table><tr><td>c1</td><td>c2</td></tr></table></body></html>`;
    expect(html(page)).toEqual([
      { text: 'T & T\n\nBefore <any> heading\u00a0here.' },
      { heading: 'First heading', text: 'First heading\n\nOne.\n\nTwo lines.' },
      { heading: 'Second', text: 'Second\n\na\n\nb\n\nx\n\ny\n\nc1\tc2' },
    ]);
  });

  it('is taken by content type with parameters, and by .htm', () => {
    expect(textSections(bytes('<p>hi</p>'), 'Text/HTML; charset=utf-8', 'x')).toEqual([
      { text: 'hi' },
    ]);
    expect(textSections(bytes('<p>hi</p>'), 'application/octet-stream', 'x.HTM')).toEqual([
      { text: 'hi' },
    ]);
  });
});

describe('plain text', () => {
  it('is one section, or a page a section between form feeds', () => {
    expect(textSections(bytes('  just text \n'), 'text/plain', 'a.txt')).toEqual([
      { text: 'just text' },
    ]);
    expect(textSections(bytes('one\fthree\f\ffive'), '', 'a.txt')).toEqual([
      { text: 'one', page: 1 },
      { text: 'three', page: 2 },
      { text: 'five', page: 4 },
    ]);
  });

  it('reads another text/* type as text, UTF-16 by its BOM, and a few bad bytes', () => {
    expect(textSections(bytes('a,b\n1,2'), 'text/csv', 'a.csv')).toEqual([{ text: 'a,b\n1,2' }]);
    const utf16 = new Uint8Array([0xff, 0xfe, 0x68, 0, 0x69, 0]);
    expect(textSections(utf16, 'text/plain', 'a.txt')).toEqual([{ text: 'hi' }]);
    const latin1 = new Uint8Array([...bytes('caf'), 0xe9, ...bytes(' au lait, '.repeat(3))]);
    expect(textSections(latin1, 'text/plain', 'a.txt')[0]?.text).toContain('caf\uFFFD');
  });
});

describe('what is no document', () => {
  it('refuses an image as unsupported_file by its type, naming the file', () => {
    const err = failure(() => textSections(solidPng(2, 2, [1, 2, 3]), 'image/png', 'cat.png'));
    expect(err.code).toBe('unsupported_file');
    expect(err.message).toMatch(/^cat\.png is of type image\/png/);
  });

  it('refuses an unknown extension, and a file of no known type', () => {
    expect(failure(() => textSections(bytes('x'), '', 'a.docx')).code).toBe('unsupported_file');
    expect(failure(() => textSections(bytes('x'), '', 'noname')).message).toContain('noname');
  });

  it('refuses an image sent as text as invalid_file, by its magic numbers', () => {
    const err = failure(() => textSections(solidPng(2, 2, [1, 2, 3]), 'text/plain', 'a.txt'));
    expect(err.code).toBe('invalid_file');
    expect(err.message).toBe('a.txt is a PNG image, not text.');
  });

  it('refuses NUL bytes and bytes that are mostly not UTF-8 as invalid_file', () => {
    const nul = new Uint8Array([0x61, 0, 0x62]);
    expect(failure(() => textSections(nul, 'text/plain', 'a.txt')).message).toContain('NUL');
    const noise = Uint8Array.from({ length: 4096 }, (_, i) => 0x80 + ((i * 37) % 0x7f));
    const err = failure(() => textSections(noise, 'text/markdown', 'a.md'));
    expect(err).toMatchObject({ code: 'invalid_file', message: 'a.md is not UTF-8 text.' });
  });

  it('refuses a text with no text in it as invalid_file', () => {
    expect(failure(() => textSections(bytes(' \n\t'), 'text/plain', 'a.txt')).code).toBe(
      'invalid_file',
    );
    expect(failure(() => html('<script>only()</script>')).message).toBe('page.html has no text.');
  });
});

describe('PDFs', () => {
  const pdf = makePdf([['hello']]);

  it('are told apart by type, extension or magic, and textSections refuses them', () => {
    expect(isPdf(pdf, 'application/pdf', 'x')).toBe(true);
    expect(isPdf(pdf, '', 'X.PDF')).toBe(true);
    expect(isPdf(pdf, 'application/octet-stream', 'upload')).toBe(true);
    expect(isPdf(bytes('# md'), 'text/markdown', 'x.pdf')).toBe(false);
    expect(isPdf(bytes('x'), 'image/png', 'x.png')).toBe(false);
    const err = failure(() => textSections(pdf, 'application/pdf', 'paper.pdf'));
    expect(err.message).toContain('extractPdf');
  });

  it('sent as text, are no text', () => {
    expect(failure(() => textSections(pdf, 'text/plain', 'a.txt')).message).toBe(
      'a.txt is a PDF, not text.',
    );
  });
});
