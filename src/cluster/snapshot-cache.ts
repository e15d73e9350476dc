import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordObjectText } from './object-text.js';
import { type ParsedSnapshotCache, snapshotNow } from './snapshot.js';
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

function parserFingerprint(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const hash = createHash('sha256');
    for (const source of ['./snapshot.ts', './snapshot-cache.ts']) {
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

/** An entry as written; `taken` is null for a snapshot without any timestamp. */
interface Entry {
  objects: KubeObject[];
  secretsSkipped: number;
  taken: string | null;
}

/**
 * An entry is one JSON document laid out one object to a line, after a first line with the rest of the entry:
 *
 *     {"secretsSkipped":0,"taken":"2025-06-01T09:00:00.000Z","objects":[
 *     {"apiVersion":"v1","kind":"Pod",…},
 *     {"apiVersion":"v1","kind":"Event",…}
 *     ]}
 *
 * JSON never holds a raw line break inside a value, so each object's text is its line, read and parsed on its own
 * and kept (object-text.ts): serving the snapshot then sends these texts instead of serializing the objects again.
 * Any other JSON document with the same fields is read too, in one piece.
 */
const OBJECTS_OPEN = '"objects":[';
const ENTRY_CLOSE = ']}';

function formatEntry(entry: Entry): string {
  if (entry.objects.length === 0) return JSON.stringify(entry);
  const head = JSON.stringify({ secretsSkipped: entry.secretsSkipped, taken: entry.taken });
  const lines = entry.objects.map((object) => {
    const text = JSON.stringify(object);
    recordObjectText(object, text);
    return text;
  });
  return `${head.slice(0, -1)},${OBJECTS_OPEN}\n${lines.join(',\n')}\n${ENTRY_CLOSE}`;
}

function parseEntry(content: string): unknown {
  const lines = content.split('\n');
  const head = lines[0] ?? '';
  if (lines.length < 3 || !head.endsWith(OBJECTS_OPEN) || lines[lines.length - 1] !== ENTRY_CLOSE) {
    return JSON.parse(content);
  }
  const entry = JSON.parse(`${head.slice(0, -OBJECTS_OPEN.length)}"objects":[]}`) as Record<string, unknown>;
  const objects: unknown[] = new Array(lines.length - 2);
  for (let i = 1; i < lines.length - 1; i++) {
    const line = lines[i] as string;
    const text = i < lines.length - 2 ? line.slice(0, -1) : line;
    const object: unknown = JSON.parse(text);
    if (typeof object === 'object' && object !== null) recordObjectText(object, text);
    objects[i - 1] = object;
  }
  entry['objects'] = objects;
  return entry;
}

export function snapshotCacheIn(dir: string): ParsedSnapshotCache {
  const parser = parserFingerprint();
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
  return {
    get(text) {
      if (parser === undefined) return undefined;
      try {
        const parsed = parseEntry(readFileSync(entry(text), 'utf8'));
        if (typeof parsed !== 'object' || parsed === null) return undefined;
        const { objects, secretsSkipped, taken } = parsed as Partial<Record<keyof Entry, unknown>>;
        if (!Array.isArray(objects) || typeof secretsSkipped !== 'number') return undefined;
        const kept = objects as KubeObject[];
        // An entry without the time it was taken (written before it was recorded) has it found again.
        const at = typeof taken === 'string' ? new Date(taken) : taken === null ? undefined : snapshotNow(kept);
        if (at !== undefined && Number.isNaN(at.getTime())) return undefined;
        return { objects: kept, secretsSkipped, ...(at !== undefined ? { taken: at } : {}) };
      } catch {
        return undefined;
      }
    },
    set(text, parsed) {
      if (parser === undefined) return;
      try {
        // Snapshots hold whatever pod specs carry: readable by their owner only.
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const file = entry(text);
        const temporary = `${file}.${process.pid}.tmp`;
        // Secrets were dropped by the parser, so only their count is written.
        const written: Entry = {
          objects: parsed.objects,
          secretsSkipped: parsed.secretsSkipped,
          taken: parsed.taken?.toISOString() ?? null,
        };
        writeFileSync(temporary, formatEntry(written), { mode: 0o600 });
        renameSync(temporary, file);
        prune(dir);
      } catch {
        // The next load parses again.
      }
    },
  };
}
