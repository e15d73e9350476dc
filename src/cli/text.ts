import { PALETTE_SEQUENCES } from './colour.js';

/**
 * Text from files, flags and clusters reaches the terminal in messages. Control characters in it could move the
 * cursor, rewrite earlier lines, set the window title or reverse the text direction, so they are shown as escapes
 * (`\x1b`, `\u202e`) instead of acting.
 */

// C0 controls except tab and newline, DEL, C1 controls, and the Unicode direction overrides and isolates.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// The same, plus newline and tab: for one echoed value, which must stay on its line.
const CONTROL_IN_VALUE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function escapeControl(char: string): string {
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Text safe to write to a terminal: every control character but newline and tab shown as an escape. */
export function printable(text: string): string {
  return text.replace(CONTROL, escapeControl);
}

/** One value from the input (a path, a flag's value) as a message quotes it: on one line, escapes shown. */
export function shown(value: string, max = 200): string {
  const cut = value.length > max ? `${value.slice(0, max)}…` : value;
  return cut.replace(CONTROL_IN_VALUE, escapeControl);
}

/** Return to the start of the line and erase it: how a progress line is rewritten in place, and cleared. */
export const CLEAR_LINE = '\r\u001b[K';

/**
 * What a process-bound stream writes: `printable`, except for the sequences calmops itself sends to a terminal and
 * the stream allows (the palette's colours where colour is on, the progress line's `CLEAR_LINE` on a terminal).
 * Text from files and clusters is made printable before it is styled, so by then its own escapes are shown, not sent.
 */
export function terminalText(text: string, allow: { colour: boolean; clearLine: boolean }): string {
  const kept: string[] = [];
  if (allow.colour) kept.push(PALETTE_SEQUENCES.source);
  if (allow.clearLine) kept.push('\\r\\u001b\\[K');
  if (kept.length === 0) return printable(text);
  const pattern = new RegExp(`(${kept.join('|')})`, 'g');
  return text
    .split(pattern)
    .map((part, i) => (i % 2 === 1 ? part : printable(part)))
    .join('');
}
