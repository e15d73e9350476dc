import { parseAllDocuments, stringify } from 'yaml';
import { z } from 'zod';
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

export function parseSnapshot(text: string, source = 'snapshot'): KubeObject[] {
  const docs = parseAllDocuments(text);
  const objects: KubeObject[] = [];
  docs.forEach((doc, index) => {
    if (doc.errors.length > 0) {
      throw new SnapshotFormatError(`${source}: document ${index + 1} is not valid YAML: ${doc.errors[0]?.message}`, {
        cause: doc.errors[0],
      });
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const items = isList(value) ? value.items : [value];
    items.forEach((item, itemIndex) => {
      const parsed = ObjectSchema.safeParse(item);
      if (!parsed.success) {
        const where = isList(value) ? `document ${index + 1}, item ${itemIndex + 1}` : `document ${index + 1}`;
        throw new SnapshotFormatError(
          `${source}: ${where} is not a Kubernetes object (${parsed.error.issues[0]?.path.join('.') || 'root'}: ${parsed.error.issues[0]?.message})`,
          { cause: parsed.error },
        );
      }
      if (parsed.data.kind === 'Secret') {
        throw new SnapshotFormatError(
          `${source}: ${where(index, itemIndex)} is a Secret; snapshots never hold Secrets`,
        );
      }
      objects.push(parsed.data as KubeObject);
    });
  });
  return objects;
}

function where(index: number, itemIndex: number): string {
  return `document ${index + 1} item ${itemIndex + 1}`;
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
