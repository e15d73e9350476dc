import { resourceForKind } from '../../cluster/resources.js';
import { logKey } from '../../cluster/snapshot.js';
import type { KubeObject, ResourceKind } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyzer.js';

export interface ContextInput {
  namespace: string;
  now: Date;
  /** Objects of any readable kind; kinds calmops never reads are ignored. */
  objects: readonly KubeObject[];
  /** Log text keyed by `namespace/pod/container[:previous]` (the snapshot logs format, see `logKey`). */
  logs?: Readonly<Record<string, string>> | ReadonlyMap<string, string>;
  /** Kinds whose reads failed. */
  unavailable?: Iterable<ResourceKind>;
}

function objectOrder(a: KubeObject, b: KubeObject): number {
  const an = `${a.metadata.namespace ?? ''}/${a.metadata.name}`;
  const bn = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
  return an < bn ? -1 : an > bn ? 1 : 0;
}

/**
 * Build the pure analysis context from plain objects and logs. Objects are indexed by kind and put in a stable
 * order, so findings do not depend on the order the API (or a snapshot) returned them in.
 */
export function contextFromObjects(input: ContextInput): AnalyzerContext {
  const byKind = new Map<ResourceKind, KubeObject[]>();
  const seen = new Set<string>();
  for (const object of input.objects) {
    const info = typeof object.kind === 'string' ? resourceForKind(object.kind) : undefined;
    if (info === undefined) continue;
    // Reads in several rounds may return the same object twice; keep the first.
    const id = `${info.plural}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const list = byKind.get(info.plural);
    if (list === undefined) byKind.set(info.plural, [object]);
    else list.push(object);
  }
  for (const list of byKind.values()) list.sort(objectOrder);
  const logs = input.logs;
  const lookup =
    logs === undefined
      ? () => undefined
      : logs instanceof Map
        ? (key: string) => logs.get(key)
        : (key: string) => (logs as Readonly<Record<string, string>>)[key];
  const unavailable = new Set(input.unavailable ?? []);
  const empty: readonly KubeObject[] = Object.freeze([]);
  return {
    namespace: input.namespace,
    now: input.now,
    unavailable,
    objects: (kind) => byKind.get(kind) ?? empty,
    log: (pod, container, previous = false, namespace = input.namespace) =>
      lookup(logKey(namespace, pod, container, previous)),
  };
}
