import { RESOURCES, type ResourceInfo, resourceForKind } from '../../src/cluster/resources.js';
import { snapshotNow } from '../../src/cluster/snapshot.js';
import type { KubeObject, ResourceKind } from '../../src/cluster/types.js';

/**
 * The snapshot indexed the way the API server stores it: per resource, ordered by `namespace/name` (etcd key
 * order), with one resourceVersion for the whole snapshot since nothing in it ever changes.
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
    const metadata = { ...object.metadata };
    if (!info.namespaced) delete metadata.namespace;
    const normalized: KubeObject = { ...object, apiVersion: object.apiVersion ?? groupVersion(info), metadata };
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
  };
}
