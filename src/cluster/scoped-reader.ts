import {
  assertInScope,
  checkReadScope,
  type ReadScope,
  readableResource,
  scopeAllows,
  scopeNames,
} from './read-only-guard.js';
import type { ClusterReader, GetQuery, KubeObject, ListQuery, LogQuery } from './types.js';

/**
 * A reader bound to a scope: every read is judged against it (read-only-guard.ts) before the reader underneath is
 * asked, so a namespace outside the scope is never requested, whatever asked for it (a triage following a
 * dependency, a hypothesis test, a thread read, a specialist). Cluster-scoped kinds stay readable, except that
 * namespaces outside the scope are neither listed nor fetched: their names are another tenant's business too.
 *
 * A list across all namespaces becomes one list per allowed namespace when the scope names its namespaces; under a
 * pattern (`team-*`, `*`) it stays one list, and the objects of namespaces outside the scope are dropped here.
 */
export function scopeReader<R extends ClusterReader>(reader: R, scope: ReadScope): R {
  checkReadScope(scope);

  async function list(query: ListQuery, signal?: AbortSignal): Promise<KubeObject[]> {
    const info = readableResource(query.kind);
    if (!info.namespaced) {
      const items = await reader.list(query, signal);
      return info.plural === 'namespaces' ? items.filter((ns) => scopeAllows(scope, ns.metadata.name)) : items;
    }
    if (query.namespace !== undefined) {
      assertInScope(scope, query.namespace, `${info.plural} in namespace ${query.namespace}`);
      return reader.list(query, signal);
    }
    const names = scopeNames(scope);
    if (names === undefined) {
      const items = await reader.list(query, signal);
      return items.filter(
        (item) => item.metadata.namespace === undefined || scopeAllows(scope, item.metadata.namespace),
      );
    }
    const out: KubeObject[] = [];
    for (const namespace of names) {
      const remaining = query.maxItems === undefined ? undefined : query.maxItems - out.length;
      if (remaining !== undefined && remaining < 1) break;
      const items = await reader.list(
        { ...query, namespace, ...(remaining === undefined ? {} : { maxItems: remaining }) },
        signal,
      );
      out.push(...items);
    }
    return out;
  }

  async function get(query: GetQuery, signal?: AbortSignal): Promise<KubeObject> {
    const info = readableResource(query.kind);
    if (info.plural === 'namespaces') assertInScope(scope, String(query.name), `namespace ${String(query.name)}`);
    else if (info.namespaced && query.namespace !== undefined) {
      assertInScope(scope, query.namespace, `${info.kind} ${String(query.name)} in namespace ${query.namespace}`);
    }
    return reader.get(query, signal);
  }

  async function logs(query: LogQuery, signal?: AbortSignal): Promise<string> {
    assertInScope(
      scope,
      String(query.namespace),
      `the logs of pod ${String(query.pod)} in namespace ${query.namespace}`,
    );
    return reader.logs(query, signal);
  }

  return { ...reader, list, get, logs };
}
