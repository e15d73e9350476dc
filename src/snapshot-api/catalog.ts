import { RESOURCES, type ResourceInfo, resourceForKind } from '../cluster/resources.js';
import { snapshotNow } from '../cluster/snapshot.js';
import { StoredObject } from '../cluster/stored-object.js';
import type { KubeObject, ResourceKind } from '../cluster/types.js';
import { byCodePoint, sortByCodePoint } from '../code-point-order.js';
import { isEventsGroupEvent, toCoreEvent } from './event-conversion.js';
import { LabelIndex, type LabelKeyIndex } from './label-index.js';

/**
 * The snapshot indexed the way the API server stores it: per resource, ordered by `namespace/name` (etcd key
 * order), with one resourceVersion for the whole snapshot since nothing in it ever changes. Nothing changes its
 * objects either (a server is handed new objects instead, see `setObjects`), so each object is kept as a
 * StoredObject: lists are found and selected by the objects' heads and answered with their texts, and an object is
 * parsed whole only for the answers that need it (tables, logs, metadata-only views).
 */
export interface SnapshotCatalog {
  resourceVersion: string;
  /** The clock the snapshot is read at: ages in Table responses are relative to it. */
  now: Date;
  /** Objects of kinds the server does not serve (Secrets are refused earlier, by the snapshot parser). */
  skippedKinds: ReadonlyMap<string, number>;
  objects(resource: ResourceKind): readonly StoredObject[];
  /**
   * The objects of a resource whose `namespace/name` key starts with `namespace/`, in order: every object of that
   * namespace is among them (a namespace holding a `/`, which no real one does, can bring a few more).
   */
  objectsKeyedIn(resource: ResourceKind, namespace: string): readonly StoredObject[];
  get(resource: ResourceKind, namespace: string | undefined, name: string): StoredObject | undefined;
  count(): number;
  /**
   * Where the objects carrying label `key` sit among `objects(resource)`, or among `objectsKeyedIn(resource,
   * namespace)` when a namespace is given.
   */
  labelKey(resource: ResourceKind, namespace: string | undefined, key: string): LabelKeyIndex;
  /**
   * The resource usage a snapshot captured from metrics.k8s.io (PodMetrics, NodeMetrics), in namespace/name order;
   * the server serves the Metrics API only when the snapshot holds some.
   */
  metrics: { pods: readonly KubeObject[]; nodes: readonly KubeObject[] };
}

/** The kinds metrics.k8s.io serves, kept apart from the objects since no read of a kind returns them. */
const METRICS_KINDS: Readonly<Record<string, 'pods' | 'nodes'>> = { PodMetrics: 'pods', NodeMetrics: 'nodes' };

const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export function objectKey(object: StoredObject): string {
  return `${object.namespace ?? ''}/${object.name}`;
}

function groupVersion(info: ResourceInfo): string {
  return info.group === '' ? info.version : `${info.group}/${info.version}`;
}

/**
 * The index of the first object whose key is not below `bound` among `objects` in key order. Keys are made for the
 * few objects the search looks at rather than kept for all: a snapshot of thousands would hold thousands of strings
 * for the whole run to find a handful of objects.
 */
