/**
 * Go's text/tabwriter, which kubectl prints everything through: a tab ends a cell, cells of one column are padded to
 * the widest cell of their column block (the run of consecutive lines that have a cell in that column) plus the
 * padding, never narrower than the minimum width, and the last cell of a line is printed as it is. Widths count
 * characters, as Go counts runes. `kubectl get` uses minwidth 6 and padding 3, `kubectl describe` 0 and 2.
 */

export interface TabwriterOptions {
  minWidth: number;
  padding: number;
}

export const GET_TABWRITER: TabwriterOptions = { minWidth: 6, padding: 3 };
export const DESCRIBE_TABWRITER: TabwriterOptions = { minWidth: 0, padding: 2 };

const width = (text: string) => [...text].length;

/** Formats text whose lines hold tab-terminated cells. */
export function formatTabbed(text: string, options: TabwriterOptions): string {
  if (text === '') return '';
  const endsWithNewline = text.endsWith('\n');
  const lines = (endsWithNewline ? text.slice(0, -1) : text).split('\n').map((l) => l.split('\t'));
  const out: string[] = new Array(lines.length);
  const widths: number[] = [];

  const writeLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const cells = lines[i] as string[];
      out[i] = cells
        .map((cell, j) =>
          j < widths.length ? cell + ' '.repeat(Math.max(0, (widths[j] as number) - width(cell))) : cell,
        )
        .join('');
    }
  };

  const format = (line0: number, line1: number) => {
    const column = widths.length;
    let start = line0;
    for (let current = line0; current < line1; current++) {
      if (column >= (lines[current] as string[]).length - 1) continue;
      writeLines(start, current);
      start = current;
      let w = options.minWidth;
      let end = current;
      for (; end < line1; end++) {
        const cells = lines[end] as string[];
        if (column >= cells.length - 1) break;
        w = Math.max(w, width(cells[column] as string) + options.padding);
      }
      widths.push(w);
      format(start, end);
      widths.pop();
      start = end;
      current = end - 1;
    }
    writeLines(start, line1);
  };

  format(0, lines.length);
  return `${out.join('\n')}${endsWithNewline ? '\n' : ''}`;
}

/** Rows of cells aligned as `kubectl get` aligns them, each line ending in a newline. */
export function alignRows(rows: readonly (readonly string[])[], options: TabwriterOptions = GET_TABWRITER): string {
  if (rows.length === 0) return '';
  return formatTabbed(`${rows.map((r) => r.join('\t')).join('\n')}\n`, options);
}
