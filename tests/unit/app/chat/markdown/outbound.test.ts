import { describe, expect, it } from 'vitest';
import {
  describeSource,
  linkDestination,
  ownImage,
  textIsDestination,
} from '../../../../../src/app/chat/markdown/outbound';

const PAGE = 'https://app.example/hearth/#/chat';
const BASE = 'https://app.example/hearth/';
const FILES = ['favicon.svg', 'icons/icon-192.png'];

describe('linkDestination', () => {
  it('keeps an http(s) address whole, query and fragment included, for the confirmation to show', () => {
    expect(linkDestination('https://elsewhere.example/?d=secret#x', PAGE)?.href).toBe(
      'https://elsewhere.example/?d=secret#x',
    );
    expect(linkDestination('HTTP://Elsewhere.Example/a b', PAGE)?.href).toBe(
      'http://elsewhere.example/a%20b',
    );
    // A relative link is an address of the app's own host, and is asked about like any other.
    expect(linkDestination('?d=secret', PAGE)?.href).toBe('https://app.example/hearth/?d=secret');
    expect(linkDestination('#/settings', PAGE)?.href).toBe('https://app.example/hearth/#/settings');
  });

  it('shows a host name as it is reached (punycode), not as it looks', () => {
    expect(linkDestination('https://аpple.example/', PAGE)?.href).toBe(
      'https://xn--pple-43d.example/',
    );
  });

  it('leaves every other scheme, and what is no address, inert', () => {
    for (const href of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'mailto:a@elsewhere.example?body=secret',
      'tel:+100',
      'blob:https://app.example/1234',
      'file:///etc/passwd',
      'ftp://elsewhere.example/',
      'https://[::1',
    ]) {
      expect(linkDestination(href, PAGE), href).toBeNull();
    }
    expect(linkDestination(null, PAGE)).toBeNull();
  });
});

describe('textIsDestination', () => {
  const url = (href: string) => new URL(href);

  it('is true only when the text is the exact destination', () => {
    expect(textIsDestination('https://a.example/x?d=1', url('https://a.example/x?d=1'))).toBe(true);
    expect(textIsDestination(' https://a.example ', url('https://a.example/'))).toBe(true);
  });

  it('is false for text that says another place, or looks like the address but is not it', () => {
    expect(textIsDestination('the docs', url('https://a.example/'))).toBe(false);
    expect(textIsDestination('https://bank.example/', url('https://evil.example/'))).toBe(false);
    expect(textIsDestination('https://a.example', url('https://a.example/?d=1'))).toBe(false);
    expect(textIsDestination('https://аpple.example/', url('https://аpple.example/'))).toBe(false);
    expect(textIsDestination('www.a.example/x', url('http://www.a.example/x'))).toBe(false);
  });
});

describe('ownImage', () => {
  it("loads the app's own files, named exactly, relative or absolute", () => {
    expect(ownImage('icons/icon-192.png', PAGE, BASE, FILES)?.href).toBe(
      'https://app.example/hearth/icons/icon-192.png',
    );
    expect(ownImage('/hearth/favicon.svg', PAGE, BASE, FILES)?.href).toBe(
      'https://app.example/hearth/favicon.svg',
    );
    expect(
      ownImage('https://app.example/hearth/icons/../favicon.svg', PAGE, BASE, FILES)?.href,
    ).toBe('https://app.example/hearth/favicon.svg');
  });

  it('refuses a query or a fragment, even an empty one', () => {
    for (const src of [
      'icons/icon-192.png?d=secret',
      'icons/icon-192.png?',
      'icons/icon-192.png#?d=secret',
      'icons/icon-192.png#',
      '?d=secret',
    ]) {
      expect(ownImage(src, PAGE, BASE, FILES), src).toBeNull();
    }
  });

  it("refuses every other path of the app's host: a path carries data to its logs as well as a query", () => {
    for (const src of [
      'secret/conversation.png',
      'icons/icon-192.png/secret',
      'icons/icon-192.png;secret',
      'icons/%69con-192.png',
      'v1/openai/models',
      '/favicon.svg', // outside the app's base
      '/hearth/',
    ]) {
      expect(ownImage(src, PAGE, BASE, FILES), src).toBeNull();
    }
  });

  it('refuses other hosts, schemes, credentials and data: images', () => {
    for (const src of [
      'https://elsewhere.example/hearth/favicon.svg',
      '//elsewhere.example/hearth/favicon.svg',
      'http://app.example/hearth/favicon.svg',
      'https://user:secret@app.example/hearth/favicon.svg',
      'https://app.example:444/hearth/favicon.svg',
      'data:image/png;base64,iVBORw0KGgo=',
      'blob:https://app.example/1234',
      'javascript:alert(1)',
      '',
    ]) {
      expect(ownImage(src, PAGE, BASE, FILES), src).toBeNull();
    }
    expect(ownImage(null, PAGE, BASE, FILES)).toBeNull();
    expect(ownImage('icons/icon-192.png', PAGE, BASE, [])).toBeNull();
  });
});

describe('describeSource', () => {
  it('shows an address as written', () => {
    expect(describeSource('https://elsewhere.example/pixel.png?d=secret')).toBe(
      'https://elsewhere.example/pixel.png?d=secret',
    );
  });

  it('shows a data: address by its media type and length, never its data', () => {
    const big = `data:image/png;base64,${'A'.repeat(1_000_000)}`;
    expect(describeSource(big)).toBe('data:image/png;base64,… 1000000 characters');
    expect(describeSource(`DATA:${'x'.repeat(200)}`)).toBe(
      `DATA:${'x'.repeat(59)}… 205 characters`,
    );
  });
});