function firstAtLeast(objects: readonly StoredObject[], bound: string): number {
  let low = 0;
  let high = objects.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (objectKey(objects[middle] as StoredObject) < bound) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * The object as the server serves it. Most are served as they are; an events.k8s.io Event is converted to core/v1,
 * a cluster-scoped object exported with a stray namespace would be unreachable by its real path, and an object
 * without apiVersion gets its resource's.
 */
function normalized(entry: StoredObject, info: ResourceInfo): StoredObject {
  const strayNamespace = !info.namespaced && entry.namespace !== undefined;
  const eventsGroup = isEventsGroupEvent(entry);
  if (!eventsGroup && !strayNamespace && entry.apiVersion !== undefined) return entry;
  let object = eventsGroup ? toCoreEvent(entry.object) : entry.object;
  if (object.apiVersion == null || strayNamespace) {
    const metadata = { ...object.metadata };
    if (strayNamespace) delete metadata.namespace;
    object = { ...object, apiVersion: object.apiVersion ?? groupVersion(info), metadata };
  }
  return StoredObject.of(object);
}

/**
 * A resource's objects as they come, with the key of the last one; `sorted` while each key is above the one before.
 */
interface Listing {
  objects: StoredObject[];
  lastKey: string;
  sorted: boolean;
}

/**
 * The listing in key order, a later object replacing an earlier one with the same key. Objects that came in order
 * (a snapshot read back from the parsed-snapshot cache comes in the order it is served in) are kept as they came.
 */
function inKeyOrder(listing: Listing): StoredObject[] {
  if (listing.sorted) return listing.objects;
  const bucket = new Map<string, StoredObject>();
  for (const object of listing.objects) bucket.set(objectKey(object), object);
  return sortByCodePoint([...bucket.keys()]).map((key) => bucket.get(key) as StoredObject);
}

export function buildCatalog(
  objects: readonly (KubeObject | StoredObject)[],
  options: { now?: Date } = {},
): SnapshotCatalog {
  const byResource = new Map<ResourceKind, Listing>();
  const skipped = new Map<string, number>();
  const metrics: { pods: KubeObject[]; nodes: KubeObject[] } = { pods: [], nodes: [] };
  let maxVersion = 0;
  for (const given of objects) {
    const stored = given instanceof StoredObject ? given : StoredObject.of(given);
    const { kind, resourceVersion } = stored;
    const metricsKind = kind === undefined ? undefined : METRICS_KINDS[kind];
    if (metricsKind !== undefined && String(stored.apiVersion ?? '').startsWith('metrics.k8s.io/')) {
      metrics[metricsKind].push(stored.object);
      continue;
    }
    const info = kind ? resourceForKind(kind) : undefined;
    if (!info || kind === 'Secret') {
      const shown = kind ?? '(no kind)';
      skipped.set(shown, (skipped.get(shown) ?? 0) + 1);
      continue;
    }
    const rv = Number(resourceVersion);
    if (Number.isSafeInteger(rv) && rv > maxVersion) maxVersion = rv;
    const entry = normalized(stored, info);
    let listing = byResource.get(info.plural);
    if (!listing) {
      listing = { objects: [], lastKey: '', sorted: true };
      byResource.set(info.plural, listing);
    }
    if (listing.sorted) {
      const key = objectKey(entry);
      const last = listing.objects.length - 1;
      if (last >= 0) {
        // A later document replaces an earlier one with the same identity, as a re-applied manifest would.
        if (key === listing.lastKey) {
          listing.objects[last] = entry;
          continue;
        }
        if (key < listing.lastKey) listing.sorted = false;
      }
      listing.lastKey = key;
    }
    listing.objects.push(entry);
  }
  const sorted = new Map<ResourceKind, StoredObject[]>();
  for (const [resource, listing] of byResource) sorted.set(resource, inKeyOrder(listing));
  const resourceVersion = String(maxVersion > 0 ? maxVersion : 1);
  // Only a snapshot served without its time has its objects read whole to find it.
  const now =
    options.now ??
    snapshotNow(objects.map((given) => (given instanceof StoredObject ? given.object : given))) ??
    new Date();
  const total = [...sorted.values()].reduce((sum, list) => sum + list.length, 0);
  const objectsOf = (resource: ResourceKind): readonly StoredObject[] => sorted.get(resource) ?? [];
  const objectsKeyedIn = (resource: ResourceKind, namespace: string): readonly StoredObject[] => {
    const entries = sorted.get(resource) ?? [];
    // Keys in `namespace/` sort from `namespace/` up to `namespace0`, the next character after the slash.
    return entries.slice(firstAtLeast(entries, `${namespace}/`), firstAtLeast(entries, `${namespace}0`));
  };
  const labelIndex = new LabelIndex((resource, namespace) =>
    namespace === undefined ? objectsOf(resource) : objectsKeyedIn(resource, namespace),
  );
  return {
    resourceVersion,
    now,
    skippedKinds: skipped,
    objects: objectsOf,
    objectsKeyedIn,
    get: (resource, namespace, name) => {
      const info = RESOURCES[resource];
      const key = `${info.namespaced ? (namespace ?? '') : ''}/${name}`;
      const entries = sorted.get(resource) ?? [];
      const found = entries[firstAtLeast(entries, key)];
      return found !== undefined && objectKey(found) === key ? found : undefined;
    },
    count: () => total,
    metrics: {
      pods: metrics.pods.sort((a, b) => byCodePoint(keyOf(a), keyOf(b))),
      nodes: metrics.nodes.sort((a, b) => byCodePoint(keyOf(a), keyOf(b))),
    },
    labelKey: (resource, namespace, key) => labelIndex.key(resource, namespace, key),
  };
}
