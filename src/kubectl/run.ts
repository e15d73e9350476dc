import { isConditionTrue } from '../cluster/conditions.js';
import { eventTime } from '../cluster/event-time.js';
import { RESOURCES } from '../cluster/resources.js';
import {
  ClusterReadError,
  type ClusterReader,
  type KubeObject,
  ReadOnlyViolationError,
  type ResourceKind,
  type ServerTable,
} from '../cluster/types.js';
import { toTable } from '../snapshot-api/tables.js';
import { describeObject } from './describe.js';
import { type Json, list, since, str } from './describe-writer.js';
import { goSort } from './go-sort.js';
import type { EventsRead, GetLike, LogsRead, TopRead, TypedRead } from './parse.js';
import {
  asList,
  kindPrefix,
  PrintError,
  printCustomColumns,
  printJson,
  printJsonPath,
  printNames,
  printTables,
  printYaml,
  sortByField,
  tableRows,
} from './printers.js';
import { alignRows } from './tabwriter.js';
import { printTopNodes, printTopPods } from './top.js';

/**
 * Runs a parsed read through the read-only reader and prints what kubectl would print: its standard output and its
 * standard error (kubectl's own messages: "No resources found", "Error from server (NotFound): …", "Found 2 pods,
 * using pod/x"). Nothing here decides whether a read is allowed; the caller did.
 */

export interface KubectlOutput {
  stdout: string;
  stderr: string;
  /** kubectl would exit non-zero. */
  failed: boolean;
}

