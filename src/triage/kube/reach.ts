import type { KubeObject, ResourceKind } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import type { ResourceRef } from '../envelope/findings.js';
import { ownerOf } from './pod-owners.js';
import { podRef, ref } from './pods.js';
import { matchesSelector } from './selectors.js';

/**
 * Reaching what lives in another namespace: a webhook's backend, the metrics API's server, a controller. What is
 * said about it depends on whether its namespace was read at all: "absent" only follows a read that would have seen
 * it.
 */

const PROBE_KINDS: readonly ResourceKind[] = ['pods', 'services', 'endpoints', 'deployments', 'events'];

/** Whether anything of the namespace was read; an unread namespace proves nothing about what it holds. */
export function namespaceWasRead(ctx: AnalyzerContext, namespace: string): boolean {
  if (namespace === ctx.namespace) return true;
  return PROBE_KINDS.some((kind) => ctx.objects(kind).some((o) => o.metadata.namespace === namespace));
}

/**
 * Whether a namespace exists, from a whole read of the cluster's namespaces: `absent` only when the list was read and
 * does not hold it; `unknown` when the list could not be read.
 */
export function namespaceExists(ctx: AnalyzerContext, namespace: string): 'yes' | 'absent' | 'unknown' {
  if (ctx.unavailable.has('namespaces')) return 'unknown';
  const listed = ctx.objects('namespaces');
  if (listed.length === 0) return 'unknown';
  return listed.some((n) => n.metadata.name === namespace) ? 'yes' : 'absent';
}

/** The workloads whose pods a Service selects (or whose pod template it selects, when they have no pods). */
export function backingWorkloads(ctx: AnalyzerContext, svc: KubeObject): ResourceRef[] {
  const selector = svc.spec?.selector as Record<string, string> | undefined;
  if (!selector || Object.keys(selector).length === 0) return [];
  const namespace = svc.metadata.namespace ?? ctx.namespace;
  const out = new Map<string, ResourceRef>();
  for (const p of ctx.objects('pods')) {
    if (p.metadata.namespace !== namespace || !matchesSelector({ matchLabels: selector }, p.metadata.labels)) continue;
    const owner = ownerOf(ctx, p) ?? podRef(p);
    out.set(`${owner.kind}/${owner.name}`, owner);
  }
  if (out.size === 0) {
    for (const kind of ['deployments', 'statefulsets', 'daemonsets'] as const) {
      for (const w of ctx.objects(kind)) {
        if (w.metadata.namespace !== namespace) continue;
        if (!matchesSelector({ matchLabels: selector }, w.spec?.template?.metadata?.labels)) continue;
        const r = ref(String(w.kind), w.metadata.name, namespace);
        out.set(`${r.kind}/${r.name}`, r);
      }
    }
  }
  return [...out.values()];
}

/** A Service by namespace and name. */
export function serviceNamed(ctx: AnalyzerContext, namespace: string, name: string): KubeObject | undefined {
  return ctx.objects('services').find((s) => s.metadata.name === name && s.metadata.namespace === namespace);
}
