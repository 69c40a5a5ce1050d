import { describe, expect, it } from 'vitest';
import { catalogModel } from '../models/catalog-model';
import { newConversation } from '../../../../src/app/conversations/conversation';
import { imagesBlocked, imagesNote } from '../../../../src/app/chat/composer/image-checks';
import { refusal } from '../../../../src/app/chat/composer/attachments';
import { optionText } from '../../../../src/app/chat/chat-bar';

const model = (id: string, vision: boolean | null) =>
  catalogModel(id, {
    vision,
    downloaded: true,
    ...(vision === null ? { engine: 'server', source: 'server' } : { engine: 'llama.cpp' }),
  });

const IMAGE = 'data:image/png;base64,AAAA';
const blind = model('acme/Blind-GGUF:Q4_K_M', false);
const seeing = model('acme/Seeing-GGUF:Q8_0', true);

describe('images before sending', () => {
  it('stops Send for images attached for a model that does not see them, naming it', () => {
    expect(imagesBlocked(blind, [])).toBeNull();
    expect(imagesBlocked(blind, [IMAGE])).toBe(
      `Images are attached, and ${optionText(blind)} does not see images: pick a model marked "sees images", or remove them.`,
    );
    expect(imagesBlocked(undefined, [IMAGE])).toBeNull();
  });

  it('says that images sent earlier are left out for a model that does not see them', () => {
    const c = newConversation(blind.id);
    expect(imagesNote(blind, c, [])).toBeNull();
    c.messages.push({ role: 'user', content: 'look', images: [IMAGE] });
    expect(imagesNote(blind, c, [])).toBe(
      `${optionText(blind)} does not see images: it is sent this conversation's earlier messages without their images.`,
    );
    // Earlier images do not stop Send: only those attached now do.
    expect(imagesBlocked(blind, [])).toBeNull();
    expect(imagesNote(seeing, c, [])).toBeNull();
  });

  it('lets them go to a model that sees them, and to a server, whose server decides (a note)', () => {
    const c = newConversation(seeing.id);
    expect(imagesBlocked(seeing, [IMAGE])).toBeNull();
    expect(imagesNote(seeing, c, [IMAGE])).toBeNull();
    const remote = model('box/remote', null);
    expect(imagesBlocked(remote, [IMAGE])).toBeNull();
    expect(imagesNote(remote, c, [IMAGE])).toBe(
      'Whether box/remote takes images is up to its server.',
    );
    expect(imagesNote(remote, c, [])).toBeNull();
  });

  it('marks the models that see images in the picker', () => {
    expect(optionText(seeing)).toMatch(/ · sees images$/);
    expect(optionText(blind)).not.toMatch(/sees images/);
  });

  it('refuses a file that is not an image the API takes, or over 20 MiB, by its name', () => {
    const file = (name: string, type: string, size = 10) =>
      new File([new Uint8Array(size)], name, { type });
    expect(refusal(file('a.png', 'image/png'))).toBeNull();
    expect(refusal(file('a.bmp', 'image/bmp'))).toBe(
      'a.bmp is not a PNG, JPEG, WebP or GIF image, nor a PDF, Markdown, text or HTML document.',
    );
    expect(refusal(file('big.jpg', 'image/jpeg', 20 * 1024 * 1024 + 1))).toBe(
      'big.jpg is 20.1 MiB; an image may be at most 20 MiB.',
    );
  });
});
