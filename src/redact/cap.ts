/**
 * The cap on what any redaction rule sees: a line longer than MAX_LINE keeps its first MAX_LINE characters and says
 * how many it lost. Nothing calmops shows keeps more of a line than that (thread reads and evidence clip lines to a
 * few hundred characters), and the bound makes every rule's work on one line a constant, whatever the line holds:
 * a 1 MiB log line costs what an 8 KiB one does.
 *
 * The cut never leaves the start of a word that went on past it: a credential cut in two could no longer be
 * recognised by its full shape, so the piece before the cut goes too (back to the last separator, within a bound).
 */

export const MAX_LINE = 8192;
/** How far back the cut looks for a separator before it gives up and cuts inside the word. */
const MAX_WORD_BACKTRACK = 256;
const SEPARATORS = new Set([' ', '\t', ',', ';', '&']);

function cutMarker(lost: number): string {
  return ` … [${lost} characters not shown]`;
}

/** Room for the marker, so a cut line is within MAX_LINE and a second pass leaves it as it is. */
const MARKER_ROOM = 48;

function cutLine(line: string): string {
  const target = MAX_LINE - MARKER_ROOM;
  let cut = target;
  const limit = target - MAX_WORD_BACKTRACK;
  while (cut > limit && !SEPARATORS.has(line[cut] as string) && !SEPARATORS.has(line[cut - 1] as string)) cut--;
  if (cut === limit) cut = target;
  return `${line.slice(0, cut)}${cutMarker(line.length - cut)}`;
}

/** The text with every over-long line cut; the text itself when no line is (the common case, found in one scan). */
export function capLines(text: string): string {
  if (text.length <= MAX_LINE) return text;
  let out = '';
  let from = 0;
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    if (end - start > MAX_LINE) {
      out += text.slice(from, start) + cutLine(text.slice(start, end));
      from = end;
    }
    if (newline === -1) break;
    start = newline + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}
