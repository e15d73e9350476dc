import type { BigIntStats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { loadAll, YAMLException } from 'js-yaml';
import * as z from 'zod';
import { redactText } from '../redact/index.js';
import { ALIAS_EXPANSION, aliasBudget, CORE_SCHEMA, walkValues, writeYaml } from '../yaml-text.js';
import { newestObservedTime } from './observed-time.js';
import { StoredObject } from './stored-object.js';
import type { KubeObject } from './types.js';

/**
 * The public snapshot format: a multi-document YAML file of Kubernetes objects exactly as `kubectl get -o yaml`
 * prints them (`List` documents are unwrapped), plus an optional JSON file mapping `namespace/pod/container`
 * (and `namespace/pod/container:previous`) to log text.
 */

export class SnapshotFormatError extends Error {
  override readonly name = 'SnapshotFormatError';
}

const ObjectSchema = z
  .object({
    apiVersion: z.string().min(1),
    kind: z.string().min(1),
    metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().optional() }),
  })
  .loose();

const SnapshotLogsSchema = z.record(
  z.string().regex(/^[^/\s]+\/[^/\s]+\/[^/\s:]+(:previous)?$/, 'keys are namespace/pod/container[:previous]'),
  z.string(),
);
export type SnapshotLogs = z.infer<typeof SnapshotLogsSchema>;

/** What parsing a snapshot kept, and how many Secrets it dropped unread. */
export interface ParsedSnapshot {
  objects: KubeObject[];
  /** Secret documents dropped at parse time: their data is never kept, printed or cached. */
  secretsSkipped: number;
  /** The newest timestamp in the kept objects (see snapshotNow), found while parsing; absent when none has one. */
  taken?: Date;
}

/** A parsed snapshot in the form an API server serves it from, as the parsed-snapshot cache keeps it. */
export interface StoredSnapshot {
  stored: readonly StoredObject[];
  /**
   * The same objects in the order an API server lists them (by resource, then `namespace/name`), when that order is
   * at hand (a parsed-snapshot cache entry lays them out so): a server handed them in it builds its lists as they
   * come, without sorting thousands of keys.
   */
  served?: readonly StoredObject[];
  secretsSkipped: number;
  taken?: Date;
}

/**
 * Where documents start: a `---` line, with the directives before it. The specification forbids such a line inside
 * any node (a block scalar or quoted string included), so splitting here never cuts a document in two.
 */