export interface RunContext {
  reader: ClusterReader;
  /** The namespace a read without `-n` uses (the session's, or the kubeconfig context's). */
  namespace: string;
  now: Date;
  signal?: AbortSignal;
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Expired',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** The API server's own message in a read error, with its status. */
function serverMessage(error: ClusterReadError): { status?: number; message: string } {
  const match = /\(HTTP (\d+)\)(?::\s*([\s\S]*))?$/.exec(error.message);
  if (!match) return { message: error.message };
  return { status: Number(match[1]), message: (match[2] ?? '').trim() };
}

function errorLine(error: ClusterReadError): string {
  const { status, message } = serverMessage(error);
  if (status === undefined) return `error: ${message}`;
  return `Error from server (${REASONS[status] ?? 'Unknown'}): ${message}`;
}

function gvr(kind: ResourceKind): string {
  const info = RESOURCES[kind];
  return `${info.group}/${info.version}, Resource=${info.plural}`;
}

function noResources(namespace: string | undefined, allNamespaces: boolean, kind: ResourceKind): string {
  return allNamespaces || !RESOURCES[kind].namespaced
    ? 'No resources found\n'
    : `No resources found in ${namespace} namespace.\n`;
}

class Output {
  stdout = '';
  stderr = '';
  failed = false;
  fail(line: string) {
    this.stderr += line.endsWith('\n') ? line : `${line}\n`;
    this.failed = true;
  }
  result(): KubectlOutput {
    return { stdout: this.stdout, stderr: this.stderr, failed: this.failed };
  }
}

function namespaceOf(read: TypedRead, ctx: RunContext, kind: ResourceKind): string | undefined {
  if (!RESOURCES[kind].namespaced) return undefined;
  if (read.allNamespaces) return undefined;
  return read.namespace ?? ctx.namespace;
}

function listError(error: ClusterReadError, read: TypedRead, kind: ResourceKind, labels?: string): string {
  const { status, message } = serverMessage(error);
  if (status === 400) {
    return `Error from server (BadRequest): Unable to find "${gvr(kind)}" that match label selector "${labels ?? read.labelSelector ?? ''}", field selector "${read.fieldSelector ?? ''}": ${message}`;
  }
  return errorLine(error);
}

async function readTable(
  ctx: RunContext,
  read: TypedRead,
  kind: ResourceKind,
  name: string | undefined,
): Promise<ServerTable> {
  const namespace = namespaceOf(read, ctx, kind);
  const query = {
    kind,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(name === undefined && read.labelSelector ? { labelSelector: read.labelSelector } : {}),
    ...(name === undefined && read.fieldSelector ? { fieldSelector: read.fieldSelector } : {}),
  };
  if (ctx.reader.table) return ctx.reader.table(query, ctx.signal);
  // A server that cannot print: kubectl prints the same columns itself.
  const objects =
    name === undefined
      ? await ctx.reader.list(query, ctx.signal)
      : [await ctx.reader.get({ kind, name, ...(namespace ? { namespace } : {}) }, ctx.signal)];
  const table = toTable(kind, objects, { now: ctx.now, resourceVersion: '', includeObject: 'Object' });
  return { columnDefinitions: table.columnDefinitions, rows: table.rows as ServerTable['rows'] };
}

async function readObjects(ctx: RunContext, read: TypedRead, kind: ResourceKind, name: string | undefined) {
  const namespace = namespaceOf(read, ctx, kind);
  if (name !== undefined)
    return [await ctx.reader.get({ kind, name, ...(namespace ? { namespace } : {}) }, ctx.signal)];
  return ctx.reader.list(
    {
      kind,
      ...(namespace !== undefined ? { namespace } : {}),
      ...(read.labelSelector ? { labelSelector: read.labelSelector } : {}),
      ...(read.fieldSelector ? { fieldSelector: read.fieldSelector } : {}),
    },
    ctx.signal,
  );
}

/** Reads each requested object or list, reporting what fails as kubectl does and going on with the rest. */
async function collect<T>(
  out: Output,
  read: TypedRead,
  kind: ResourceKind,
  names: readonly string[],
  fetch: (name: string | undefined) => Promise<T>,
): Promise<T[]> {
  const results: T[] = [];
  for (const name of names.length > 0 ? names : [undefined]) {
    try {
      results.push(await fetch(name));
    } catch (error) {
      if (!(error instanceof ClusterReadError)) throw error;
      out.fail(name === undefined ? listError(error, read, kind) : errorLine(error));
    }
  }
  return results;
}

async function runGet(read: TypedRead, target: GetLike, ctx: RunContext): Promise<KubectlOutput> {
  const out = new Output();
  const format = read.output.format;
  let printed = 0;
  if (format === 'table' || format === 'wide') {
    const blocks: string[][][] = [];
    for (const { kind, names } of target.resources) {
      const tables = await collect(out, read, kind, names, (name) => readTable(ctx, read, kind, name));
      const first = tables[0];
      if (!first) continue;
      let rows = tables.flatMap((t) => t.rows);
      if (read.sortBy) rows = sortByField(rows, read.sortBy, (row) => row.object);
      printed += rows.length;
      blocks.push(
        tableRows(
          kind,
          { columnDefinitions: first.columnDefinitions, rows },
          {
            wide: format === 'wide',
            withNamespace: read.allNamespaces && RESOURCES[kind].namespaced,
            withKind: target.withKind,
            showLabels: read.showLabels,
            labelColumns: read.labelColumns,
            noHeaders: read.noHeaders,
          },
        ),
      );
    }
    out.stdout = printTables(blocks, read.noHeaders);
  } else {
    const items: Array<{ kind: ResourceKind; object: KubeObject }> = [];
    for (const { kind, names } of target.resources) {
      const found = await collect(out, read, kind, names, (name) => readObjects(ctx, read, kind, name));
      for (const object of found.flat()) items.push({ kind, object });
    }
    const sorted = read.sortBy ? sortByField(items, read.sortBy, (i) => i.object) : items;
    printed = sorted.length;
    const single = target.resources.length === 1 && target.resources[0]?.names.length === 1 && sorted.length === 1;
    const objects = sorted.map((i) => i.object);
    const data = single ? objects[0] : asList(objects);
    if (sorted.length > 0 || !single) {
      if (format === 'name') out.stdout = printNames(sorted);
      else if (format === 'json') out.stdout = printJson(data);
      else if (format === 'yaml') out.stdout = printYaml(data);
      else if (format === 'jsonpath') out.stdout = printJsonPath(read.output.template ?? '', data);
      else if (format === 'custom-columns')
        out.stdout = printCustomColumns(read.output.template ?? '', objects, read.noHeaders);
    }
    // Only the table printers say that nothing was found; the others print what they have, which may be nothing.
    printed = Math.max(printed, 1);
  }
  const kind = target.resources[0]?.kind;
  const named = target.resources.some((r) => r.names.length > 0);
  if (printed === 0 && !named && !out.failed && kind !== undefined) {
    out.stderr += noResources(read.namespace ?? ctx.namespace, read.allNamespaces, kind);
  }
  return out.result();
}

async function runDescribe(read: TypedRead, target: GetLike, ctx: RunContext): Promise<KubectlOutput> {
  const out = new Output();
  const texts: string[] = [];
  for (const { kind, names } of target.resources) {
    const found = (await collect(out, read, kind, names, (name) => readObjects(ctx, read, kind, name))).flat();
    for (const object of found) {
      texts.push(
        await describeObject(
          { reader: ctx.reader, now: ctx.now, ...(ctx.signal ? { signal: ctx.signal } : {}) },
          kind,
          object,
        ),
      );
    }
    if (found.length === 0 && names.length === 0 && !out.failed) {
      // describe names the namespace it looked in, even for kinds that have none.
      out.stderr += read.allNamespaces
        ? 'No resources found\n'
        : `No resources found in ${read.namespace ?? ctx.namespace} namespace.\n`;
    }
  }
  // kubectl separates described objects with a blank line.
  out.stdout = texts.join('\n\n').replace(/\n*$/, texts.length > 0 ? '\n' : '');
  return out.result();
}

// Logs

/** kubectl's podutils.ByLogging: the pod whose logs `kubectl logs deployment/x` reads first. */
function byLogging(a: Json, b: Json): number {
  const assigned = (p: Json) => str(p.spec?.nodeName) !== '';
  if (assigned(a) !== assigned(b)) return assigned(a) ? -1 : 1;
  const phase: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
  const pa = phase[str(a.status?.phase)] ?? 0;
  const pb = phase[str(b.status?.phase)] ?? 0;
  if (pa !== pb) return pb - pa;
  const ready = (p: Json) => isConditionTrue(p, 'Ready');
  if (ready(a) !== ready(b)) return ready(a) ? -1 : 1;
  const restarts = (p: Json) => Math.max(0, ...list(p.status?.containerStatuses).map((c: Json) => c.restartCount ?? 0));
  if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
  return Date.parse(str(a.metadata.creationTimestamp)) - Date.parse(str(b.metadata.creationTimestamp));
}

function selectorOf(object: Json, kind: ResourceKind): string | undefined {
  if (kind === 'services') {
    const map = object.spec?.selector ?? {};
    const keys = Object.keys(map).sort();
    return keys.length === 0 ? undefined : keys.map((k) => `${k}=${map[k]}`).join(',');
  }
  const selector = object.spec?.selector;
  if (!selector) return undefined;
  const parts: string[] = Object.keys(selector.matchLabels ?? {})
    .sort()
    .map((k) => `${k}=${selector.matchLabels[k]}`);
  for (const e of list(selector.matchExpressions)) {
    if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${e.operator === 'In' ? 'in' : 'notin'} (${list(e.values).join(',')})`);
  }
  return parts.length > 0 ? parts.join(',') : undefined;
}

async function runLogs(read: TypedRead, target: LogsRead, ctx: RunContext): Promise<KubectlOutput> {
  const out = new Output();
  const namespace = read.namespace ?? ctx.namespace;
  let pods: KubeObject[];
  try {
    if (target.kind === 'pods' && target.name !== undefined) {
      pods = [await ctx.reader.get({ kind: 'pods', namespace, name: target.name }, ctx.signal)];
    } else {
      let selector = target.labelSelector;
      if (target.name !== undefined) {
        const owner = await ctx.reader.get({ kind: target.kind, namespace, name: target.name }, ctx.signal);
        selector = selectorOf(owner, target.kind);
        if (selector === undefined) {
          out.fail(`error: cannot get the logs from ${kindPrefix(target.kind)}/${target.name}: selector is empty`);
          return out.result();
        }
      }
      pods = await ctx.reader.list(
        { kind: 'pods', namespace, ...(selector ? { labelSelector: selector } : {}) },
        ctx.signal,
      );
      if (target.name !== undefined) {
        pods = [...pods].sort(byLogging);
        if (pods.length === 0) {
          out.fail(`error: timed out waiting for the condition`);
          return out.result();
        }
        if (pods.length > 1) out.stderr += `Found ${pods.length} pods, using pod/${pods[0]?.metadata.name}\n`;
        pods = pods.slice(0, 1);
      } else if (pods.length === 0) {
        out.stderr += `No resources found in ${namespace} namespace.\n`;
        return out.result();
      }
    }
  } catch (error) {
    if (!(error instanceof ClusterReadError)) throw error;
    out.fail(errorLine(error));
    return out.result();
  }
  for (const pod of pods) {
    const p: Json = pod;
    const containers = [
      ...list(p.spec?.initContainers).map((c: Json) => c.name),
      ...list(p.spec?.containers).map((c: Json) => c.name),
      ...list(p.spec?.ephemeralContainers).map((c: Json) => c.name),
    ];
    let chosen: string[];
    if (target.allContainers) chosen = containers;
    else if (target.container !== undefined) chosen = [target.container];
    else {
      const main = list(p.spec?.containers).map((c: Json) => c.name as string);
      const annotated = pod.metadata.annotations?.['kubectl.kubernetes.io/default-container'];
      const defaulted = annotated && main.includes(annotated) ? annotated : main[0];
      if (main.length > 1 && !annotated) {
        out.stderr += `Defaulted container "${defaulted}" out of: ${containers.join(', ')}\n`;
      }
      chosen = defaulted ? [defaulted] : [];
    }
    for (const container of chosen) {
      try {
        const text = await ctx.reader.logs(
          {
            namespace,
            pod: pod.metadata.name,
            container,
            ...(target.previous ? { previous: true } : {}),
            ...(target.tail !== undefined && target.tail > 0 ? { tailLines: target.tail } : {}),
            ...(target.sinceSeconds !== undefined ? { sinceSeconds: target.sinceSeconds } : {}),
          },
          ctx.signal,
        );
        const body = target.tail === 0 ? '' : text;
        if (!target.prefix || body === '') out.stdout += body;
        else {
          const lines = body.split('\n');
          const trailing = lines[lines.length - 1] === '';
          if (trailing) lines.pop();
          out.stdout += `${lines.map((l) => `[pod/${pod.metadata.name}/${container}] ${l}`).join('\n')}${trailing ? '\n' : ''}`;
        }
      } catch (error) {
        if (!(error instanceof ClusterReadError)) throw error;
        out.fail(errorLine(error));
      }
    }
  }
  return out.result();
}

// Events

function lastSeen(e: Json): number {
  return eventTime(e) ?? Number.NEGATIVE_INFINITY;
}

function interval(e: Json, now: Date): string {
  const first = e.eventTime ? since(e.eventTime, now) : since(e.firstTimestamp, now);
  if (e.series) return `${since(e.series.lastObservedTime, now)} (x${e.series.count ?? 0} over ${first})`;
  if (typeof e.count === 'number' && e.count > 1) return `${since(e.lastTimestamp, now)} (x${e.count} over ${first})`;
  return first;
}

async function runEvents(read: TypedRead, target: EventsRead, ctx: RunContext): Promise<KubectlOutput> {
  const out = new Output();
  const namespace = read.allNamespaces ? undefined : (read.namespace ?? ctx.namespace);
  let events: KubeObject[];
  try {
    const forSelector = target.for
      ? `involvedObject.kind=${RESOURCES[target.for.kind].kind},involvedObject.apiVersion=${RESOURCES[target.for.kind].group === '' ? '' : `${RESOURCES[target.for.kind].group}/`}${RESOURCES[target.for.kind].version},involvedObject.name=${target.for.name}`
      : undefined;
    events = await ctx.reader.list(
      { kind: 'events', ...(namespace ? { namespace } : {}), ...(forSelector ? { fieldSelector: forSelector } : {}) },
      ctx.signal,
    );
  } catch (error) {
    if (!(error instanceof ClusterReadError)) throw error;
    out.fail(errorLine(error));
    return out.result();
  }
  const filtered = events.filter((e) => target.types.length === 0 || target.types.includes(str((e as Json).type)));
  if (filtered.length === 0) {
    out.stderr += namespace ? `No events found in ${namespace} namespace.\n` : 'No events found.\n';
    return out.result();
  }
  const sorted = goSort([...filtered], (a, b) => lastSeen(a) < lastSeen(b));
  if (read.output.format === 'json' || read.output.format === 'yaml') {
    const data = { apiVersion: 'v1', items: sorted, kind: 'EventList', metadata: {} };
    out.stdout = read.output.format === 'json' ? printJson(data) : printYaml(data);
    return out.result();
  }
  const rows: string[][] = sorted.map((e: Json) => [
    ...(read.allNamespaces ? [str(e.metadata.namespace)] : []),
    interval(e, ctx.now),
    str(e.type),
    str(e.reason),
    `${str(e.involvedObject?.kind)}/${str(e.involvedObject?.name)}`,
    str(e.message).trim(),
  ]);
  const header = [...(read.allNamespaces ? ['NAMESPACE'] : []), 'LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'];
  out.stdout = alignRows(read.noHeaders ? rows : [header, ...rows]);
  return out.result();
}

// Top

async function runTop(read: TypedRead, target: TopRead, ctx: RunContext): Promise<KubectlOutput> {
  const out = new Output();
  if (!ctx.reader.metrics) {
    out.fail('error: Metrics API not available');
    return out.result();
  }
  const namespace = read.allNamespaces ? undefined : (read.namespace ?? ctx.namespace);
  try {
    if (target.kind === 'pods') {
      const metrics = await ctx.reader.metrics(
        {
          kind: 'pods',
          ...(namespace ? { namespace } : {}),
          ...(target.name ? { name: target.name } : {}),
          ...(read.labelSelector ? { labelSelector: read.labelSelector } : {}),
        },
        ctx.signal,
      );
      if (metrics.length === 0) {
        // kubectl looks at the pods before saying there is nothing: pods without metrics are metrics missing.
        const pods = await ctx.reader.list(
          {
            kind: 'pods',
            ...(namespace ? { namespace } : {}),
            ...(read.labelSelector ? { labelSelector: read.labelSelector } : {}),
          },
          ctx.signal,
        );
        const pod = pods[0];
        if (pod !== undefined) {
          const age = ctx.now.getTime() - Date.parse(str(pod.metadata.creationTimestamp));
          out.fail(
            age > 2 * 60_000
              ? `error: Metrics not available for pod ${pod.metadata.namespace}/${pod.metadata.name}, age: ${goDuration(age)}`
              : 'error: metrics not available yet',
          );
          return out.result();
        }
        out.stderr += namespace ? `No resources found in ${namespace} namespace.\n` : 'No resources found\n';
        return out.result();
      }
      out.stdout = printTopPods(metrics, {
        withNamespace: read.allNamespaces,
        containers: target.containers,
        noHeaders: read.noHeaders,
        ...(target.sortBy ? { sortBy: target.sortBy } : {}),
      });
    } else {
      const metrics = await ctx.reader.metrics(
        {
          kind: 'nodes',
          ...(target.name ? { name: target.name } : {}),
          ...(read.labelSelector ? { labelSelector: read.labelSelector } : {}),
        },
        ctx.signal,
      );
      if (metrics.length === 0) {
        out.fail('error: metrics not available yet');
        return out.result();
      }
      const nodes = target.name
        ? [await ctx.reader.get({ kind: 'nodes', name: target.name }, ctx.signal)]
        : await ctx.reader.list(
            { kind: 'nodes', ...(read.labelSelector ? { labelSelector: read.labelSelector } : {}) },
            ctx.signal,
          );
      out.stdout = printTopNodes(metrics, nodes, {
        noHeaders: read.noHeaders,
        ...(target.sortBy ? { sortBy: target.sortBy } : {}),
      });
    }
  } catch (error) {
    if (!(error instanceof ClusterReadError)) throw error;
    const { status } = serverMessage(error);
    // Without the Metrics API, its paths are not found: kubectl says so before asking.
    if (status === 404 && !target.name) out.fail('error: Metrics API not available');
    else out.fail(errorLine(error));
  }
  return out.result();
}

/** Go's time.Duration String() for a positive span: `9094h28m20.683s`. */
function goDuration(ms: number): string {
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = ((ms % 60_000) / 1000).toFixed(3).replace(/\.?0+$/, '');
  return `${hours > 0 ? `${hours}h` : ''}${hours > 0 || minutes > 0 ? `${minutes}m` : ''}${seconds}s`;
}

/**
 * A read the scope or the guard refuses is, for what kubectl prints, a read that failed: the rest of the answer is
 * printed (a node's description without its Lease, the other objects of a list) and the refusal says why, as kubectl
 * goes on past a Forbidden.
 */
function refusalsAsFailedReads(reader: ClusterReader): ClusterReader {
  const failed = (error: unknown): never => {
    if (error instanceof ReadOnlyViolationError) {
      throw new ClusterReadError(error.message, 'refused-by-policy', undefined, { cause: error });
    }
    throw error;
  };
  const wrapped: ClusterReader = {
    list: (query, signal) => reader.list(query, signal).catch(failed),
    get: (query, signal) => reader.get(query, signal).catch(failed),
    logs: (query, signal) => reader.logs(query, signal).catch(failed),
  };
  if (reader.table) {
    const table = reader.table.bind(reader);
    wrapped.table = (query, signal) => table(query, signal).catch(failed);
  }
  if (reader.metrics) {
    const metrics = reader.metrics.bind(reader);
    wrapped.metrics = (query, signal) => metrics(query, signal).catch(failed);
  }
  return wrapped;
}

/** Runs one parsed read and prints it as kubectl would. */
export async function runKubectl(read: TypedRead, given: RunContext): Promise<KubectlOutput> {
  const ctx = { ...given, reader: refusalsAsFailedReads(given.reader) };
  try {
    switch (read.target.verb) {
      case 'get':
        return await runGet(read, read.target, ctx);
      case 'describe':
        return await runDescribe(read, read.target, ctx);
      case 'logs':
        return await runLogs(read, read.target, ctx);
      case 'events':
        return await runEvents(read, read.target, ctx);
      case 'top':
        return await runTop(read, read.target, ctx);
    }
  } catch (error) {
    if (error instanceof PrintError) return { stdout: '', stderr: `${error.message}\n`, failed: true };
    throw error;
  }
}
