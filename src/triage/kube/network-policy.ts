import type { KubeObject } from '../../cluster/types.js';
import { byCodePoint } from '../../code-point-order.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import { type LabelSelector, matchesSelector } from './selectors.js';

/** NetworkPolicy semantics shared by the analyzers that judge traffic (dependencies, DNS). */

/** The directions a policy isolates: as declared, else Ingress, plus Egress when it has egress rules. */
export function policyTypes(p: KubeObject): string[] {
  const declared = p.spec?.policyTypes as string[] | undefined;
  if (declared && declared.length > 0) return declared;
  return p.spec?.egress ? ['Ingress', 'Egress'] : ['Ingress'];
}

/** A namespace's labels as a namespaceSelector sees them, including the automatic metadata.name label. */
export function namespaceLabels(ctx: AnalyzerContext, name: string): Record<string, string> {
  const ns = ctx.objects('namespaces').find((n) => n.metadata.name === name);
  return { 'kubernetes.io/metadata.name': name, ...(ns?.metadata.labels ?? {}) };
}

type Peer = { ipBlock?: unknown; podSelector?: unknown; namespaceSelector?: unknown };
type IngressRule = { from?: Peer[]; ports?: Array<{ port?: number | string }> };

/**
 * The ingress policies that drop the control plane's calls to these pods: the API server calling a webhook or an
 * aggregated API is no pod, so only a rule with no `from` (every source) or an `ipBlock` admits it; pod and
 * namespace selectors never match it. Returns the policies that isolate the pods when none of them admits such a
 * call on one of `ports` (any port when the ports are unknown); empty when the pods are not isolated or one admits.
 */
export function policiesDroppingControlPlane(
  ctx: AnalyzerContext,
  pods: readonly KubeObject[],
  ports: ReadonlySet<number | string> = new Set(),
): KubeObject[] {
  const pod = pods[0];
  if (pod === undefined) return [];
  const namespace = pod.metadata.namespace;
  const isolating = ctx
    .objects('networkpolicies')
    .filter(
      (p) =>
        p.metadata.namespace === namespace &&
        policyTypes(p).includes('Ingress') &&
        pods.some((x) => matchesSelector(p.spec?.podSelector as LabelSelector | undefined, x.metadata.labels)),
    );
  if (isolating.length === 0) return [];
  const onPort = (r: IngressRule) =>
    !r.ports ||
    r.ports.length === 0 ||
    ports.size === 0 ||
    r.ports.some((p) => p.port === undefined || ports.has(p.port));
  const admits = (r: IngressRule) =>
    onPort(r) && (!r.from || r.from.length === 0 || r.from.some((peer) => peer.ipBlock !== undefined));
  if (isolating.some((p) => ((p.spec?.ingress ?? []) as IngressRule[]).some(admits))) return [];
  // The newest policy first: it is usually the change that started the incident.
  return [...isolating].sort((a, b) =>
    byCodePoint(String(b.metadata.creationTimestamp ?? ''), String(a.metadata.creationTimestamp ?? '')),
  );
}

/** The ports a Service's pods receive on: each targetPort, and for a named one the container port of that name. */
export function targetPortsOf(svc: KubeObject, pods: readonly KubeObject[]): Set<number | string> {
  const out = new Set<number | string>();
  for (const p of (svc.spec?.ports ?? []) as Array<{ port?: number; targetPort?: number | string }>) {
    const target = p.targetPort ?? p.port;
    if (target === undefined) continue;
    out.add(target);
    if (typeof target === 'string') {
      for (const pod of pods)
        for (const c of (pod.spec?.containers ?? []) as Array<{
          ports?: Array<{ name?: string; containerPort?: number }>;
        }>)
          for (const cp of c.ports ?? []) if (cp.name === target && cp.containerPort) out.add(cp.containerPort);
    }
  }
  return out;
}

/** Pods a Service selects, in its namespace. */
export function podsOfService(ctx: AnalyzerContext, svc: KubeObject): KubeObject[] {
  const selector = svc.spec?.selector as Record<string, string> | undefined;
  if (!selector || Object.keys(selector).length === 0) return [];
  return ctx
    .objects('pods')
    .filter(
      (p) =>
        p.metadata.namespace === svc.metadata.namespace &&
        matchesSelector({ matchLabels: selector }, p.metadata.labels),
    );
}
