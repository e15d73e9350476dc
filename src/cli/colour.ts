/**
 * Colour on the terminal, by the conventions other command-line tools follow: only when the stream is a terminal
 * (so pipes, files and CI logs get plain text), never when NO_COLOR is set to anything but the empty string
 * (https://no-color.org), never on a `dumb` terminal, and always when FORCE_COLOR asks for it, which wins over the
 * rest as it does in Node itself (`1`, `2`, `3`, `true` or empty turn colour on; any other value, `0` say, off).
 */

import type { CliIo } from './io.js';

type Env = Readonly<Record<string, string | undefined>>;

const FORCE_ON = new Set(['', '1', '2', '3', 'true']);

export function colourEnabled(isTTY: boolean | undefined, env: Env): boolean {
  const force = env['FORCE_COLOR'];
  if (force !== undefined) return FORCE_ON.has(force.trim().toLowerCase());
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false;
  if (env['NODE_DISABLE_COLORS'] !== undefined && env['NODE_DISABLE_COLORS'] !== '') return false;
  if (env['TERM'] === 'dumb') return false;
  return isTTY === true;
}

// Each style is switched off by its own code, so a styled word inside a styled line ends without resetting the line.
const STYLES = {
  bold: ['1', '22'],
  dim: ['2', '22'],
  red: ['31', '39'],
  green: ['32', '39'],
  yellow: ['33', '39'],
  cyan: ['36', '39'],
} as const;

export type Style = keyof typeof STYLES;

/** Every sequence a palette writes, and nothing else: the terminal writers let exactly these through. */
export const PALETTE_SEQUENCES = /\u001b\[(?:1|2|22|31|32|33|36|39)m/g;

export type Paint = (text: string, ...styles: Style[]) => string;

/** A painter that styles text when colour is on and returns it unchanged when it is off. */
export function painter(on: boolean): Paint {
  if (!on) return (text) => text;
  return (text, ...styles) =>
    styles.reduce((styled, style) => `\u001b[${STYLES[style][0]}m${styled}\u001b[${STYLES[style][1]}m`, text);
}

/** The painter for one of a command's streams, as its terminal and environment decide. */
export function painterFor(io: CliIo, stream: 'stdout' | 'stderr'): Paint {
  return painter(colourEnabled(io.tty?.[stream], io.env));
}
