import { recordedObjectText } from '../../src/cluster/object-text.js';
import { RESOURCES, type ResourceInfo, resourceForKind } from '../../src/cluster/resources.js';
import { snapshotNow } from '../../src/cluster/snapshot.js';
import type { KubeObject, ResourceKind } from '../../src/cluster/types.js';

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

export function buildCatalog(objects: readonly KubeObject[], options: { now?: Date } = {}): SnapshotCatalog {
  const byResource = new Map<ResourceKind, Map<string, KubeObject>>();
  const skipped = new Map<string, number>();
  const texts = new WeakMap<KubeObject, string>();
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
    let normalized = object;
    if (object.apiVersion == null || strayNamespace) {
      const metadata = { ...object.metadata };
      if (strayNamespace) delete metadata.namespace;
      normalized = { ...object, apiVersion: object.apiVersion ?? groupVersion(info), metadata };
    } else {
      // Nothing to normalize: the object serializes as it was read, so a text recorded for it is its text here.
      const known = recordedObjectText(object);
      if (known !== undefined) texts.set(object, known);
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
  for (const [resource, bucket] of byResource) {
    sorted.set(
      resource,
      [...bucket.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, object]) => object),
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
    get: (resource, namespace, name) => {
      const info = RESOURCES[resource];
      return byResource.get(resource)?.get(`${info.namespaced ? (namespace ?? '') : ''}/${name}`);
    },
    count: () => total,
    text: (object) => {
      let text = texts.get(object);
      if (text === undefined) {
        text = JSON.stringify(object);
        texts.set(object, text);
      }
      return text;
    },
  };
}
