/**
 * A conversation's documents as the chat keeps them and sends them (issue 47, the chat app): its
 * requests carry `file_search` with its own store while it has documents; an export names the
 * documents and says the files are not in it, keeps the passages replies cite, and an import
 * brings the conversation back without its store, remembering the names it left out. Records of
 * before documents read as conversations without any.
 */
import { describe, expect, it } from 'vitest';
import { chatRequest } from '../../../../src/app/chat/chat-request';
import {
  fileSearchOf,
  newConversation,
  worthStoring,
  type Conversation,
} from '../../../../src/app/conversations/conversation';
import {
  DOCUMENTS_NOTE,
  exportConversations,
  importConversations,
  mergeImported,
} from '../../../../src/app/conversations/conversation-export';

const SOURCE = { file_id: 'file-a', filename: 'guide.pdf', text: 'The heron nests.', page: 3 };

function withDocuments(): Conversation {
  const c = newConversation('hearth/echo');
  c.vectorStoreId = 'vs_1';
  c.documents = [{ file_id: 'file-a', filename: 'guide.pdf', bytes: 1200 }];
  c.messages = [
    { role: 'user', content: 'Where does the heron nest?' },
    { role: 'assistant', content: 'By the mill [1].', sources: [SOURCE] },
  ];
  return c;
}

describe("a conversation's documents", () => {
  it('send file_search with its store while it has documents, and not before', () => {
    const c = withDocuments();
    expect(fileSearchOf(c)).toEqual({ vector_store_ids: ['vs_1'] });
    const body = chatRequest(c.model, c.settings, [], 0, fileSearchOf(c));
    expect(body.file_search).toEqual({ vector_store_ids: ['vs_1'] });
    c.documents = [];
    expect(fileSearchOf(c)).toBeUndefined();
    expect(chatRequest(c.model, c.settings, [], 0, fileSearchOf(c))).not.toHaveProperty(
      'file_search',
    );
    // A record of before documents (no fields for them) is one without.
    const old = newConversation('hearth/echo');
    expect(fileSearchOf(old)).toBeUndefined();
  });

  it('keep an empty conversation that has a document attached', () => {
    const c = newConversation('hearth/echo');
    expect(worthStoring(c)).toBe(false);
    c.documents = [{ file_id: 'file-a', filename: 'a.md', bytes: 1 }];
    expect(worthStoring(c)).toBe(true);
  });

  it('travel by name in an export, with the passages cited, and come back without the store', () => {
    const file = exportConversations([withDocuments()]);
    const [exported] = file.conversations;
    expect(exported).toMatchObject({
      documents: [{ filename: 'guide.pdf', bytes: 1200 }],
      documents_note: DOCUMENTS_NOTE,
    });
    expect(exported?.messages[1]).toMatchObject({ sources: [SOURCE] });
    const [back] = importConversations(JSON.stringify(file));
    expect(back?.vectorStoreId).toBeUndefined();
    expect(back?.documents).toBeUndefined();
    expect(back?.documentsLeftOut).toEqual(['guide.pdf']);
    expect(back?.messages[1]?.sources).toEqual([SOURCE]);
  });

  it('stay with a conversation here that a newer import replaces', () => {
    const here = withDocuments();
    const [imported] = importConversations(JSON.stringify(exportConversations([here])));
    imported!.updated = here.updated + 1;
    const { save } = mergeImported([here], [imported!]);
    expect(save[0]).toMatchObject({ vectorStoreId: 'vs_1', documents: here.documents });
    expect(save[0]?.documentsLeftOut).toBeUndefined();
  });
});
