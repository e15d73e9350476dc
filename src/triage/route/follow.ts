import type { Finding } from '../envelope/findings.js';
import type { TriageTemplate } from '../templates/template-schema.js';

/**
 * Following a dependency into another namespace. When a client cannot reach a Service that lives elsewhere
 * (`postgres.db.svc`), or an admission webhook or the metrics API calls a backend there, the fault a person must
 * change is usually there: a NetworkPolicy, a crashing database or controller, a claim that never bound. The engine then reads that namespace once, with the namespace-scoped reads of the sweep, and
 * analyzes it together with the first.
 */

export const MAX_FOLLOWED_NAMESPACES = 2;

/** The namespaces of the Services that current findings call into and that were not read. */
export function foreignNamespaces(
  findings: readonly Finding[],
  namespace: string,
  read: ReadonlySet<string>,
): string[] {
  const out = new Set<string>();
  for (const f of findings) {
    if (f.stale !== undefined || f.severity === 'info' || f.severity === 'low') continue;
    // A client's unreachable Service, a webhook's or the metrics API's backend: whatever a current fault calls.
    for (const r of f.related) {
      if (r.kind === 'Service' && r.namespace && r.namespace !== namespace && !read.has(r.namespace))
        out.add(r.namespace);
    }
  }
  return [...out].sort().slice(0, MAX_FOLLOWED_NAMESPACES);
}

/** The sweep, cut down to what lives in one namespace: its namespaced lists, and the logs of its failing pods. */
export function followTemplate(sweep: TriageTemplate): TriageTemplate {
  const namespaced = new Set(
    (sweep.rounds[0]?.reads ?? [])
      .filter((r) => r.scope === 'namespace' && !r.namespace && r.kind !== 'logs')
      .map((r) => r.id),
  );
  const rounds = sweep.rounds
    .slice(0, 2)
    .map((round, i) => ({
      name: `${round.name} (followed namespace)`,
      reads: round.reads.filter((r) =>
        i === 0 ? namespaced.has(r.id) : r.kind === 'logs' && namespaced.has(r.forEach?.read ?? ''),
      ),
    }))
    .filter((round) => round.reads.length > 0);
  return { ...sweep, id: `${sweep.id}-follow`, rounds };
}
