import { scopeReader } from '../cluster/scoped-reader.js';
import type { ClusterReader } from '../cluster/types.js';
import { CLUSTER_SCOPED_READABLE, checkReadScope, type ReadScope } from '../workflow/read-scope.js';

/**
 * The namespaces an assistant may read through the MCP server: a list (from `--namespaces` or the channel policy's
 * `allowedNamespaces`), or every namespace one at a time when the person who started the server said so
 * (`--namespaces '*'`). Cluster-scoped kinds (nodes, storage classes, …) are readable either way, as from a thread.
 * Reading a namespaced kind across all namespaces at once (`-A`) is outside every scope.
 */
export type NamespaceScope = { kind: 'all' } | { kind: 'list'; namespaces: readonly [string, ...string[]] };

export type ScopeVerdict = { allowed: true } | { allowed: false; reason: string };

export function describeScope(scope: NamespaceScope): string {
  const kinds = `the cluster-scoped kinds (${CLUSTER_SCOPED_READABLE.join(', ')})`;
  if (scope.kind === 'all') return `any one namespace at a time, and ${kinds}`;
  const [first, ...rest] = scope.namespaces;
  const names = rest.length === 0 ? `namespace ${first}` : `namespaces ${scope.namespaces.join(', ')}`;
  return `${names}, and ${kinds}`;
}

function threadScope(scope: Extract<NamespaceScope, { kind: 'list' }>): ReadScope {
  const [namespace, ...extraNamespaces] = scope.namespaces;
  return { namespace, extraNamespaces };
}

/**
 * Judges one read by the thread's own rule (`checkReadScope`), in words for a model: what was refused and what it
 * may read instead.
 */
export function judgeRead(
  read: { verb: 'get' | 'list' | 'logs' | 'events'; kind: string; namespace?: string | undefined },
  scope: NamespaceScope,
  options: { allNamespaces?: boolean } = {},
): ScopeVerdict {
  const spec = {
    verb: read.verb,
    kind: read.kind,
    ...(read.namespace === undefined ? {} : { namespace: read.namespace }),
  };
  if (scope.kind === 'all') {
    // Every namespace is readable, but still one at a time: the rule's `-A` refusal holds.
    const decision = checkReadScope(spec, { namespace: read.namespace ?? '', extraNamespaces: [] }, options);
    if (decision.allowed || decision.code !== 'all-namespaces') return { allowed: true };
    return {
      allowed: false,
      reason: `reading ${read.kind} across all namespaces is outside this server's scope; name one namespace (it reads ${describeScope(scope)})`,
    };
  }
  const decision = checkReadScope(spec, threadScope(scope), options);
  if (decision.allowed) return { allowed: true };
  if (decision.code === 'all-namespaces') {
    return {
      allowed: false,
      reason: `reading ${read.kind} across all namespaces is outside this server's scope; it reads ${describeScope(scope)}`,
    };
  }
  return {
    allowed: false,
    reason: `namespace "${decision.namespace ?? ''}" is outside this server's scope; it reads ${describeScope(scope)}`,
  };
}

/** Whether a namespace may be triaged or captured under the scope. */
export function namespaceAllowed(namespace: string, scope: NamespaceScope): ScopeVerdict {
  return judgeRead({ verb: 'list', kind: 'pods', namespace }, scope);
}

/**
 * The reader a triage, a read or a snapshot runs through under the server's scope: the cluster's own scope
 * (`cluster/scoped-reader.ts`), the boundary a channel's sessions have. Under a list, a read in another namespace is
 * refused before it leaves the process (a `refused-by-policy` gap in a triage) and a list across namespaces becomes
 * one list per allowed namespace. Under `*` the reader keeps the identity's reach, as the CLI does with a person's
 * own kubeconfig; the read tool still refuses `-A`.
 */
export function scopedReader(reader: ClusterReader, scope: NamespaceScope): ClusterReader {
  return scope.kind === 'all' ? reader : scopeReader(reader, { namespaces: scope.namespaces });
}
