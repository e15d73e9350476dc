import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import {
  type BigIntStats,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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
 * An entry is one JSON document laid out one record to a line. After a first line with the rest of the entry come
 * the objects' heads (stored-object.ts), one compact array each, then the objects' texts in the same order:
 *
 *     {"secretsSkipped":0,"taken":"2025-06-01T09:00:00.000Z","lengths":[412,…],"heads":[
 *     ["v1","Pod","web-0","shop","812",{"app":"web"},["node-1","Always",…]],
 *     …
 *     ],"objects":[
 *     {"apiVersion":"v1","kind":"Pod",…},
 *     …
 *     ]}
 *
 * JSON never holds a raw line break inside a value, so each record is its line. Reading an entry back parses only
 * the heads, which are what an API server needs to find and select objects; each text is cut out of the entry's
 * bytes at its recorded length in bytes and kept as those bytes, decoded and parsed only when its object is read
 * whole (serving the snapshot sends the bytes, and only the client parses them). Any other JSON document with
 * `objects` and `secretsSkipped`, or an entry whose heads or lengths do not hold, is read in one piece, from its
 * objects.
 */
const HEADS_OPEN = '"heads":[';
const OBJECTS_OPEN = '],"objects":[';
const ENTRY_CLOSE = ']}';
const SEPARATOR = Buffer.from(',\n');
const ENDING = Buffer.from(`\n${ENTRY_CLOSE}`);
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function formatEntry(entry: StoredSnapshot): Buffer {
  const summary = { secretsSkipped: entry.secretsSkipped, taken: entry.taken?.toISOString() ?? null };
  if (entry.stored.length === 0) return Buffer.from(JSON.stringify({ ...summary, objects: [] }));
  const heads = entry.stored.map((stored) => JSON.stringify(stored.record()));
  // The texts go in as their UTF-8 bytes, which a replay's API server then sends as they are: each text is encoded
  // once, for both, and megabytes of texts are never joined into one string to be encoded again.
  const texts = entry.stored.map((stored) => stored.bytes);
  // The texts' lengths let a reader cut them out where they stand instead of searching megabytes for separators.
  const head = JSON.stringify({ ...summary, lengths: texts.map((text) => text.length) });
  const parts: Buffer[] = [Buffer.from(`${head.slice(0, -1)},${HEADS_OPEN}\n${heads.join(',\n')}\n${OBJECTS_OPEN}\n`)];
  for (let i = 0; i < texts.length; i++) {
    if (i > 0) parts.push(SEPARATOR);
    parts.push(texts[i] as Buffer);
  }
  parts.push(ENDING);
  return Buffer.concat(parts);
}

/** The entry, or undefined when it is not laid out as formatEntry writes it. */
function readLaidOut(bytes: Buffer): StoredSnapshot | undefined {
  const firstEnd = bytes.indexOf(0x0a);
  const headsEnd = firstEnd < 0 ? -1 : bytes.indexOf(`\n${OBJECTS_OPEN}\n`, firstEnd);
  if (headsEnd < 0 || !bytes.subarray(bytes.length - ENDING.length).equals(ENDING)) return undefined;
  const first = bytes.toString('utf8', 0, firstEnd);
  if (!first.endsWith(HEADS_OPEN)) return undefined;
  const summary: unknown = JSON.parse(`${first.slice(0, -HEADS_OPEN.length)}"objects":[]}`);
  const rest = summaryOf(summary);
  const lengths = (summary as { lengths?: unknown }).lengths;
  // The heads are one JSON array as they stand, brackets included (the `[` ending the first line, the `]` opening
  // the objects' line): read in one parse, which is much quicker than one per line, of the entry's own text.
  const heads: unknown = JSON.parse(entryText(bytes.subarray(firstEnd - 1, headsEnd + 2)));
  if (rest === undefined || !Array.isArray(heads) || !Array.isArray(lengths) || heads.length !== lengths.length) {
    return undefined;
  }
  const stored: StoredObject[] = new Array(heads.length);
  let at = headsEnd + OBJECTS_OPEN.length + 2;
  for (let i = 0; i < heads.length; i++) {
    const length: unknown = lengths[i];
    if (typeof length !== 'number' || !Number.isInteger(length) || length < 2) return undefined;
    const end = at + length;
    // Each text is an object, followed by the separator, or by the end for the last: else the lengths lie.
    const follows = i < heads.length - 1 ? SEPARATOR : ENDING;
    if (end + follows.length > bytes.length || bytes[at] !== OPEN_BRACE || bytes[end - 1] !== CLOSE_BRACE) {
      return undefined;
    }
    if (bytes.compare(follows, 0, follows.length, end, end + follows.length) !== 0) return undefined;
    const entry = StoredObject.fromRecord(heads[i], bytes.subarray(at, end));
    if (entry === undefined) return undefined;
    stored[i] = entry;
    at = end + SEPARATOR.length;
  }
  if (at + ENDING.length - SEPARATOR.length !== bytes.length) return undefined;
  return { stored, ...rest };
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
  if (laidOut !== undefined) return laidOut;
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
      const digest = createHash('sha256')
        .update(parser ?? '')
        .update('\n')
        .update(text)
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
        writeFileSync(temporary, formatEntry(parsed), { mode: 0o600 });
        renameSync(temporary, file);
        prune(dir);
      } catch {
        // The next load parses again.
      }
    },
  };
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
