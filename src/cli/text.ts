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