const DOCUMENT_START = /^(?:%[^\n]*\n)*---(?=[ \t\r\n]|$)/gm;
/** Text before the first `---` that is only comments and blank lines is not a document of its own. */
const NOTHING = /^(?:[ \t]*(?:#[^\n]*)?(?:\r?\n|$))*$/;

/** The text of each document (or, after a `...` end marker, each run of documents), in order. */
function* documentTexts(text: string): Generator<{ start: number; text: string }> {
  let start = 0;
  DOCUMENT_START.lastIndex = 0;
  for (let match = DOCUMENT_START.exec(text); match !== null; match = DOCUMENT_START.exec(text)) {
    if (match.index > start && !(start === 0 && NOTHING.test(text.slice(0, match.index)))) {
      yield { start, text: text.slice(start, match.index) };
      start = match.index;
    } else if (start === 0) start = match.index;
  }
  if (start < text.length) yield { start, text: text.slice(start) };
}

/**
 * Real dumps (`kubectl get all,cm,secret -o yaml`, a must-gather) always hold Secrets. They are dropped here, before
 * anything else sees them, so that nothing downstream can keep, print or cache their data; the rest of the dump is
 * still evidence. Documents are parsed one at a time, so a dropped Secret's tree is garbage before the next document
 * is read, and a broken document stops the parse where it is.
 */
export function parseSnapshotText(text: string, source = 'snapshot'): ParsedSnapshot {
  const { kept, secretsSkipped, taken } = readSnapshotText(text, source, (object) => object);
  return { objects: kept, secretsSkipped, ...(taken ? { taken } : {}) };
}

/** The snapshot's objects as `keep` keeps each one, the moment it is read and checked. */
function readSnapshotText<T>(
  text: string,
  source: string,
  keep: (object: KubeObject) => T,
): { kept: T[]; secretsSkipped: number; taken?: Date } {
  const kept: T[] = [];
  let secretsSkipped = 0;
  let read = 0;
  const walk = { left: aliasBudget(text.length), newest: Number.NEGATIVE_INFINITY };
  for (const part of documentTexts(text)) {
    let values: unknown[];
    try {
      values = loadAll(part.text, null, { schema: CORE_SCHEMA });
    } catch (error) {
      throw parseFailure(error, `${source}: document ${read + 1}`, text, part.start);
    }
    for (const value of values) {
      read++;
      if (value === null || value === undefined) continue;
      if (isSecret(value)) {
        secretsSkipped++;
        continue;
      }
      const inList = isList(value);
      const items = inList ? value.items : [value];
      items.forEach((item, itemIndex) => {
        if (isSecret(item)) {
          secretsSkipped++;
          return;
        }
        if (!visit(item, walk)) {
          throw new SnapshotFormatError(`${source}: document ${read} cannot be read: ${ALIAS_EXPANSION}`);
        }
        const parsed = ObjectSchema.safeParse(item);
        if (!parsed.success) {
          throw new SnapshotFormatError(
            `${source}: ${describePosition(read - 1, itemIndex, inList)} is not a Kubernetes object (${parsed.error.issues[0]?.path.join('.') || 'root'}: ${parsed.error.issues[0]?.message})`,
            { cause: parsed.error },
          );
        }
        kept.push(keep(parsed.data as KubeObject));
      });
    }
  }
  return {
    kept,
    secretsSkipped,
    ...(Number.isFinite(walk.newest) ? { taken: new Date(walk.newest) } : {}),
  };
}

/** A parser error as the snapshot's fault, placed by line and column in the whole file. */
function parseFailure(error: unknown, where: string, text: string, offset: number): SnapshotFormatError {
  if (!(error instanceof YAMLException)) {
    // The parser's own limits (nesting deeper than the stack) are still a property of the document.
    return new SnapshotFormatError(
      `${where} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const position = Math.min(offset + (error.mark?.position ?? 0), text.length);
  const lineStart = text.lastIndexOf('\n', position - 1) + 1;
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < lineStart; at = text.indexOf('\n', at + 1)) line++;
  const lineEnd = text.indexOf('\n', position) === -1 ? text.length : text.indexOf('\n', position);
  const previousStart = lineStart > 0 ? text.lastIndexOf('\n', lineStart - 2) + 1 : lineStart;
  // The lines shown are the file's own, which may hold credentials: scrubbed like anything else calmops prints. The
  // caret is shown where the line it points into came through unchanged.
  const previous = redactText(text.slice(previousStart, lineStart));
  const offending = text.slice(lineStart, lineEnd);
  const shown = redactText(offending);
  const column = position - lineStart + 1;
  const caret = shown === offending ? `\n${' '.repeat(column - 1)}^` : '';
  const cause = new Error(`${error.reason} at line ${line}, column ${column}`);
  return new SnapshotFormatError(
    `${where} is not valid YAML: ${error.reason} at line ${line}, column ${column}:\n\n${previous}${shown}${caret}\n`,
    { cause },
  );
}

/** The objects of a snapshot, Secrets dropped. */
export function parseSnapshot(text: string, source = 'snapshot'): KubeObject[] {
  return parseSnapshotText(text, source).objects;
}

/** Any spelling of the kind (`Secret`, `secret`, `SECRET`) and any group: dumps are not always tidy. */
function isSecret(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const kind = (value as { kind?: unknown }).kind;
  return typeof kind === 'string' && kind.trim().toLowerCase() === 'secret';
}

/** How a skipped-Secrets count is told to a person, or undefined when there were none. */
export function secretsSkippedNotice(count: number | undefined): string | undefined {
  if (count === undefined || count <= 0) return undefined;
  return `${count} Secret${count === 1 ? '' : 's'} skipped, never read`;
}

function describePosition(index: number, itemIndex: number, inList: boolean): string {
  return inList ? `document ${index + 1}, item ${itemIndex + 1}` : `document ${index + 1}`;
}

function isList(value: unknown): value is { items: unknown[] } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { kind?: unknown }).kind === 'string' &&
    (value as { kind: string }).kind.endsWith('List') &&
    Array.isArray((value as { items?: unknown }).items)
  );
}

export function parseSnapshotLogs(text: string, source = 'logs'): SnapshotLogs {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new SnapshotFormatError(`${source}: not valid JSON`, { cause: error });
  }
  const parsed = SnapshotLogsSchema.safeParse(raw);
  if (!parsed.success) {
    throw new SnapshotFormatError(`${source}: ${parsed.error.issues[0]?.message ?? 'invalid'}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}

export function logKey(namespace: string, pod: string, container: string, previous = false): string {
  return `${namespace}/${pod}/${container}${previous ? ':previous' : ''}`;
}

/** Serialize objects as the snapshot format (one YAML document per object, stable order). */
export function formatSnapshot(objects: readonly KubeObject[]): string {
  return objects.map((o) => writeYaml(o)).join('---\n');
}

/** Walk `root` within the budget left (an alias bomb exhausts it), keeping the newest instant it was observed at. */
function visit(root: unknown, walk: { left: number; newest: number }): boolean {
  if (!walkValues(root, walk)) return false;
  const ms = newestObservedTime(root);
  if (ms > walk.newest) walk.newest = ms;
  return true;
}

/**
 * The moment a snapshot was taken, as far as its contents tell: the newest instant anything in it was observed at
 * (events, conditions, container states, creations; never a future on purpose such as a certificate's expiry). Replays use it
 * as "now" so ages and event recency read as they did during the incident. Undefined when nothing carries a time.
 * A parsed snapshot carries it already (`taken`).
 */
export function snapshotNow(objects: readonly KubeObject[]): Date | undefined {
  const walk = { left: Number.POSITIVE_INFINITY, newest: Number.NEGATIVE_INFINITY };
  for (const object of objects) visit(object, walk);
  return Number.isFinite(walk.newest) ? new Date(walk.newest) : undefined;
}

/** Where the logs of a snapshot live by convention: `incident.yaml` → `incident.logs.json`, next to it. */
export function siblingLogsPath(snapshotPath: string): string {
  return `${snapshotPath.replace(/\.ya?ml$/i, '')}.logs.json`;
}

export class SnapshotFileError extends Error {
  override readonly name = 'SnapshotFileError';
}

export interface LoadedSnapshot {
  /** The objects as an API server serves them (see stored-object.ts), in the snapshot's order. */
  stored: readonly StoredObject[];
  /**
   * The same objects, in the order an API server lists them when that is known (else as `stored`): what a replay
   * hands to its server.
   */
  served: readonly StoredObject[];
  /** The objects themselves, parsed from the stored texts when first read. */
  readonly objects: KubeObject[];
  /** Secret documents dropped at parse time. */
  secretsSkipped: number;
  logs: SnapshotLogs;
  /** The logs file actually read, if any. */
  logsPath?: string;
  /** The newest timestamp in the objects (see snapshotNow), absent when none has one. */
  taken?: Date;
}

/**
 * Parsed snapshots by the exact text they were parsed from (see snapshot-cache.ts). Parsing YAML is the slow part of
 * loading a snapshot, and the result depends on nothing else.
 */
export interface ParsedSnapshotCache {
  get(text: string): StoredSnapshot | undefined;
  set(text: string, parsed: StoredSnapshot): void;
  /**
   * The entry of a file whose text was looked up before and that has not changed since, told by the file's identity
   * (device, inode, size, modification and change times) without reading it: a large snapshot replayed again is then
   * neither read nor hashed. Undefined when that cannot be told; the text is then read and looked up.
   */
  getFile?(path: string): StoredSnapshot | undefined;
  /**
   * Remember that `path` held `text` (after `get` or `set` of that text); `before` is the file's status taken before
   * it was read, so a file that changed while being read is not remembered.
   */
  noteFile?(path: string, text: string, before: BigIntStats): void;
}

/**
 * Read a snapshot file and its logs. With no `logsPath`, the sibling `*.logs.json` is read when it exists; an
 * explicitly named logs file must exist.
 */
export async function loadSnapshotFiles(
  snapshotPath: string,
  logsPath?: string,
  cache?: ParsedSnapshotCache,
): Promise<LoadedSnapshot> {
  let found = cache?.getFile?.(snapshotPath);
  if (found === undefined) {
    const before = cache?.noteFile ? await stat(snapshotPath, { bigint: true }).catch(() => undefined) : undefined;
    const text = await readText(snapshotPath, 'snapshot');
    found = cache?.get(text);
    if (found === undefined) {
      // Each object is kept as its text as soon as it is read: what a replay's server sends, and what the cache
      // keeps. Its parsed tree is garbage before the next document is read, instead of filling the heap for the run.
      const { kept, secretsSkipped, taken } = readSnapshotText(text, snapshotPath, StoredObject.detached);
      found = { stored: kept, secretsSkipped, ...(taken ? { taken } : {}) };
      cache?.set(text, found);
    }
    if (before !== undefined) cache?.noteFile?.(snapshotPath, text, before);
  }
  if (logsPath !== undefined) {
    return loaded(found, parseSnapshotLogs(await readText(logsPath, 'logs'), logsPath), logsPath);
  }
  const sibling = siblingLogsPath(snapshotPath);
  let siblingText: string;
  try {
    siblingText = await readFile(sibling, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return loaded(found, {}, undefined);
    throw new SnapshotFileError(`cannot read logs file ${sibling}: ${(error as Error).message}`, { cause: error });
  }
  return loaded(found, parseSnapshotLogs(siblingText, sibling), sibling);
}

function loaded(found: StoredSnapshot, logs: SnapshotLogs, logsPath: string | undefined): LoadedSnapshot {
  const { stored, served, secretsSkipped, taken } = found;
  let objects: KubeObject[] | undefined;
  return {
    stored,
    served: served ?? stored,
    get objects() {
      objects ??= stored.map((entry) => entry.object);
      return objects;
    },
    secretsSkipped,
    logs,
    ...(logsPath !== undefined ? { logsPath } : {}),
    ...(taken !== undefined ? { taken } : {}),
  };
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (error as Error).message;
    throw new SnapshotFileError(`cannot read ${what} file ${path}: ${why}`, { cause: error });
  }
}
