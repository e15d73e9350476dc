import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import {
  type BigIntStats,
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writevSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { byCodePoint } from '../code-point-order.js';
import { resourceForKind } from './resources.js';
import { type ParsedSnapshotCache, type StoredSnapshot, snapshotNow } from './snapshot.js';
import { type EntryRows, type RunColumns, StoredObject } from './stored-object.js';
import type { KubeObject } from './types.js';

/**
 * Keeps parsed snapshots as JSON under a directory, so that a snapshot replayed again (`calmops triage --snapshot`,
 * `calmops serve-snapshot`, the demo cluster of `npm start`) is read back instead of parsed. An entry is named by a
 * hash of the snapshot text and of what parsing depends on (the parser's source and the versions of the packages it
 * uses), so a changed snapshot or parser never reads a stale entry. The cache is only a shortcut: anything
 * unreadable is a miss, anything unwritable is skipped.
 */

const KEEP = 8;

/**
 * Where parsed snapshots are kept unless told otherwise: under `$XDG_CACHE_HOME/calmops` when that is set (an
 * absolute path, as the XDG specification requires), else beside the packages (`node_modules/.cache/calmops`), like
 * every other cache of calmops, so that a fresh install starts clean and nothing lands in the working tree.
 */
export function defaultSnapshotCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env['XDG_CACHE_HOME'];
  if (xdg && isAbsolute(xdg)) return join(xdg, 'calmops', 'snapshots');
  return fileURLToPath(new URL('../../node_modules/.cache/calmops/snapshots/', import.meta.url));
}

/**
 * The parser's fingerprint as the command-line bundle was built with it (build/cli-bundle.mjs defines it, from
 * `parserFingerprint` run at build time), so that a replay does not read and hash the parser's sources again on every
 * run. Undeclared when running from sources.
 */
declare const CALMOPS_PARSER_FINGERPRINT: string | undefined;

/** What parsing depends on: the parser's sources and the versions of the packages it uses. */
export function parserFingerprint(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const hash = createHash('sha256');
    for (const source of [
      './snapshot.ts',
      './snapshot-cache.ts',
      './stored-object.ts',
      './selectable-fields.ts',
      './resources.ts',
      '../yaml-text.ts',
    ]) {
      hash.update(readFileSync(fileURLToPath(new URL(source, import.meta.url))));
    }
    for (const dependency of ['js-yaml/package.json', 'zod/package.json']) {
      hash.update(readFileSync(require.resolve(dependency)));
    }
    return hash.digest('hex');
  } catch {
    return undefined;
  }
}

