import type { ClusterReader } from '../cluster/types.js';
import { clip } from '../limits.js';
import type { CliIo } from './io.js';
import { CLEAR_LINE, shown } from './text.js';

/**
 * A one-line account of the reads in flight, on stderr, for a person waiting at a terminal: rewritten in place as
 * reads start and finish, and erased when they are over, so what is left on the screen is the command's output.
 * Where stderr is not a terminal (a pipe, a file, CI) nothing is written at all.
 */

/** Redraws closer together than this would only make the terminal flicker. */
const REDRAW_MS = 80;
const DEFAULT_COLUMNS = 80;

export interface Progress {
  /** The reader, with every request counted on the line. */
  reader<R extends ClusterReader>(reader: R): ClusterReader;
  /** The I/O to use while the line may be shown: anything written to stderr first erases the line. */
  readonly io: CliIo;
  /** Erase the line for good. */
  end(): void;
}

function progressEnabled(io: CliIo): boolean {
  return io.tty?.stderr === true && io.env['TERM'] !== 'dumb';
}

/** `label` says what is read ("triage: reading payments"); a progress that is not enabled passes everything through. */
export function startProgress(io: CliIo, label: string): Progress {
  if (!progressEnabled(io)) return { reader: (r) => r, io, end: () => {} };
  let done = 0;
  let inFlight = 0;
  let shownLine = false;
  let lastDraw = 0;
  let ended = false;
  const width = Math.max(20, (io.tty?.columns ?? DEFAULT_COLUMNS) - 1);

  const clear = () => {
    if (!shownLine) return;
    io.stderr(CLEAR_LINE);
    shownLine = false;
  };
  const draw = (force: boolean) => {
    if (ended) return;
    const now = Date.now();
    if (!force && shownLine && now - lastDraw < REDRAW_MS) return;
    lastDraw = now;
    const counts = `${done} read${done === 1 ? '' : 's'} done${inFlight > 0 ? `, ${inFlight} in flight` : ''}`;
    // A line wider than the terminal would wrap, and `\r` returns only to the start of its last row.
    const line = `${shown(label, 120)}… ${counts}`;
    io.stderr(`${CLEAR_LINE}${clip(line, width)}`);
    shownLine = true;
  };
  const count = async <T>(read: () => Promise<T>): Promise<T> => {
    inFlight++;
    draw(!shownLine);
    try {
      return await read();
    } finally {
      inFlight--;
      done++;
      draw(false);
    }
  };

  const wrapped: CliIo = {
    stdout: (text) => {
      clear();
      io.stdout(text);
    },
    stderr: (text) => {
      clear();
      io.stderr(text);
    },
    env: io.env,
    ...(io.tty ? { tty: io.tty } : {}),
    // Read only when asked: for the process, asking installs the Ctrl-C handlers.
    get interrupted() {
      return io.interrupted;
    },
  };
  return {
    reader: (reader) => ({
      list: (query, signal) => count(() => reader.list(query, signal)),
      get: (query, signal) => count(() => reader.get(query, signal)),
      logs: (query, signal) => count(() => reader.logs(query, signal)),
      ...(reader.table ? { table: reader.table.bind(reader) } : {}),
      ...(reader.metrics ? { metrics: reader.metrics.bind(reader) } : {}),
    }),
    io: wrapped,
    end: () => {
      clear();
      ended = true;
    },
  };
}
