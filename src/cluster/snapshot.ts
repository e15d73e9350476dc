import { readFile } from 'node:fs/promises';
import { parseAllDocuments, stringify } from 'yaml';
import * as z from 'zod';
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

export const SnapshotLogsSchema = z.record(
  z.string().regex(/^[^/\s]+\/[^/\s]+\/[^/\s:]+(:previous)?$/, 'keys are namespace/pod/container[:previous]'),
  z.string(),
);
export type SnapshotLogs = z.infer<typeof SnapshotLogsSchema>;

/** What parsing a snapshot kept, and how many Secrets it dropped unread. */
export interface ParsedSnapshot {
  objects: KubeObject[];
  /** Secret documents dropped at parse time: their data is never kept, printed or cached. */
  secretsSkipped: number;
}

/**
 * Real dumps (`kubectl get all,cm,secret -o yaml`, a must-gather) always hold Secrets. They are dropped here, before
 * anything else sees them, so that nothing downstream can keep, print or cache their data; the rest of the dump is
 * still evidence.
 */
export function parseSnapshotText(text: string, source = 'snapshot'): ParsedSnapshot {
  const docs = parseAllDocuments(text);
  const objects: KubeObject[] = [];
  let secretsSkipped = 0;
  docs.forEach((doc, index) => {
    if (doc.errors.length > 0) {
      throw new SnapshotFormatError(`${source}: document ${index + 1} is not valid YAML: ${doc.errors[0]?.message}`, {
        cause: doc.errors[0],
      });
    }
    let value: unknown;
    try {
      // Aliases are expanded here: an alias bomb fails with the yaml package's own limit, named after the file.
      value = doc.toJS();
    } catch (error) {
      throw new SnapshotFormatError(
        `${source}: document ${index + 1} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    if (value === null || value === undefined) return;
    if (isSecret(value)) {
      secretsSkipped++;
      return;
    }
    const items = isList(value) ? value.items : [value];
    items.forEach((item, itemIndex) => {
      if (isSecret(item)) {
        secretsSkipped++;
        return;
      }
      const parsed = ObjectSchema.safeParse(item);
      if (!parsed.success) {
        throw new SnapshotFormatError(
          `${source}: ${describePosition(index, itemIndex, isList(value))} is not a Kubernetes object (${parsed.error.issues[0]?.path.join('.') || 'root'}: ${parsed.error.issues[0]?.message})`,
          { cause: parsed.error },
        );
      }
      objects.push(parsed.data as KubeObject);
    });
  });
  return { objects, secretsSkipped };
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
  return objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
}

// Any RFC 3339 timestamp in UTC, as the API server writes creationTimestamp, lastTimestamp, startedAt, …
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * The moment a snapshot was taken, as far as its contents tell: the newest timestamp anywhere in it. Replays use it
 * as "now" so ages and event recency read as they did during the incident. Undefined when nothing carries a time.
 */
export function snapshotNow(objects: readonly KubeObject[]): Date | undefined {
  let newest = Number.NEGATIVE_INFINITY;
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      if (TIMESTAMP.test(value)) {
        const ms = Date.parse(value);
        if (ms > newest) newest = ms;
      }
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (typeof value === 'object' && value !== null) {
      for (const item of Object.values(value)) visit(item);
    }
  };
  for (const object of objects) visit(object);
  return Number.isFinite(newest) ? new Date(newest) : undefined;
}

/** Where the logs of a snapshot live by convention: `incident.yaml` → `incident.logs.json`, next to it. */
export function siblingLogsPath(snapshotPath: string): string {
  return `${snapshotPath.replace(/\.ya?ml$/i, '')}.logs.json`;
}

export class SnapshotFileError extends Error {
  override readonly name = 'SnapshotFileError';
}

export interface LoadedSnapshot {
  objects: KubeObject[];
  /** Secret documents dropped at parse time. */
  secretsSkipped: number;
  logs: SnapshotLogs;
  /** The logs file actually read, if any. */
  logsPath?: string;
}

/**
 * Parsed snapshots by the exact text they were parsed from. Parsing YAML is the slow part of loading a snapshot
 * (hundreds of milliseconds for the demo cluster), and the result depends on nothing else.
 */
export interface ParsedSnapshotCache {
  get(text: string): ParsedSnapshot | undefined;
  set(text: string, parsed: ParsedSnapshot): void;
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
  const text = await readText(snapshotPath, 'snapshot');
  let parsed = cache?.get(text);
  if (parsed === undefined) {
    parsed = parseSnapshotText(text, snapshotPath);
    cache?.set(text, parsed);
  }
  const { objects, secretsSkipped } = parsed;
  if (logsPath !== undefined) {
    return {
      objects,
      secretsSkipped,
      logs: parseSnapshotLogs(await readText(logsPath, 'logs'), logsPath),
      logsPath,
    };
  }
  const sibling = siblingLogsPath(snapshotPath);
  let siblingText: string;
  try {
    siblingText = await readFile(sibling, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { objects, secretsSkipped, logs: {} };
    throw new SnapshotFileError(`cannot read logs file ${sibling}: ${(error as Error).message}`, { cause: error });
  }
  return { objects, secretsSkipped, logs: parseSnapshotLogs(siblingText, sibling), logsPath: sibling };
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
