import { recordedObjectText, recordObjectText } from '../cluster/object-text.js';
import { RESOURCES, type ResourceInfo, resourceForKind } from '../cluster/resources.js';
import { snapshotNow } from '../cluster/snapshot.js';
import type { KubeObject, ResourceKind } from '../cluster/types.js';
import { byCodePoint } from '../code-point-order.js';
import { isEventsGroupEvent, toCoreEvent } from './event-conversion.js';

/**
 * The snapshot indexed the way the API server stores it: per resource, ordered by `namespace/name` (etcd key
 * order), with one resourceVersion for the whole snapshot since nothing in it ever changes. Nothing changes its
 * objects either (a server is handed new objects instead, see `setObjects`), so each object's JSON is made once:
 * a list of thousands of objects is then a concatenation of their texts rather than a serialization of them all.
 */
export interface SnapshotCatalog {
  resourceVersion: string;
  /** The clock the snapshot is read at: ages in Table responses are relative to it. */
  now: Date;
  /** Objects of kinds the server does not serve (Secrets are refused earlier, by the snapshot parser). */
  skippedKinds: ReadonlyMap<string, number>;
  objects(resource: ResourceKind): readonly KubeObject[];
  /**
   * The objects of a resource whose `namespace/name` key starts with `namespace/`, in order: every object of that
   * namespace is among them (a namespace holding a `/`, which no real one does, can bring a few more).
   */
  objectsKeyedIn(resource: ResourceKind, namespace: string): readonly KubeObject[];
  get(resource: ResourceKind, namespace: string | undefined, name: string): KubeObject | undefined;
  count(): number;
  /** `JSON.stringify` of one of this catalog's objects, made once. */
  text(object: KubeObject): string;
}

export function objectKey(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

function groupVersion(info: ResourceInfo): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}

/** The index of the first key not below `bound` in ascending `keys`. */
function firstAtLeast(keys: readonly string[], bound: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((keys[middle] as string) < bound) low = middle + 1;
    else high = middle;
  }
  return low;
}

export function buildCatalog(objects: readonly KubeObject[], options: { now?: Date } = {}): SnapshotCatalog {
  const byResource = new Map<ResourceKind, Map<string, KubeObject>>();
  const skipped = new Map<string, number>();
  let maxVersion = 0;
  for (const object of objects) {
    const info = object.kind ? resourceForKind(object.kind) : undefined;
    if (!info || object.kind === 'Secret') {
      const kind = object.kind ?? '(no kind)';
      skipped.set(kind, (skipped.get(kind) ?? 0) + 1);
      continue;
    }
    const rv = Number(object.metadata.resourceVersion);
    if (Number.isSafeInteger(rv) && rv > maxVersion) maxVersion = rv;
    // Cluster-scoped objects exported with a stray namespace would be unreachable by their real path.
    const strayNamespace = !info.namespaced && object.metadata.namespace !== undefined;
    let normalized = isEventsGroupEvent(object) ? toCoreEvent(object) : object;
    if (normalized.apiVersion == null || strayNamespace) {
      const metadata = { ...normalized.metadata };
      if (strayNamespace) delete metadata.namespace;
      normalized = { ...normalized, apiVersion: normalized.apiVersion ?? groupVersion(info), metadata };
    }
    let bucket = byResource.get(info.plural);
    if (!bucket) {
      bucket = new Map();
      byResource.set(info.plural, bucket);
    }
    // A later document replaces an earlier one with the same identity, as a re-applied manifest would.
    bucket.set(objectKey(normalized), normalized);
  }
  const sorted = new Map<ResourceKind, KubeObject[]>();
  const sortedKeys = new Map<ResourceKind, string[]>();
  for (const [resource, bucket] of byResource) {
    const entries = [...bucket.entries()].sort(([a], [b]) => byCodePoint(a, b));
    sorted.set(
      resource,
      entries.map(([, object]) => object),
    );
    sortedKeys.set(
      resource,
      entries.map(([key]) => key),
    );
  }
  const resourceVersion = String(maxVersion > 0 ? maxVersion : 1);
  const now = options.now ?? snapshotNow(objects) ?? new Date();
  const total = [...sorted.values()].reduce((sum, list) => sum + list.length, 0);
  return {
    resourceVersion,
    now,
    skippedKinds: skipped,
    objects: (resource) => sorted.get(resource) ?? [],
    objectsKeyedIn: (resource, namespace) => {
      const objects = sorted.get(resource) ?? [];
      const keys = sortedKeys.get(resource) ?? [];
      // Keys in `namespace/` sort from `namespace/` up to `namespace0`, the next character after the slash.
      return objects.slice(firstAtLeast(keys, `${namespace}/`), firstAtLeast(keys, `${namespace}0`));
    },
    get: (resource, namespace, name) => {
      const info = RESOURCES[resource];
      return byResource.get(resource)?.get(`${info.namespaced ? (namespace ?? '') : ''}/${name}`);
    },
    count: () => total,
    text: (object) => {
      // An object served as it was handed over may come with its text (object-text.ts); a normalized one is a copy
      // made here, recorded the first time it is served.
      let text = recordedObjectText(object);
      if (text === undefined) {
        text = JSON.stringify(object);
        recordObjectText(object, text);
      }
      return text;
    },
  };
}
