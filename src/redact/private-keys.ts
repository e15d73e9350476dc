import { REDACTED } from './marker.js';

/**
 * Private keys span many lines, so they are removed as blocks: BEGIN through END, or, when a log tail or a byte
 * limit cut the block, whatever part of the body is present (the lines after a BEGIN, or the lines before an END).
 * A PEM pasted into JSON or a single log line keeps its line breaks as `\n` escapes or spaces; both are followed.
 */

const BEGIN = /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----/g;
const END = /-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g;
/** A key is a few KB; a BEGIN whose END is further than this belongs to a cut block. */
const MAX_BLOCK = 32_768;

/** A line break in the text itself, or escaped inside a string. */
const BREAK = String.raw`(?:[ \t]*(?:\\r)?(?:\\n|\r?\n))`;
/** A body chunk must be a whole line (or a whole space-separated word), so ordinary log text is not eaten. */
const CHUNK_END = String.raw`(?=[ \t]*(?:\\r|\\n|\r|\n|$|["',]))`;
const BODY_AFTER_BEGIN = new RegExp(
  String.raw`(?:${BREAK}+[ \t]*(?:[A-Za-z0-9+/=]{4,}|(?:Proc-Type|DEK-Info|Comment):[^\r\n\\]*)${CHUNK_END}|[ \t]+[A-Za-z0-9+/=]{16,}${CHUNK_END})*`,
  'y',
);
/** Lines of a body whose BEGIN was cut off; each may carry the same prefix (a `--timestamps` time) as the END. */
const BODY_BEFORE_END =
  /(?:^[ \t]*(?:\S+[ \t]+)?[A-Za-z0-9+/=]{4,}[ \t]*\r?\n)+(?=[ \t]*(?:\S+[ \t]+)?-----END (?:[A-Z0-9]+ )*PRIVATE KEY)/gm;

export function redactPrivateKeys(text: string): string {
  if (!text.includes('PRIVATE KEY')) return text;
  let out = '';
  let from = 0;
  BEGIN.lastIndex = 0;
  // The END after a position, found once and reused, so many BEGINs without an END stay linear.
  let end: RegExpExecArray | null | undefined;
  for (let begin = BEGIN.exec(text); begin !== null; begin = BEGIN.exec(text)) {
    const start = begin.index;
    const afterBegin = start + begin[0].length;
    if (end !== null && (end === undefined || end.index < afterBegin)) {
      END.lastIndex = afterBegin;
      end = END.exec(text);
    }
    let stop: number;
    if (end !== null && end.index - afterBegin <= MAX_BLOCK) {
      stop = end.index + end[0].length;
    } else {
      BODY_AFTER_BEGIN.lastIndex = afterBegin;
      BODY_AFTER_BEGIN.exec(text);
      stop = BODY_AFTER_BEGIN.lastIndex;
    }
    out += `${text.slice(from, start)}${REDACTED}`;
    from = stop;
    BEGIN.lastIndex = stop;
  }
  out += text.slice(from);
  return out.replace(BODY_BEFORE_END, `${REDACTED}\n`);
}
