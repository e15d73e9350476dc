import {
  assertInScope,
  checkReadScope,
  type ReadScope,
  readableResource,
  scopeAllows,
  scopeNames,
} from './read-only-guard.js';
import type { ClusterReader, GetQuery, KubeObject, ListQuery, LogQuery, MetricsQuery, ServerTable } from './types.js';

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

  const list = scopedList(reader, scope);

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

  const { table: readTable, metrics: readMetrics } = reader;

  const table = scopedTable(reader, scope, readTable);

  const metrics = scopedMetrics(reader, scope, readMetrics);

  // A reader without tables or metrics keeps going without them: callers print on the client, as kubectl does.
  return {
    ...reader,
    list,
    get,
    logs,
    ...(readTable === undefined ? {} : { table }),
    ...(readMetrics === undefined ? {} : { metrics }),
  };
}

/** Lists judged against the scope: one list per allowed namespace when it names them, filtered under a pattern. */
function scopedList(reader: ClusterReader, scope: ReadScope) {
  return async function list(query: ListQuery, signal?: AbortSignal): Promise<KubeObject[]> {
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
  };
}

/** Server-printed tables judged against the scope the way lists are. */
function scopedTable(reader: ClusterReader, scope: ReadScope, readTable: ClusterReader['table']) {
  return async function table(query: ListQuery & { name?: string }, signal?: AbortSignal): Promise<ServerTable> {
    if (readTable === undefined) throw new TypeError('this reader prints no tables');
    const info = readableResource(query.kind);
    if (!info.namespaced) {
      if (info.plural === 'namespaces' && query.name !== undefined) {
        assertInScope(scope, query.name, `namespace ${query.name}`);
      }
      const printed = await readTable.call(reader, query, signal);
      return info.plural === 'namespaces' ? keepRows(printed, (row) => scopeAllows(scope, rowName(row))) : printed;
    }
    if (query.namespace !== undefined) {
      assertInScope(scope, query.namespace, `${info.plural} in namespace ${query.namespace}`);
      return readTable.call(reader, query, signal);
    }
    const names = scopeNames(scope);
    if (names === undefined) {
      const printed = await readTable.call(reader, query, signal);
      return keepRows(printed, (row) => {
        const namespace = row.object?.metadata.namespace;
        return namespace === undefined || scopeAllows(scope, namespace);
      });
    }
    let joined: ServerTable | undefined;
    for (const namespace of names) {
      const printed = await readTable.call(reader, { ...query, namespace }, signal);
      joined = joined === undefined ? printed : { ...joined, rows: [...joined.rows, ...printed.rows] };
    }
    return joined ?? { columnDefinitions: [], rows: [] };
  };
}

/** Pod metrics judged against the scope the way lists are; node metrics are cluster-wide. */
function scopedMetrics(reader: ClusterReader, scope: ReadScope, readMetrics: ClusterReader['metrics']) {
  return async function metrics(query: MetricsQuery, signal?: AbortSignal): Promise<KubeObject[]> {
    if (readMetrics === undefined) throw new TypeError('this reader reads no metrics');
    if (query.kind === 'nodes') return readMetrics.call(reader, query, signal);
    if (query.namespace !== undefined) {
      assertInScope(scope, query.namespace, `the pod metrics in namespace ${query.namespace}`);
      return readMetrics.call(reader, query, signal);
    }
    const names = scopeNames(scope);
    if (names === undefined) {
      const items = await readMetrics.call(reader, query, signal);
      return items.filter(
        (item) => item.metadata.namespace === undefined || scopeAllows(scope, item.metadata.namespace),
      );
    }
    const out: KubeObject[] = [];
    for (const namespace of names) out.push(...(await readMetrics.call(reader, { ...query, namespace }, signal)));
    return out;
  };
}

function rowName(row: ServerTable['rows'][number]): string {
  return String(row.object?.metadata.name ?? row.cells[0] ?? '');
}

function keepRows(printed: ServerTable, keep: (row: ServerTable['rows'][number]) => boolean): ServerTable {
  return { ...printed, rows: printed.rows.filter(keep) };
}