function prune(dir: string): void {
  const entries = readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => ({ name, at: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const old of entries.slice(KEEP)) unlinkSync(join(dir, old.name));
}

/**
 * An entry is one JSON document. Its first line holds the rest of the entry's summary and who each object is; then
 * come the objects' labels and selectable field values (stored-object.ts), one compact array to a line, a column for
 * each run of objects of one resource; then, on one line, the objects' texts. Objects, names and columns are all laid
 * out in the order an API server lists them (by resource, then by namespace and name):
 *
 *     {"digest":"9f2c…","secretsSkipped":0,"taken":"2025-06-01T09:00:00.000Z","lengths":[412,…],"order":[3,0,…],
 *      "names":["web-0",…],"versions":["812",…],"namespaces":[["shop",3000],…],"kinds":[["Pod",3000],…],
 *      "apiVersions":[["v1",3000],…],"runs":[["pods",3000,5120,…],…],"columns":[
 *     [{"app":"web"},…],
 *     ["node-1",…],
 *     …
 *     ],"objects":[
 *     {"apiVersion":"v1","kind":"Pod",…},{…},…
 *     ]}
 *
 * (the first line is one line). `lengths` are the texts' lengths in bytes; `order` names the object of the snapshot
 * each in turn is; `namespaces`, `kinds` and `apiVersions` are runs of one value and how many objects in turn carry
 * it; each of `runs` is a resource's run of objects, how many, and the lengths of its columns in bytes: its labels,
 * then each selectable field's values. `digest` is the SHA-256 of every byte after its own value up to the texts,
 * which are checked against their lengths instead (each an object, then a comma or the entry's end): a changed, cut
 * or half-written entry is a miss, never a wrong answer. (Hashing the texts too, megabytes, would cost a replay a
 * good part of what reading the columns lazily saves.)
 *
 * Reading an entry back parses only its first line: who the objects are is what an API server needs to find and
 * order them, and a list of one resource in one namespace needs nothing more. A column is parsed the first time a
 * selector asks about it; each text stays a span of the entry's bytes, decoded and parsed only when its object is read
 * whole. Since a list answer is a run of objects in exactly the order they are laid out, joined by the same commas,
 * most of a list goes out as one slice of the entry. Any other JSON document with `objects` and `secretsSkipped` is
 * read in one piece, from its objects.
 */
const DIGEST_OPEN = '{"digest":"';
const DIGEST_END = DIGEST_OPEN.length + 64;
const COLUMNS_OPEN = ',"columns":[';
const COLUMN_SEPARATOR = Buffer.from(',\n');
const OBJECTS_OPEN = '\n],"objects":[\n';
const ENTRY_CLOSE = ']}';
const ENDING = Buffer.from(`\n${ENTRY_CLOSE}`);
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function pluralOf(object: StoredObject): string {
  return object.kind === undefined ? '' : (resourceForKind(object.kind)?.plural ?? '');
}

/** The objects' indices in the order an API server lists them: by resource, then by `namespace/name`. */
function servingOrder(stored: readonly StoredObject[], plurals: readonly string[]): number[] {
  const keys = stored.map((o, i) => `${plurals[i]}\u0000${o.namespace ?? ''}/${o.name}`);
  // A stable sort: objects with the same identity keep their order, as the server relies on (a later one wins).
  return keys.map((_, i) => i).sort((a, b) => byCodePoint(keys[a] as string, keys[b] as string));
}

type Run = [value: string | null, count: number];

/** `values` as runs of one value and how many in turn carry it. */
function runsOf(values: readonly (string | null)[]): Run[] {
  const runs: Run[] = [];
  let last: Run | undefined;
  for (const value of values) {
    if (last !== undefined && last[0] === value) last[1] += 1;
    else {
      last = [value, 1];
      runs.push(last);
    }
  }
  return runs;
}

const digestOf = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/**
 * The entry's parts, to be written one after the other; every object in `entry` is then kept in the entry's bytes
 * (`keepIn`), so a replay that has just parsed a snapshot serves it as one that read it back would.
 */
function formatEntry(entry: StoredSnapshot): Buffer[] {
  const summary = { secretsSkipped: entry.secretsSkipped, taken: entry.taken?.toISOString() ?? null };
  const { stored } = entry;
  if (stored.length === 0) return [Buffer.from(JSON.stringify({ ...summary, objects: [] }))];
  const plurals = stored.map(pluralOf);
  const order = servingOrder(stored, plurals);
  const served = order.map((i) => stored[i] as StoredObject);
  const texts = served.map((o) => o.text);
  // One text, encoded once: thousands of small encodings and copies cost far more than the bytes themselves.
  const objects = Buffer.from(texts.join(','), 'utf8');
  const ascii = objects.length === texts.reduce((sum, text) => sum + text.length, texts.length - 1);
  const lengths: number[] = new Array(served.length);
  let at = 0;
  for (let k = 0; k < served.length; k++) {
    const text = texts[k] as string;
    const length = ascii ? text.length : Buffer.byteLength(text, 'utf8');
    lengths[k] = length;
    (served[k] as StoredObject).keepIn(objects, at, at + length);
    at += length + 1;
  }
  const columns: string[] = [];
  const runs: (string | number)[][] = [];
  for (let start = 0; start < served.length; ) {
    const plural = plurals[order[start] as number] as string;
    let end = start + 1;
    while (end < served.length && plurals[order[end] as number] === plural) end++;
    const run = served.slice(start, end);
    const fieldCount = (run[0] as StoredObject).fields.length;
    const labels: (Readonly<Record<string, string>> | null)[] = [];
    const values: string[][] = Array.from({ length: fieldCount }, () => []);
    // One pass over the run's objects, each read once: a column at a time would read every object once per field.
    for (const object of run) {
      labels.push(object.labels ?? null);
      const fields = object.fields;
      for (let position = 0; position < fieldCount; position++) {
        (values[position] as string[]).push(fields[position] ?? '');
      }
    }
    const texts = [JSON.stringify(labels), ...values.map((column) => JSON.stringify(column))];
    runs.push([plural, run.length, ...texts.map((text) => Buffer.byteLength(text, 'utf8'))]);
    columns.push(...texts);
    start = end;
  }
  const head = JSON.stringify({
    ...summary,
    lengths,
    order,
    names: served.map((o) => o.name),
    versions: served.map((o) => o.resourceVersion ?? null),
    namespaces: runsOf(served.map((o) => o.namespace ?? null)),
    kinds: runsOf(served.map((o) => o.kind ?? null)),
    apiVersions: runsOf(served.map((o) => o.apiVersion ?? null)),
    runs,
  });
  const index = Buffer.from(`",${head.slice(1, -1)}${COLUMNS_OPEN}\n${columns.join(',\n')}${OBJECTS_OPEN}`, 'utf8');
  return [Buffer.from(`${DIGEST_OPEN}${digestOf(index)}`), index, objects, ENDING];
}

/** What the first line of a laid-out entry says, beside the summary. */
interface EntryIndex {
  lengths: number[];
  order: number[];
  names: string[];
  versions: (string | null)[];
  namespaces: Run[];
  kinds: Run[];
  apiVersions: Run[];
  runs: [plural: string, count: number, ...columnLengths: number[]][];
}

const isCount = (value: unknown, least: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= least;

const isNullableString = (value: unknown): value is string | null => value === null || typeof value === 'string';

function isRuns(value: unknown, count: number): value is Run[] {
  if (!Array.isArray(value)) return false;
  let total = 0;
  for (const run of value) {
    if (!Array.isArray(run) || run.length !== 2 || !isNullableString(run[0]) || !isCount(run[1], 1)) return false;
    total += run[1];
  }
  return total === count;
}

/** The index when it holds together: every list as long as the objects are many, every run adding up to them. */
function indexOf(summary: Record<string, unknown>): EntryIndex | undefined {
  const { lengths, order, names, versions, namespaces, kinds, apiVersions, runs } = summary;
  if (!Array.isArray(lengths) || !Array.isArray(order) || !Array.isArray(names) || !Array.isArray(versions)) {
    return undefined;
  }
  const count = lengths.length;
  if (order.length !== count || names.length !== count || versions.length !== count) return undefined;
  for (let k = 0; k < count; k++) {
    if (!isCount(lengths[k], 2) || typeof names[k] !== 'string' || !isNullableString(versions[k])) return undefined;
  }
  if (!isRuns(namespaces, count) || !isRuns(kinds, count) || !isRuns(apiVersions, count)) return undefined;
  if (!Array.isArray(runs)) return undefined;
  let total = 0;
  for (const run of runs) {
    if (!Array.isArray(run) || run.length < 3 || typeof run[0] !== 'string' || !isCount(run[1], 1)) return undefined;
    for (let c = 2; c < run.length; c++) if (!isCount(run[c], 2)) return undefined;
    total += run[1];
  }
  if (total !== count) return undefined;
  return summary as unknown as EntryIndex;
}

/** A column of a cache entry whose digest held is not what its first line says: the entry was written wrong. */
export class SnapshotCacheColumnError extends Error {
  override readonly name = 'SnapshotCacheColumnError';
}

/**
 * One resource's run of objects in an entry: its columns (labels, then each selectable field's values), each a span
 * of the entry's bytes parsed the first time it is read.
 */
class EntryColumns implements RunColumns {
  readonly fieldCount: number;
  /** The columns parsed so far, by their place (labels first); read directly, since selectors read them per object. */
  readonly parsed: (readonly unknown[] | undefined)[];
  readonly #bytes: Buffer;
  /** Each column's start and end in the entry's bytes, one after the other. */
  readonly #spans: readonly number[];
  readonly #count: number;

  constructor(bytes: Buffer, spans: readonly number[], count: number) {
    this.#bytes = bytes;
    this.#spans = spans;
    this.#count = count;
    this.parsed = new Array(spans.length / 2);
    this.fieldCount = spans.length / 2 - 1;
  }

  /** Column `c`, parsed now if it was not yet. */
  parse(c: number): readonly unknown[] {
    const span = this.#bytes.subarray(this.#spans[2 * c], this.#spans[2 * c + 1]);
    let parsed: unknown;
    try {
      parsed = JSON.parse(entryText(span));
    } catch (error) {
      throw new SnapshotCacheColumnError(`a parsed-snapshot cache entry's column ${c} is not JSON`, { cause: error });
    }
    if (!Array.isArray(parsed) || parsed.length !== this.#count || !parsed.every(c === 0 ? isLabels : isString)) {
      throw new SnapshotCacheColumnError(`a parsed-snapshot cache entry's column ${c} is not what its index says`);
    }
    this.parsed[c] = parsed;
    return parsed;
  }
}

const isString = (value: unknown): boolean => typeof value === 'string';

function isLabels(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  for (const key in value) if (typeof (value as Record<string, unknown>)[key] !== 'string') return false;
  return true;
}

/** `runs` spelled out, a value for each object in turn. */
function expand(runs: readonly Run[], count: number): (string | null)[] {
  const values: (string | null)[] = new Array(count);
  let at = 0;
  for (const [value, length] of runs) {
    values.fill(value, at, at + length);
    at += length;
  }
  return values;
}

/** An entry's objects by row, in the order it lays them out. */
class EntryObjects implements EntryRows {
  readonly names: readonly string[];
  readonly versions: readonly (string | null)[];
  readonly lengths: readonly number[];
  readonly namespaces: (string | null)[];
  readonly kinds: (string | null)[];
  readonly apiVersions: (string | null)[];
  readonly starts: Float64Array;

  constructor(
    readonly source: Buffer,
    index: EntryIndex,
  ) {
    const count = index.lengths.length;
    this.names = index.names;
    this.versions = index.versions;
    this.lengths = index.lengths;
    this.namespaces = expand(index.namespaces, count);
    this.kinds = expand(index.kinds, count);
    this.apiVersions = expand(index.apiVersions, count);
    this.starts = new Float64Array(count);
  }
}

/** The entry when it is laid out as formatEntry writes it; `false` when it is not laid out so at all. */
function readLaidOut(bytes: Buffer): StoredSnapshot | undefined | false {
  const firstEnd = bytes.indexOf(0x0a);
  if (firstEnd < 0 || bytes.toString('latin1', firstEnd - COLUMNS_OPEN.length, firstEnd) !== COLUMNS_OPEN) return false;
  if (bytes.toString('latin1', 0, DIGEST_OPEN.length) !== DIGEST_OPEN) return false;
  const first = entryText(bytes.subarray(0, firstEnd - COLUMNS_OPEN.length));
  const summary: unknown = JSON.parse(`${first}}`);
  const rest = summaryOf(summary);
  if (rest === undefined) return undefined;
  const index = indexOf(summary as Record<string, unknown>);
  if (index === undefined) return undefined;
  const { lengths, order, runs } = index;
  const count = lengths.length;
  // Where each run's columns sit: one after the other from the line after the first, each followed by `,\n`.
  let at = firstEnd + 1;
  const columns: EntryColumns[] = [];
  for (const run of runs) {
    const spans: number[] = [];
    for (let c = 2; c < run.length; c++) {
      if (at > firstEnd + 1 && !bytes.subarray(at - 2, at).equals(COLUMN_SEPARATOR)) return undefined;
      spans.push(at, at + (run[c] as number));
      at += (run[c] as number) + COLUMN_SEPARATOR.length;
    }
    columns.push(new EntryColumns(bytes, spans, run[1]));
  }
  at -= COLUMN_SEPARATOR.length;
  if (bytes.toString('latin1', at, at + OBJECTS_OPEN.length) !== OBJECTS_OPEN) return undefined;
  at += OBJECTS_OPEN.length;
  const digest = bytes.toString('latin1', DIGEST_OPEN.length, DIGEST_END);
  if (digestOf(bytes.subarray(DIGEST_END, at)) !== digest) return undefined;
  const rows = new EntryObjects(bytes, index);
  const { starts } = rows;
  const stored: StoredObject[] = new Array(count);
  const served: StoredObject[] = new Array(count);
  const placed = new Uint8Array(count);
  const last = bytes.length - ENDING.length;
  let run = 0;
  let runStart = 0;
  for (let k = 0; k < count; k++) {
    if (k - runStart === (runs[run] as EntryIndex['runs'][0])[1]) {
      run += 1;
      runStart = k;
    }
    const i = order[k] as number;
    if (!isCount(i, 0) || i >= count || placed[i] === 1) return undefined;
    placed[i] = 1;
    const end = at + (lengths[k] as number);
    // Each text is an object, followed by a comma, or by the entry's end for the last: else the lengths lie.
    if (end > last || bytes[at] !== OPEN_BRACE || bytes[end - 1] !== CLOSE_BRACE) return undefined;
    if (k < count - 1 ? bytes[end] !== COMMA : end !== last) return undefined;
    starts[k] = at;
    const object = StoredObject.inEntry(rows, k, columns[run] as EntryColumns, k - runStart);
    stored[i] = object;
    served[k] = object;
    at = end + 1;
  }
  return { stored, served, ...rest };
}

/**
 * Text from an entry's bytes. Entries are nearly always plain ASCII (JSON escapes nothing else, but keeps non-ASCII
 * text as it is), and ASCII is read as Latin-1 with a copy instead of decoded as UTF-8: a large entry's decode is a
 * good part of reading it back.
 */
function entryText(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/** secretsSkipped and taken of an entry; taken is found again in an entry written before it was recorded. */
function summaryOf(parsed: unknown, objects?: () => readonly KubeObject[]): Omit<StoredSnapshot, 'stored'> | undefined {
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { secretsSkipped, taken } = parsed as Record<string, unknown>;
  if (typeof secretsSkipped !== 'number') return undefined;
  const at =
    typeof taken === 'string'
      ? new Date(taken)
      : taken === null || objects === undefined
        ? undefined
        : snapshotNow(objects());
  if (at !== undefined && Number.isNaN(at.getTime())) return undefined;
  return { secretsSkipped, ...(at !== undefined ? { taken: at } : {}) };
}

function parseEntry(bytes: Buffer): StoredSnapshot | undefined {
  const laidOut = readLaidOut(bytes);
  if (laidOut !== false) return laidOut;
  const parsed: unknown = JSON.parse(entryText(bytes));
  const objects = (parsed as { objects?: unknown } | null)?.objects;
  if (!Array.isArray(objects) || !objects.every((o) => typeof o === 'object' && o !== null && !Array.isArray(o))) {
    return undefined;
  }
  const kept = objects as KubeObject[];
  const rest = summaryOf(parsed, () => kept);
  return rest && { stored: kept.map((object) => StoredObject.of(object)), ...rest };
}

export function snapshotCacheIn(dir: string): ParsedSnapshotCache {
  const parser = typeof CALMOPS_PARSER_FINGERPRINT !== 'undefined' ? CALMOPS_PARSER_FINGERPRINT : parserFingerprint();
  // A load looks an entry up and, on a miss, stores it under the same name: the text is hashed once.
  let last: { text: string; file: string } | undefined;
  const entry = (text: string): string => {
    if (last?.text !== text) {
      // The text's UTF-8 bytes, encoded first: a hash fed the string encodes it several times slower than
      // Buffer.from does, and a snapshot is megabytes. The digest is the same.
      const digest = createHash('sha256')
        .update(parser ?? '')
        .update('\n')
        .update(Buffer.from(text, 'utf8'))
        .digest('hex');
      last = { text, file: join(dir, `${digest}.json`) };
    }
    return last.file;
  };
  const readEntry = (file: string): StoredSnapshot | undefined => {
    try {
      return parseEntry(readFileSync(file));
    } catch {
      return undefined;
    }
  };
  const files = parser === undefined ? undefined : fileIndexIn(dir, parser);
  return {
    get(text) {
      if (parser === undefined) return undefined;
      return readEntry(entry(text));
    },
    getFile(path) {
      const file = files?.lookup(path);
      return file === undefined ? undefined : readEntry(join(dir, file));
    },
    noteFile(path, text, before) {
      files?.note(path, basename(entry(text)), before);
    },
    set(text, parsed) {
      if (parser === undefined) return;
      try {
        // Snapshots hold whatever pod specs carry: readable by their owner only.
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const file = entry(text);
        const temporary = `${file}.${process.pid}.tmp`;
        // Secrets were dropped by the parser, so only their count is written.
        writeParts(temporary, formatEntry(parsed));
        renameSync(temporary, file);
        prune(dir);
      } catch {
        // The next load parses again.
      }
    },
  };
}

/** Writes `parts` one after the other to a new file readable by its owner only, without joining them first. */
function writeParts(file: string, parts: readonly Buffer[]): void {
  const fd = openSync(file, 'w', 0o600);
  try {
    let left = parts.reduce((sum, part) => sum + part.length, 0);
    let pending = parts.filter((part) => part.length > 0);
    while (left > 0) {
      let written = writevSync(fd, pending);
      left -= written;
      // A short write: carry on from where it stopped.
      const next: Buffer[] = [];
      for (const part of pending) {
        if (written >= part.length) written -= part.length;
        else {
          next.push(part.subarray(written));
          written = 0;
        }
      }
      pending = next;
    }
  } finally {
    closeSync(fd);
  }
}

/** Files noted at most this long after their last change are not trusted by identity: see `fileIndexIn`. */
const RACY_MS = 2_000n;
const INDEX_FILE = 'files.index';

interface FileRecord {
  path: string;
  /** What the file's status said when its text was read: device, inode, size, mtime and ctime in nanoseconds. */
  identity: string;
  parser: string;
  entry: string;
}

function identityOf(stats: BigIntStats): string {
  return [stats.dev, stats.ino, stats.size, stats.mtimeNs, stats.ctimeNs].join(':');
}

/**
 * Which entry each snapshot file read before points to, by the file's identity, in `files.index` beside the
 * entries: one JSON record per line, newest last. A file is trusted unread only when its status is exactly what it
 * was when its text was read, and it had not changed within RACY_MS before that read: a file rewritten within the
 * same tick of the file system's clock as that read could keep its identity with another text (the "racy" case git
 * guards against the same way). A trusted record whose entry is gone is simply a miss.
 */
function fileIndexIn(dir: string, parser: string) {
  const indexFile = join(dir, INDEX_FILE);
  const read = (): FileRecord[] => {
    try {
      return readFileSync(indexFile, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as FileRecord);
    } catch {
      return [];
    }
  };
  return {
    lookup(path: string): string | undefined {
      try {
        const absolute = resolve(path);
        const record = read().findLast((r) => r.path === absolute && r.parser === parser);
        if (record === undefined) return undefined;
        if (record.identity !== identityOf(statSync(absolute, { bigint: true }))) return undefined;
        return record.entry;
      } catch {
        return undefined;
      }
    },
    note(path: string, entry: string, before: BigIntStats): void {
      try {
        const absolute = resolve(path);
        const now = statSync(absolute, { bigint: true });
        const identity = identityOf(now);
        // Changed while it was read, or changed so recently that a change within the same clock tick could follow.
        const readAtNs = BigInt(Date.now()) * 1_000_000n;
        if (identity !== identityOf(before) || now.mtimeNs > readAtNs - RACY_MS * 1_000_000n) return;
        const kept = read().filter((r) => r.path !== absolute || r.parser !== parser);
        const records = [...kept.slice(-(KEEP * 4 - 1)), { path: absolute, identity, parser, entry }];
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const temporary = `${indexFile}.${process.pid}.tmp`;
        writeFileSync(temporary, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`, { mode: 0o600 });
        renameSync(temporary, indexFile);
      } catch {
        // The next load reads the file again.
      }
    },
  };
}
