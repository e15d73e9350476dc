import { resourceForKind } from '../../cluster/resources.js';
import { logKey } from '../../cluster/snapshot.js';
import type { KubeObject, ResourceKind } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';

export interface ContextInput {
  namespace: string;
  now: Date;
  /** Objects of any readable kind; kinds calmops never reads are ignored. */
  objects: readonly KubeObject[];
  /** Log text keyed by `namespace/pod/container[:previous]` (the snapshot logs format, see `logKey`). */
  logs?: Readonly<Record<string, string>> | ReadonlyMap<string, string>;
  /** Kinds whose reads failed. */
  unavailable?: Iterable<ResourceKind>;
  /** PodMetrics and NodeMetrics read from metrics.k8s.io (other kinds among them are ignored). */
  metrics?: readonly KubeObject[];
}

/**
 * Namespace/name order. Objects of one namespace compare by name alone, which orders them as the joined key would
 * without building it; only objects of different namespaces need the key.
 */
function objectOrder(a: KubeObject, b: KubeObject): number {
  const ans = a.metadata.namespace ?? '';
  const bns = b.metadata.namespace ?? '';
  const x = a.metadata.name;
  const y = b.metadata.name;
  if (ans === bns && typeof x === 'string' && typeof y === 'string') return x < y ? -1 : x > y ? 1 : 0;
  const an = `${ans}/${x}`;
  const bn = `${bns}/${y}`;
  return an < bn ? -1 : an > bn ? 1 : 0;
}

/** Whether the list is already in objectOrder without repeats, as an API server lists a namespace. */
function strictlyOrdered(list: readonly KubeObject[]): boolean {
  for (let i = 1; i < list.length; i++)
    if (objectOrder(list[i - 1] as KubeObject, list[i] as KubeObject) >= 0) return false;
  return true;
}

/** The first of each run of objects with the same namespace and name (the list is in objectOrder, stable). */
function firstOfEach(list: KubeObject[]): KubeObject[] {
  let unique: KubeObject[] | undefined;
  for (let i = 1; i < list.length; i++) {
    const duplicate = objectOrder(list[i - 1] as KubeObject, list[i] as KubeObject) === 0;
    if (duplicate && unique === undefined) unique = list.slice(0, i);
    else if (!duplicate && unique !== undefined) unique.push(list[i] as KubeObject);
  }
  return unique ?? list;
}

/** Splits log keys (`namespace/pod/container[:previous]`) into the names they hold, to rule out pods quickly. */
function logSegments(keys: Iterable<string>): Set<string> {
  const segments = new Set<string>();
  for (const key of keys) for (const segment of key.split('/')) segments.add(segment);
  return segments;
}

/**
 * Build the pure analysis context from plain objects and logs. Objects are indexed by kind and put in a stable
 * order, so findings do not depend on the order the API (or a snapshot) returned them in.
 */
export function contextFromObjects(input: ContextInput): AnalyzerContext {
  const byKind = new Map<ResourceKind, KubeObject[]>();
  const objects = input.objects;
  // Objects come list by list: the kind of the one before usually says where the next one goes.
  let lastKind: string | undefined;
  let lastList: KubeObject[] | undefined;
  for (let i = 0; i < objects.length; i++) {
    const object = objects[i] as KubeObject;
    if (lastList !== undefined && object.kind === lastKind) {
      lastList.push(object);
      continue;
    }
    const info = typeof object.kind === 'string' ? resourceForKind(object.kind) : undefined;
    if (info === undefined) continue;
    let list = byKind.get(info.plural);
    if (list === undefined) {
      list = [];
      byKind.set(info.plural, list);
    }
    list.push(object);
    lastKind = object.kind;
    lastList = list;
  }
  // Reads in several rounds may return the same object twice; the stable sort puts the first read first, kept.
  for (const [kind, list] of byKind) if (!strictlyOrdered(list)) byKind.set(kind, firstOfEach(list.sort(objectOrder)));
  const logs = input.logs;
  const lookup =
    logs === undefined
      ? () => undefined
      : logs instanceof Map
        ? (key: string) => logs.get(key)
        : (key: string) => (logs as Readonly<Record<string, string>>)[key];
  // Analyzers ask for the logs of every container of every pod; logs are read for a handful of them. A pod named in
  // no log key has none (a name with a slash could span segments, so it is always looked up).
  const segments = logs === undefined ? undefined : logSegments(logs instanceof Map ? logs.keys() : Object.keys(logs));
  const unavailable = new Set(input.unavailable ?? []);
  const empty: readonly KubeObject[] = Object.freeze([]);
  const measured = new Map<string, KubeObject>();
  for (const m of input.metrics ?? []) {
    const kind = m.kind === 'PodMetrics' ? 'pods' : m.kind === 'NodeMetrics' ? 'nodes' : undefined;
    if (kind) measured.set(`${kind}/${kind === 'pods' ? (m.metadata.namespace ?? '') : ''}/${m.metadata.name}`, m);
  }
  return {
    namespace: input.namespace,
    now: input.now,
    unavailable,
    ...(measured.size > 0
      ? {
          usage: (kind: 'pods' | 'nodes', name: string, namespace = input.namespace) =>
            measured.get(`${kind}/${kind === 'pods' ? namespace : ''}/${name}`),
        }
      : {}),
    objects: (kind) => byKind.get(kind) ?? empty,
    log: (pod, container, previous = false, namespace = input.namespace) => {
      if (segments === undefined) return undefined;
      if (!segments.has(pod) && typeof pod === 'string' && !pod.includes('/')) return undefined;
      return lookup(logKey(namespace, pod, container, previous));
    },
  };
}
