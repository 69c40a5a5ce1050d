/**
 * @module
 * What a tab says about its relay pairing, in one place: the app (src/app/relay/relay-status.ts) and the
 * loader on a site's page (src/site/relay-pairing.ts) both render these, so the question a user
 * answers is worded the same wherever it is asked. Text that wraps a value (the relay's address)
 * is a pair: the words before it and the words after it.
 */

/** The confirmation a pairing link opens, and the notices while a pairing lasts. */
export const PAIRING_WORDS = {
  /** The dialog's title, which names it. */
  title: 'Share with the relay?',
  /** Around the relay's WebSocket address. */
  question: ["Share this tab's models with the relay at ", '?'],
  /** What saying yes does. */
  detail:
    "Programs on this computer that hold the relay's key — curl, scripts, editors, AI gateways — can then chat with the models of this app, for as long as this tab stays open. Their requests run here, through this app's own API; nothing leaves this computer.",
  /** Around the fingerprint of the relay's key that the link names (never the key itself). */
  fingerprint: [
    "The relay's key has the fingerprint ",
    '. Share only if the relay printed the same in its terminal (its “Fingerprint:” line).',
  ],
  /** Around the origin of another site whose page opened the link. */
  fromSite: [
    'This link was opened from another site, ',
    ", not from the relay's terminal. A page can make a link to any program on this computer: share only if you started this relay and its fingerprint matches.",
  ],
  /** The box, checked at first, that makes issued keys the only ones the API takes. */
  requireKeys: "Only issued keys may call the API (the relay's becomes one)",
  /** The safe answer: Escape says it too. */
  decline: "Don't share",
  accept: 'Share',
  /** Around the relay's WebSocket address, while the tab connects. */
  connecting: ['Connecting to the relay at ', '…'],
  /** Around the relay's base URL, while the tab is paired. */
  paired: ["Shared with the relay: programs on this computer reach this tab's models at ", '.'],
  /** Ends the pairing. */
  stop: 'Stop sharing',
  /** Hides a notice that the pairing ended or was refused. */
  dismiss: 'Dismiss',
} as const;
