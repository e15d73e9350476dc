import { isKubeLabel, isKubeName } from '../limits.js';
import { apiPrefix, RESOURCES, type ResourceInfo } from './resources.js';
import {
  type GetQuery,
  type ListQuery,
  type LogQuery,
  type MetricsQuery,
  READABLE_KINDS,
  ReadOnlyViolationError,
  type ResourceKind,
} from './types.js';

/**
 * Everything a read may become is decided here, before any network I/O: the kind must be on the allowlist (Secrets
 * never are), names and namespaces must be DNS-1123 so they cannot smuggle path segments, selectors are restricted
 * to the characters their grammars use, and only a fixed set of query parameters exists. The request function
 * accepts nothing but a `ReadTarget` built here, and re-checks its path as a last line of defence.
 */

declare const readPathBrand: unique symbol;
/** An API path that passed the guard. Only this module creates one. */
export type ReadPath = string & { readonly [readPathBrand]: true };

export interface ReadTarget {
  path: ReadPath;
  /** Query parameters; only names in ALLOWED_PARAMS. */
  params: URLSearchParams;
  /** Human description for messages, e.g. `pods in namespace shop`. */
  describe: string;
  /** What the response body is: raw JSON objects, a server-printed Table of them, or plain log text. */
  accept: 'json' | 'table' | 'text';
}

export interface ListTarget extends ReadTarget {
  resource: ResourceInfo;
  maxItems: number | undefined;
}

const ALLOWED_PARAMS = new Set([
  'labelSelector',
  'fieldSelector',
  'limit',
  'continue',
  'container',
  'previous',
  'tailLines',
  'limitBytes',
  'sinceSeconds',
  'includeObject',
]);
/** Where `kubectl top` reads: the Metrics API's group and version. */
const METRICS_PREFIX = '/apis/metrics.k8s.io/v1beta1';
const KIND_SET: ReadonlySet<string> = new Set(READABLE_KINDS);

// Label selector grammar: keys (with optional prefix/), values, = == != , ! in notin ( ) and spaces.
const LABEL_SELECTOR = /^[A-Za-z0-9._\-/=!,() ]*$/;
// Field selector grammar: dotted field paths, = == !=, commas, and values that may hold braces
// (involvedObject.fieldPath=spec.containers{app}), colons, and backslash escapes.
const FIELD_SELECTOR = /^[A-Za-z0-9._\-/=!,{}:\\]*$/;
const MAX_SELECTOR_LENGTH = 2048;
const MAX_TAIL_LINES = 100_000;

function refuse(message: string): never {
  throw new ReadOnlyViolationError(`refused before sending: ${message}`);
}

/** Resolve a kind against the allowlist. Anything else, Secrets included in every spelling, is refused. */
export function readableResource(kind: unknown): ResourceInfo {
  if (typeof kind !== 'string' || !KIND_SET.has(kind) || !Object.hasOwn(RESOURCES, kind)) {
    const shown = typeof kind === 'string' ? `'${kind.slice(0, 80)}'` : typeof kind;
    const secretHint = typeof kind === 'string' && /secret/i.test(kind) ? ' (Secrets are never read)' : '';
    refuse(
      `kind ${shown} is not a readable kind${secretHint}; readable kinds: ${(READABLE_KINDS as readonly string[]).join(', ')}`,
    );
  }
  return RESOURCES[kind as ResourceKind];
}

function checkNamespace(namespace: unknown): string {
  if (typeof namespace !== 'string' || !isKubeLabel(namespace)) {
    refuse(`namespace ${JSON.stringify(String(namespace).slice(0, 80))} is not a DNS-1123 label`);
  }
  return namespace;
}

function checkName(name: unknown, what: string): string {
  if (typeof name !== 'string' || !isKubeName(name)) {
    refuse(`${what} ${JSON.stringify(String(name).slice(0, 80))} is not a DNS-1123 subdomain`);
  }
  return name;
}

function checkSelector(value: unknown, which: 'labelSelector' | 'fieldSelector'): string | undefined {
  if (value === undefined || value === '') return undefined;
  const pattern = which === 'labelSelector' ? LABEL_SELECTOR : FIELD_SELECTOR;
  if (typeof value !== 'string' || value.length > MAX_SELECTOR_LENGTH || !pattern.test(value)) {
    refuse(`${which} ${JSON.stringify(String(value).slice(0, 80))} contains characters its grammar does not use`);
  }
  return value;
}

