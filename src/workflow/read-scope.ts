import { scopeAllows } from '../cluster/read-only-guard.js';
import type { ReadSpec } from '../cluster/read-spec.js';
import { READABLE_KINDS } from '../cluster/types.js';
import { canonicalKind, isClusterScoped } from '../diagnosis/kinds.js';
import { escapeText } from '../mrkdwn/escape.js';
import type { Policy } from '../policy/channel-policy.js';
import { code } from '../views/limits.js';

/**
 * Which reads a session's thread may ask for. A session is about one namespace: reads requested in its thread stay
 * there, plus the cluster-scoped kinds triage itself looks at (nodes, storage classes, …), plus whatever namespaces
 * the channel policy adds (`allowedNamespaces`). A channel that handles payments incidents must not become a way to
 * read kube-system's ConfigMaps or another team's pod logs.
 */

export interface ReadScope {
  /** The session's own namespace. */
  namespace: string;
  /** Namespaces the channel policy adds. */
  extraNamespaces: readonly string[];
}

export type ScopeDecision =
  | { allowed: true }
  | { allowed: false; code: 'namespace-not-allowed' | 'all-namespaces'; namespace?: string; reason: string };

/** The readable kinds that have no namespace; they are readable from every session. */
export const CLUSTER_SCOPED_READABLE: readonly string[] = READABLE_KINDS.filter((kind) => isClusterScoped(kind));

export function readScopeFor(
  session: { namespace: string; channelId: string },
  policy: Pick<Policy, 'forChannel'> | undefined,
): ReadScope {
  const extra = policy?.forChannel(session.channelId)?.allowedNamespaces ?? [];
  return { namespace: session.namespace, extraNamespaces: extra.filter((ns) => ns !== session.namespace) };
}

function namespacesIn(scope: ReadScope): string[] {
  return [scope.namespace, ...scope.extraNamespaces];
}

function describeScope(scope: ReadScope): string {
  const namespaces = namespacesIn(scope).map((ns) => code(escapeText(ns)));
  const which = namespaces.length === 1 ? `namespace ${namespaces[0]}` : `namespaces ${namespaces.join(', ')}`;
  return `${which}, and the cluster-scoped kinds (${CLUSTER_SCOPED_READABLE.join(', ')})`;
}

/**
 * Judges one read against the scope. `allNamespaces` is the request's `-A`: for a namespaced kind it asks for every
 * namespace at once, which no session's scope covers.
 */
export function checkReadScope(
  spec: Pick<ReadSpec, 'verb' | 'kind' | 'namespace'>,
  scope: ReadScope,
  options: { allNamespaces?: boolean } = {},
): ScopeDecision {
  const kind = spec.verb === 'logs' ? 'pods' : spec.verb === 'events' ? 'events' : canonicalKind(spec.kind);
  if (isClusterScoped(kind)) return { allowed: true };
  if (options.allNamespaces === true || spec.namespace === undefined) {
    return {
      allowed: false,
      code: 'all-namespaces',
      reason: `reading ${kind} across all namespaces is outside this session; it reads ${describeScope(scope)}`,
    };
  }
  if (spec.namespace === scope.namespace || scopeAllows({ namespaces: scope.extraNamespaces }, spec.namespace)) {
    return { allowed: true };
  }
  return {
    allowed: false,
    code: 'namespace-not-allowed',
    namespace: spec.namespace,
    reason: `namespace ${code(escapeText(spec.namespace.slice(0, 253)))} is outside this session; it reads ${describeScope(scope)}`,
  };
}

/** The thread reply for a refused read: what was not run, why, what is allowed, and how to allow more. */
export function scopeRefusalText(title: string, decision: Extract<ScopeDecision, { allowed: false }>): string {
  return (
    `:no_entry: I did not run ${code(escapeText(title.slice(0, 200)))}: ${decision.reason}. ` +
    'To read more namespaces from this channel, ask your platform team to list them under `allowedNamespaces` in the channel policy.'
  );
}
