import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SETTINGS,
  type Conversation,
} from '../../../../src/app/conversations/conversation';
import {
  dateGroup,
  groupConversations,
} from '../../../../src/app/conversations/conversation-groups';

/** Local time, so that the tests hold in any time zone. */
const at = (y: number, m: number, d: number, h = 12) => new Date(y, m - 1, d, h).getTime();
const NOW = at(2026, 11, 26, 15);

const conv = (id: string, updated: number, pinned = false): Conversation => ({
  id,
  title: id,
  created: updated,
  updated,
  model: 'hearth/echo',
  settings: { ...DEFAULT_SETTINGS },
  messages: [],
  draft: '',
  pinned,
});

describe('the date group of a conversation', () => {
  it.each([
    ['a moment ago', at(2026, 11, 26, 14), 'Today'],
    ['just after midnight today', at(2026, 11, 26, 0) + 1, 'Today'],
    ['later than now (another clock)', at(2026, 11, 27, 9), 'Today'],
    ['just before midnight', at(2026, 11, 26, 0) - 1, 'Yesterday'],
    ['yesterday morning', at(2026, 11, 25, 8), 'Yesterday'],
    ['two days ago', at(2026, 11, 24), 'Previous 7 days'],
    ['seven days ago', at(2026, 11, 19, 1), 'Previous 7 days'],
    ['eight days ago', at(2026, 11, 18), 'Previous 30 days'],
    ['thirty days ago', at(2026, 10, 27, 1), 'Previous 30 days'],
    ['thirty-one days ago', at(2026, 10, 26), 'October 2026'],
    ['in an earlier year', at(2025, 12, 31), 'December 2025'],
  ])('%s', (_, updated, label) => {
    expect(dateGroup(updated, NOW)).toBe(label);
  });
});

describe('the groups of the list', () => {
  it('puts the pinned ones first, then the groups by date, each most recent first', () => {
    const groups = groupConversations(
      [
        conv('old', at(2026, 3, 2)),
        conv('today-early', at(2026, 11, 26, 9)),
        conv('pinned-old', at(2025, 1, 1), true),
        conv('march', at(2026, 3, 20)),
        conv('today-late', at(2026, 11, 26, 14)),
        conv('pinned-new', at(2026, 11, 25), true),
        conv('last-week', at(2026, 11, 22)),
      ],
      NOW,
    );
    expect(groups.map((g) => [g.label, g.conversations.map((c) => c.id)])).toEqual([
      ['Pinned', ['pinned-new', 'pinned-old']],
      ['Today', ['today-late', 'today-early']],
      ['Previous 7 days', ['last-week']],
      ['March 2026', ['march', 'old']],
    ]);
  });

  it('leaves out empty groups, and has none for no conversations', () => {
    expect(groupConversations([], NOW)).toEqual([]);
    expect(groupConversations([conv('y', at(2026, 11, 25))], NOW).map((g) => g.label)).toEqual([
      'Yesterday',
    ]);
  });
});