function collectionPath(info: ResourceInfo, namespace: string | undefined): string {
  const ns = info.namespaced && namespace !== undefined ? `/namespaces/${namespace}` : '';
  return `${apiPrefix(info)}${ns}/${info.plural}`;
}

function describeScope(info: ResourceInfo, namespace: string | undefined): string {
  if (!info.namespaced) return info.plural;
  return namespace === undefined ? `${info.plural} in all namespaces` : `${info.plural} in namespace ${namespace}`;
}

/** A namespace on a cluster-scoped kind is dropped (nodes "in" a namespace are all nodes), but still validated. */
function scopedNamespace(info: ResourceInfo, namespace: unknown): string | undefined {
  if (namespace === undefined) return undefined;
  const ns = checkNamespace(namespace);
  return info.namespaced ? ns : undefined;
}

export function listTarget(query: ListQuery): ListTarget {
  const resource = readableResource(query.kind);
  const namespace = scopedNamespace(resource, query.namespace);
  const params = new URLSearchParams();
  const labelSelector = checkSelector(query.labelSelector, 'labelSelector');
  const fieldSelector = checkSelector(query.fieldSelector, 'fieldSelector');
  if (labelSelector !== undefined) params.set('labelSelector', labelSelector);
  if (fieldSelector !== undefined) params.set('fieldSelector', fieldSelector);
  const maxItems = query.maxItems;
  if (maxItems !== undefined && (!Number.isSafeInteger(maxItems) || maxItems < 1)) {
    refuse(`maxItems ${String(maxItems)} is not a positive integer`);
  }
  const path = collectionPath(resource, namespace);
  assertReadPath(path);
  return {
    path: path as ReadPath,
    params,
    describe: describeScope(resource, namespace),
    accept: 'json',
    resource,
    maxItems,
  };
}

/**
 * A list, or one object, printed by the server (`as=Table`) with each row's object, as `kubectl get` asks: the same
 * checks as a list or a get, only the representation differs.
 */
export function tableTarget(query: ListQuery & { name?: string }): ListTarget {
  if (query.name === undefined) {
    const target = listTarget(query);
    target.params.set('includeObject', 'Object');
    return { ...target, accept: 'table' };
  }
  const target = getTarget({
    kind: query.kind,
    name: query.name,
    ...(query.namespace ? { namespace: query.namespace } : {}),
  });
  const params = new URLSearchParams({ includeObject: 'Object' });
  return { ...target, params, accept: 'table', maxItems: 1 };
}

/** PodMetrics or NodeMetrics from metrics.k8s.io: pods in one namespace (or all), nodes, or one of either. */
export function metricsTarget(query: MetricsQuery): ReadTarget & { kind: string } {
  if (query.kind !== 'pods' && query.kind !== 'nodes') refuse(`metrics of ${JSON.stringify(String(query.kind))}`);
  const namespace =
    query.kind === 'pods' && query.namespace !== undefined ? checkNamespace(query.namespace) : undefined;
  const name =
    query.name === undefined ? undefined : checkName(query.name, `${query.kind === 'pods' ? 'pod' : 'node'} name`);
  const params = new URLSearchParams();
  const labelSelector = checkSelector(query.labelSelector, 'labelSelector');
  if (labelSelector !== undefined && name === undefined) params.set('labelSelector', labelSelector);
  const path = `${METRICS_PREFIX}${namespace ? `/namespaces/${namespace}` : ''}/${query.kind}${name ? `/${name}` : ''}`;
  assertReadPath(path);
  const what = query.kind === 'pods' ? 'PodMetrics' : 'NodeMetrics';
  return {
    path: path as ReadPath,
    params,
    describe: `${what}${name ? ` ${name}` : ''}${namespace ? ` in namespace ${namespace}` : ''}`,
    accept: 'json',
    kind: what,
  };
}

export function getTarget(query: GetQuery): ReadTarget & { resource: ResourceInfo } {
  const resource = readableResource(query.kind);
  const namespace = scopedNamespace(resource, query.namespace);
  if (resource.namespaced && namespace === undefined) {
    refuse(`${resource.plural} are namespaced; a get needs a namespace`);
  }
  const name =
    resource.plural === 'namespaces' ? checkNamespace(query.name) : checkName(query.name, `${resource.kind} name`);
  const path = `${collectionPath(resource, namespace)}/${name}`;
  assertReadPath(path);
  const where = namespace === undefined ? '' : ` in namespace ${namespace}`;
  return {
    path: path as ReadPath,
    params: new URLSearchParams(),
    describe: `${resource.kind} ${name}${where}`,
    accept: 'json',
    resource,
  };
}

