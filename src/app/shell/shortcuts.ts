/**
 * @module
 * The keyboard shortcuts' help dialog: the keys the shell answers (`<hearth-app>`'s key handler),
 * named for this platform (⌘ on Apple's, Ctrl elsewhere) and for the send key the user chose.
 */
import { html } from 'lit';
import { preferences } from '../shared/preferences';

/** The dialog `#shortcuts`, closed; the shell opens it (the header's button, Ctrl or ⌘ + /). */
export function renderShortcuts() {
  const mod = /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl';
  const keys: [string[], string][] = [
    [[mod, 'Shift', 'O'], 'New conversation'],
    [['Shift', 'Esc'], 'Focus the message box'],
    [['Esc'], 'Stop the reply'],
    [[mod, 'Shift', 'C'], 'Copy the last reply'],
    [[mod, '/'], 'Show these shortcuts'],
    [
      preferences().sendKey === 'enter' ? ['Enter'] : [mod, 'Enter'],
      'Send the message (Settings → Preferences changes it)',
    ],
  ];
  return html`<dialog id="shortcuts" aria-labelledby="shortcuts-title">
    <h2 id="shortcuts-title">Keyboard shortcuts</h2>
    <dl class="keys">
      ${keys.map(
        ([combo, what]) =>
          html`<dt>${combo.map((k, i) => html`${i ? ' + ' : ''}<kbd>${k}</kbd>`)}</dt>
            <dd>${what}</dd>`,
      )}
    </dl>
    <form method="dialog"><button class="primary">Close</button></form>
  </dialog>`;
}
