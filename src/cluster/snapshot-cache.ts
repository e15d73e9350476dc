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
import { StoredObject } from './stored-object.js';
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
 * An entry is one JSON document. Its first line holds the rest of the entry; then come the objects' heads
 * (stored-object.ts), one compact array to a line, in the snapshot's order; then, on one line, the objects' texts,
 * laid out in the order an API server lists them (by resource, then by namespace and name):
 *
 *     {"secretsSkipped":0,"taken":"2025-06-01T09:00:00.000Z","lengths":[412,…],"order":[3,0,…],"heads":[
 *     ["v1","Pod","web-0","shop","812",{"app":"web"},["node-1","Always",…]],
 *     …
 *     ],"objects":[
 *     {"apiVersion":"v1","kind":"Pod",…},{…},…
 *     ]}
 *
 * `lengths` are the texts' lengths in bytes, in the snapshot's order; `order` names the object each text in turn
 * belongs to. Reading an entry back parses only the heads, which are what an API server needs to find and select
 * objects; each text stays a span of the entry's bytes, decoded and parsed only when its object is read whole. Since
 * a list answer is a run of objects in exactly the order they are laid out, joined by the same commas, most of a
 * list goes out as one slice of the entry. An entry whose heads or lengths do not hold is a miss; any other JSON
 * document with `objects` and `secretsSkipped` is read in one piece, from its objects.
 */
const HEADS_OPEN = '"heads":[';
const OBJECTS_OPEN = '],"objects":[';
const ENTRY_CLOSE = ']}';
const ENDING = Buffer.from(`\n${ENTRY_CLOSE}`);
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** The objects' indices in the order an API server lists them: by resource, then by `namespace/name`. */
function servingOrder(stored: readonly StoredObject[]): number[] {
  const keys = stored.map((o) => {
    const plural = o.kind === undefined ? '' : (resourceForKind(o.kind)?.plural ?? '');
    return `${plural}\u0000${o.namespace ?? ''}/${o.name}`;
  });
  // A stable sort: objects with the same identity keep their order, as the server relies on (a later one wins).
  return keys.map((_, i) => i).sort((a, b) => byCodePoint(keys[a] as string, keys[b] as string));
}

/**
 * The entry's parts, to be written one after the other; every object in `entry` is then kept in the entry's bytes
 * (`keepIn`), so a replay that has just parsed a snapshot serves it as one that read it back would.
 */
function formatEntry(entry: StoredSnapshot): Buffer[] {
  const summary = { secretsSkipped: entry.secretsSkipped, taken: entry.taken?.toISOString() ?? null };
  const { stored } = entry;
  if (stored.length === 0) return [Buffer.from(JSON.stringify({ ...summary, objects: [] }))];
  const order = servingOrder(stored);
  const texts = order.map((i) => (stored[i] as StoredObject).text);
  // One text, encoded once: thousands of small encodings and copies cost far more than the bytes themselves.
  const objects = Buffer.from(texts.join(','), 'utf8');
  const ascii = objects.length === texts.reduce((sum, text) => sum + text.length, texts.length - 1);
  const lengths: number[] = new Array(stored.length);
  let at = 0;
  for (let k = 0; k < order.length; k++) {
    const i = order[k] as number;
    const text = texts[k] as string;
    const length = ascii ? text.length : Buffer.byteLength(text, 'utf8');
    lengths[i] = length;
    (stored[i] as StoredObject).keepIn(objects, at, at + length);
    at += length + 1;
  }
  const heads = stored.map((o) => JSON.stringify(o.record())).join(',\n');
  const head = JSON.stringify({ ...summary, lengths, order });
  return [Buffer.from(`${head.slice(0, -1)},${HEADS_OPEN}\n${heads}\n${OBJECTS_OPEN}\n`), objects, ENDING];
}

/** The entry when it is laid out as formatEntry writes it; `false` when it is not laid out so at all. */
function readLaidOut(bytes: Buffer): StoredSnapshot | undefined | false {
  const firstEnd = bytes.indexOf(0x0a);
  if (firstEnd < 0 || bytes.toString('latin1', firstEnd - HEADS_OPEN.length, firstEnd) !== HEADS_OPEN) return false;
  if (!bytes.subarray(bytes.length - ENDING.length).equals(ENDING)) return undefined;
  const first = bytes.toString('utf8', 0, firstEnd);
  const summary: unknown = JSON.parse(`${first.slice(0, -HEADS_OPEN.length)}"objects":[]}`);
  const rest = summaryOf(summary);
  const { lengths, order } = summary as { lengths?: unknown; order?: unknown };
  // Where the heads end follows from the texts' lengths, which fill the rest of the entry: checked there, rather
  // than searched for through megabytes of heads.
  const headsEnd = Array.isArray(lengths) ? objectsLine(bytes, lengths) : -1;
  if (headsEnd < firstEnd) return undefined;
  // The heads are one JSON array as they stand, brackets included (the `[` ending the first line, the `]` opening
  // the objects' line): read in one parse, which is much quicker than one per line, of the entry's own text.
  const heads: unknown = JSON.parse(entryText(bytes.subarray(firstEnd - 1, headsEnd + 2)));
  if (rest === undefined || !Array.isArray(heads) || !Array.isArray(lengths) || !Array.isArray(order)) return undefined;
  const count = heads.length;
  if (lengths.length !== count || order.length !== count) return undefined;
  const stored: StoredObject[] = new Array(count);
  const served: StoredObject[] = new Array(count);
  const placed = new Uint8Array(count);
  let at = headsEnd + OBJECTS_OPEN.length + 2;
  const last = bytes.length - ENDING.length;
  for (let k = 0; k < count; k++) {
    const i: unknown = order[k];
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= count || placed[i] === 1) return undefined;
    placed[i] = 1;
    const length: unknown = lengths[i];
    if (typeof length !== 'number' || !Number.isInteger(length) || length < 2) return undefined;
    const end = at + length;
    // Each text is an object, followed by a comma, or by the entry's end for the last: else the lengths lie.
    if (end > last || bytes[at] !== OPEN_BRACE || bytes[end - 1] !== CLOSE_BRACE) return undefined;
    if (k < count - 1 ? bytes[end] !== COMMA : end !== last) return undefined;
    const object = StoredObject.fromRecord(heads[i], bytes, at, end);
    if (object === undefined) return undefined;
    stored[i] = object;
    served[k] = object;
    at = end + 1;
  }
  return { stored, served, ...rest };
}

/**
 * Where the line opening the objects starts (`\n],"objects":[\n`), given that the texts of `lengths` fill the entry
 * from the end of that line to its ending; -1 when the lengths are not such, or the line is not there.
 */
function objectsLine(bytes: Buffer, lengths: readonly unknown[]): number {
  let texts = Math.max(0, lengths.length - 1);
  for (const length of lengths) {
    if (typeof length !== 'number' || !Number.isInteger(length) || length < 2) return -1;
    texts += length;
  }
  const marker = `\n${OBJECTS_OPEN}\n`;
  const at = bytes.length - ENDING.length - texts - marker.length;
  return at >= 0 && bytes.toString('latin1', at, at + marker.length) === marker ? at : -1;
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