export function logTarget(query: LogQuery, limitBytes?: number): ReadTarget {
  const namespace = checkNamespace(query.namespace);
  const pod = checkName(query.pod, 'pod name');
  const params = new URLSearchParams();
  if (query.container !== undefined) {
    const container = query.container;
    if (typeof container !== 'string' || !isKubeLabel(container)) {
      refuse(`container ${JSON.stringify(String(container).slice(0, 80))} is not a DNS-1123 label`);
    }
    params.set('container', container);
  }
  if (query.previous !== undefined) {
    if (typeof query.previous !== 'boolean') refuse('previous must be a boolean');
    if (query.previous) params.set('previous', 'true');
  }
  if (query.tailLines !== undefined) {
    const tail = query.tailLines;
    if (!Number.isSafeInteger(tail) || tail < 1 || tail > MAX_TAIL_LINES) {
      refuse(`tailLines ${String(tail)} is not an integer between 1 and ${MAX_TAIL_LINES}`);
    }
    params.set('tailLines', String(tail));
  }
  if (query.sinceSeconds !== undefined) {
    const since = query.sinceSeconds;
    if (!Number.isSafeInteger(since) || since < 1) refuse(`sinceSeconds ${String(since)} is not a positive integer`);
    params.set('sinceSeconds', String(since));
  }
  if (limitBytes !== undefined) params.set('limitBytes', String(limitBytes));
  const path = `/api/v1/namespaces/${namespace}/pods/${pod}/log`;
  assertReadPath(path);
  const container = query.container === undefined ? '' : ` container ${query.container}`;
  return {
    path: path as ReadPath,
    params,
    describe: `${query.previous ? 'previous ' : ''}logs of pod ${pod}${container} in namespace ${namespace}`,
    accept: 'text',
  };
}

/**
 * Last check in the request function: the path must have exactly the shape of a read of an allowlisted kind
 * (`<prefix>[/namespaces/NS]/PLURAL[/NAME]`, or a pod's `/log`), and the query only allowed parameter names.
 */
export function assertReadPath(path: string, params?: URLSearchParams): asserts path is ReadPath {
  if (!isReadPath(path)) refuse(`path ${JSON.stringify(path.slice(0, 200))} is not a read of an allowed kind`);
  if (params) {
    for (const key of params.keys()) {
      if (!ALLOWED_PARAMS.has(key)) refuse(`query parameter '${key}' is not allowed`);
    }
  }
}

/** Each readable resource with its API prefix's segments: every request's path is checked against all of them. */
const RESOURCE_PREFIXES = Object.values(RESOURCES).map((info) => ({
  info,
  prefix: apiPrefix(info).slice(1).split('/'),
}));

function isReadPath(path: string): boolean {
  if (!path.startsWith('/')) return false;
  const segments = path.slice(1).split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..' || !/^[a-z0-9.-]+$/.test(s))) return false;
  if (isMetricsPath(segments)) return true;
  for (const { info, prefix } of RESOURCE_PREFIXES) {
    if (!prefix.every((p, i) => segments[i] === p)) continue;
    const rest = segments.slice(prefix.length);
    if (matchesResource(info, rest)) return true;
  }
  return false;
}

/** `apis/metrics.k8s.io/v1beta1/` then `nodes[/NAME]`, `pods[/NAME]` or `namespaces/NS/pods[/NAME]`. */
function isMetricsPath(segments: readonly string[]): boolean {
  const prefix = METRICS_PREFIX.slice(1).split('/');
  if (!prefix.every((p, i) => segments[i] === p)) return false;
  const [a, b, c, d] = segments.slice(prefix.length);
  const rest = segments.length - prefix.length;
  const isName = (s: string | undefined) => s !== undefined && isKubeName(s);
  if (a === 'nodes' || a === 'pods') return rest === 1 || (rest === 2 && isName(b));
  if (a !== 'namespaces' || b === undefined || !isKubeLabel(b) || c !== 'pods') return false;
  return rest === 3 || (rest === 4 && isName(d));
}

