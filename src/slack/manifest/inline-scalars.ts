/**
 * The one-line scalar values of a block YAML text (`key: value`, `- key: value`), located by their path, so that a
 * value can be replaced while every other character (comments, folding, quoting, blank lines) stays as written.
 * YAML libraries that rewrite a document from its data lose the comments; this reads only as much of the layout as
 * locating a value needs. Anything it does not follow (flow collections, anchors, tags, quoted keys, values that go
 * on past their line) is simply not offered, so a caller that reparses the edited text and compares it with what it
 * meant to write can never be misled.
 */

export type PathSegment = string | number;

export interface InlineScalar {
  path: readonly PathSegment[];
  /** 0-based line index, and the columns of the value on that line (`end` exclusive, before any comment). */
  line: number;
  start: number;
  end: number;
}

interface Frame {
  column: number;
  segment: PathSegment;
}

const PLAIN_KEY = /^([A-Za-z0-9_][A-Za-z0-9_./-]*)[ \t]*:(?=[ \t]|$)/;
const SEQUENCE_ENTRY = /^-(?:[ \t]+|$)/;

export function inlineScalars(text: string): InlineScalar[] {
  const found: InlineScalar[] = [];
  const stack: Frame[] = [];
  // After a value that starts on its key's line, deeper lines continue that value and hold no keys.
  let continuesPast: number | undefined;
  let last: InlineScalar | undefined;
  text.split('\n').forEach((raw, line) => {
    const content = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const indent = content.length - content.trimStart().length;
    const rest = content.slice(indent);
    if (rest === '' || rest.startsWith('#')) return;
    if (continuesPast !== undefined && indent > continuesPast) {
      // The last value does not end on its line, so replacing that line alone would cut it.
      if (last !== undefined && last.line < line) found.splice(found.indexOf(last), 1);
      last = undefined;
      return;
    }
    continuesPast = undefined;
    last = undefined;
    if (indent === 0 && /^(?:---|\.\.\.)(?:[ \t]|$)|^%/.test(rest)) return;

    let column = indent;
    let body = rest;
    let owner = indent;
    for (let entry = SEQUENCE_ENTRY.exec(body); entry !== null; entry = SEQUENCE_ENTRY.exec(body)) {
      owner = column;
      while ((stack.at(-1)?.column ?? -1) > column) stack.pop();
      const top = stack.at(-1);
      let index = 0;
      if (top !== undefined && top.column === column && typeof top.segment === 'number') {
        index = top.segment + 1;
        stack.pop();
      }
      stack.push({ column, segment: index });
      column += entry[0].length;
      body = body.slice(entry[0].length);
    }
    if (body === '' || body.startsWith('#')) return;

    const key = PLAIN_KEY.exec(body);
    if (key === null) {
      // A sequence item's own scalar (or a line not followed): what is deeper belongs to it, not to a key.
      continuesPast = owner;
      return;
    }
    while ((stack.at(-1)?.column ?? -1) >= column) stack.pop();
    stack.push({ column, segment: key[1] as string });
    const after = body.slice(key[0].length);
    const valueOffset = after.length - after.trimStart().length;
    const value = after.slice(valueOffset);
    if (value === '' || value.startsWith('#')) return;
    continuesPast = column;
    const length = scalarLength(value);
    if (length === undefined) return;
    const start = column + key[0].length + valueOffset;
    last = { path: stack.map((f) => f.segment), line, start, end: start + length };
    found.push(last);
  });
  return found;
}

/** How long the scalar at the start of `value` is on this line, or undefined when it is not one this can replace. */
function scalarLength(value: string): number | undefined {
  const first = value[0];
  if (first === '"') {
    for (let i = 1; i < value.length; i++) {
      if (value[i] === '\\') i++;
      else if (value[i] === '"') return i + 1;
    }
    return undefined;
  }
  if (first === "'") {
    for (let i = 1; i < value.length; i++) {
      if (value[i] === "'") {
        if (value[i + 1] === "'") i++;
        else return i + 1;
      }
    }
    return undefined;
  }
  if (first === undefined || '|>[{&*!%@`'.includes(first)) return undefined;
  const comment = /[ \t]#/.exec(value);
  return (comment === null ? value : value.slice(0, comment.index)).trimEnd().length;
}

/** The text with each given value replaced by its new scalar text (already YAML, on one line). */
export function replaceInlineScalars(text: string, edits: readonly { at: InlineScalar; scalar: string }[]): string {
  const lines = text.split('\n');
  // Right to left on a line, so earlier columns stay valid.
  const ordered = [...edits].sort((a, b) => a.at.line - b.at.line || b.at.start - a.at.start);
  for (const { at, scalar } of ordered) {
    const line = lines[at.line] as string;
    lines[at.line] = `${line.slice(0, at.start)}${scalar}${line.slice(at.end)}`;
  }
  return lines.join('\n');
}
