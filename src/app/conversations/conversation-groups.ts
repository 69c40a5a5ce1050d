/**
 * @module
 * The conversation list's date groups, as the chat apps people know show them: Pinned first, then
 * Today, Yesterday, Previous 7 days, Previous 30 days, then one group per month ("October 2026"),
 * each by the day the conversation last changed, in the device's time zone. Pure: no DOM.
 */
import type { Conversation } from './conversation';

export interface ConversationGroup {
  /** The group's heading, also a stable key for it. */
  label: string;
  /** Most recently changed first. */
  conversations: Conversation[];
}

const MONTH = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric' });

/** Local midnight of the day `days` days after the one `time` falls on. */
function midnight(time: number, days = 0): number {
  const d = new Date(time);
  // Built from the calendar date, not by subtracting 24 h: a day is 23 or 25 h when DST changes.
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() + days).getTime();
}

/** The label of the group a conversation last changed at `updated` goes in, seen at `now`. */
export function dateGroup(updated: number, now: number): string {
  const today = midnight(now);
  if (updated >= today) return 'Today';
  if (updated >= midnight(now, -1)) return 'Yesterday';
  if (updated >= midnight(now, -7)) return 'Previous 7 days';
  if (updated >= midnight(now, -30)) return 'Previous 30 days';
  return MONTH.format(updated);
}

/**
 * The conversations in their groups, in the order they show: Pinned, then by date, the most recent
 * group first. A conversation changed "in the future" (another device's clock) counts as today.
 * Empty groups are left out.
 */
export function groupConversations(
  conversations: Conversation[],
  now: number,
): ConversationGroup[] {
  const sorted = [...conversations].sort((a, b) => b.updated - a.updated);
  const groups = new Map<string, Conversation[]>();
  const pinned = sorted.filter((c) => c.pinned);
  if (pinned.length > 0) groups.set('Pinned', pinned);
  for (const c of sorted) {
    if (c.pinned) continue;
    const label = dateGroup(c.updated, now);
    const group = groups.get(label);
    if (group) group.push(c);
    else groups.set(label, [c]);
  }
  return [...groups].map(([label, list]) => ({ label, conversations: list }));
}