function matchesResource(info: ResourceInfo, rest: string[]): boolean {
  const [a, b, c, d, e] = rest;
  const isLabel = (s: string | undefined) => s !== undefined && isKubeLabel(s);
  const isName = (s: string | undefined) => s !== undefined && isKubeName(s);
  // Cluster-wide collection or cluster-scoped object: PLURAL[/NAME]
  if (a === info.plural) {
    if (rest.length === 1) return true;
    return rest.length === 2 && (info.plural === 'namespaces' ? isLabel(b) : !info.namespaced && isName(b));
  }
  // Namespaced: namespaces/NS/PLURAL[/NAME[/log]]
  if (!info.namespaced || a !== 'namespaces' || !isLabel(b) || c !== info.plural) return false;
  if (rest.length === 3) return true;
  if (rest.length === 4) return isName(d);
  return rest.length === 5 && info.plural === 'pods' && isName(d) && e === 'log';
}

/**
 * The namespaces a reader may read: a channel's `allowedNamespaces`, the `--namespace` list a CLI or an MCP client
 * is started with. Entries are namespace names, `prefix*` patterns (`team-a-*`, `openshift-*`), or `*` alone for
 * every namespace that is not the platform's. A read outside it is refused here, before any request is built, with
 * reason `refused-by-policy`; a list across all namespaces becomes one list per allowed namespace (or, for a
 * pattern scope, one list whose objects outside the scope are dropped before anyone sees them).
 */
export interface ReadScope {
  readonly namespaces: readonly string[];
}

/**
 * The cluster's own namespaces and the common controllers': read only where a scope names them (by name or by a
 * pattern other than `*`), never because a scope says "every namespace".
 */
const PLATFORM_NAMESPACES: readonly string[] = [
  'kube-*',
  'openshift',
  'openshift-*',
  'cert-manager',
  'ingress-nginx',
  'istio-system',
  'linkerd',
  'calico-system',
  'tigera-operator',
  'gatekeeper-system',
  'kyverno',
  'metallb-system',
  'local-path-storage',
  'longhorn-system',
  'rook-ceph',
  'cattle-system',
  'flux-system',
  'argocd',
];

/** A scope entry: a namespace name, a name prefix followed by `*`, or `*`. */
export const SCOPE_ENTRY = /^(?:\*|[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?|[a-z0-9][-a-z0-9]{0,61}\*)$/;

function matchesEntry(entry: string, namespace: string): boolean {
  return entry.endsWith('*') ? namespace.startsWith(entry.slice(0, -1)) : entry === namespace;
}

export function isPlatformNamespace(namespace: string): boolean {
  return PLATFORM_NAMESPACES.some((entry) => matchesEntry(entry, namespace));
}

/** Whether a scope lets a namespace be read: named, matched by a pattern, or under `*` and not the platform's. */
export function scopeAllows(scope: ReadScope, namespace: string): boolean {
  return scope.namespaces.some((entry) =>
    entry === '*' ? !isPlatformNamespace(namespace) : matchesEntry(entry, namespace),
  );
}

/** The namespaces of a scope that lists names only, or undefined when a pattern makes it open-ended. */
export function scopeNames(scope: ReadScope): string[] | undefined {
  return scope.namespaces.some((entry) => entry.endsWith('*')) ? undefined : [...new Set(scope.namespaces)];
}

export function describeReadScope(scope: ReadScope): string {
  if (scope.namespaces.length === 0) return 'no namespace';
  return scope.namespaces
    .map((entry) => (entry === '*' ? 'every namespace but the platform’s' : entry))
    .slice(0, 20)
    .join(', ');
}

/** A scope must be well formed: an entry that is neither a name nor a pattern is refused, never ignored. */
export function checkReadScope(scope: ReadScope): ReadScope {
  if (!Array.isArray(scope.namespaces) || scope.namespaces.length > 200) refuse('the read scope is not a list');
  for (const entry of scope.namespaces) {
    if (typeof entry !== 'string' || !SCOPE_ENTRY.test(entry)) {
      refuse(`read scope entry ${JSON.stringify(String(entry).slice(0, 80))} is neither a namespace nor a pattern`);
    }
  }
  return scope;
}

/**
 * Refuses a read of a namespace outside the scope: nothing is sent, and the message says what calmops would have
 * read and where, so a person can follow it with their own access.
 */
export function assertInScope(scope: ReadScope, namespace: string, describe: string): void {
  if (typeof namespace === 'string' && scopeAllows(scope, namespace)) return;
  const shown = String(namespace).slice(0, 63);
  const platform = isPlatformNamespace(shown) ? ' (a platform namespace, read only where the scope names it)' : '';
  refuse(
    `calmops would have read ${describe.slice(0, 300)}, but namespace ${shown}${platform} is outside this channel's namespaces (${describeReadScope(scope)}); it was not read`,
  );
}
