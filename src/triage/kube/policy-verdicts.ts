import type { KubeObject } from '../../cluster/types.js';
import { byCodePoint } from '../../code-point-order.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import { namespaceLabels, policyTypes } from './network-policy.js';
import { type LabelSelector, matchesSelector } from './selectors.js';

/** Whether NetworkPolicies in the target's namespace let `client` reach `target` on `port`. */
export function ingressVerdict(
  ctx: AnalyzerContext,
  target: KubeObject,
  client: KubeObject,
  port: number | undefined,
): { allowed: boolean; policies: KubeObject[] } {
  const namespace = target.metadata.namespace ?? ctx.namespace;
  const policies = ctx
    .objects('networkpolicies')
    .filter((p) => (p.metadata.namespace ?? ctx.namespace) === namespace)
    .filter((p) => matchesSelector(p.spec?.podSelector as LabelSelector | undefined, target.metadata.labels))
    .filter((p) => policyTypes(p).includes('Ingress'));
  if (policies.length === 0) return { allowed: true, policies: [] };
  const allowed = policies.some((p) =>
    ((p.spec?.ingress ?? []) as Array<{ from?: unknown[]; ports?: unknown[] }>).some(
      (rule) => peersAdmit(ctx, rule.from, client, namespace) && portsAdmit(rule.ports, port),
    ),
  );
  return { allowed, policies };
}

/** Whether NetworkPolicies around `client` let it send to `target` (pod) or to DNS. */
export function egressVerdict(
  ctx: AnalyzerContext,
  client: KubeObject,
  target: KubeObject | undefined,
  port: number | undefined,
): { allowed: boolean; policies: KubeObject[] } {
  const namespace = client.metadata.namespace ?? ctx.namespace;
  const policies = ctx
    .objects('networkpolicies')
    .filter((p) => (p.metadata.namespace ?? ctx.namespace) === namespace)
    .filter((p) => matchesSelector(p.spec?.podSelector as LabelSelector | undefined, client.metadata.labels))
    .filter((p) => policyTypes(p).includes('Egress'));
  if (policies.length === 0) return { allowed: true, policies: [] };
  const allowed = policies.some((p) =>
    ((p.spec?.egress ?? []) as Array<{ to?: unknown[]; ports?: unknown[] }>).some(
      (rule) =>
        portsAdmit(rule.ports, port) &&
        (target ? peersAdmit(ctx, rule.to, target, target.metadata.namespace ?? namespace) : dnsPeer(ctx, rule.to)),
    ),
  );
  return { allowed, policies };
}

function peersAdmit(
  ctx: AnalyzerContext,
  peers: unknown[] | undefined,
  pod: KubeObject,
  policyNamespace: string,
): boolean {
  if (peers === undefined || peers.length === 0) return true;
  const podNamespace = pod.metadata.namespace ?? ctx.namespace;
  return (peers as Array<{ podSelector?: LabelSelector; namespaceSelector?: LabelSelector; ipBlock?: unknown }>).some(
    (peer) => {
      if (peer.ipBlock) return false;
      const nsOk = peer.namespaceSelector
        ? matchesSelector(peer.namespaceSelector, namespaceLabels(ctx, podNamespace))
        : podNamespace === policyNamespace;
      const podOk = peer.podSelector ? matchesSelector(peer.podSelector, pod.metadata.labels) : true;
      return nsOk && podOk;
    },
  );
}

function dnsPeer(ctx: AnalyzerContext, peers: unknown[] | undefined): boolean {
  const dnsPod = ctx.objects('pods').find((p) => p.metadata.labels?.['k8s-app'] === 'kube-dns');
  if (dnsPod) return peersAdmit(ctx, peers, dnsPod, '');
  return (
    peers === undefined ||
    peers.length === 0 ||
    (peers as Array<{ namespaceSelector?: unknown }>).some((p) => p.namespaceSelector !== undefined)
  );
}

function portsAdmit(ports: unknown[] | undefined, port: number | undefined): boolean {
  if (ports === undefined || ports.length === 0 || port === undefined) return true;
  return (ports as Array<{ port?: number | string; endPort?: number }>).some(
    (p) =>
      p.port === undefined ||
      p.port === port ||
      (typeof p.port === 'number' && p.endPort !== undefined && port >= p.port && port <= p.endPort),
  );
}

/**
 * The policies that isolate a pod, the one to blame first: a policy with rules meant to admit someone is where a
 * peer was left out, and the newest such policy is the change that left it out. A deny-all is deliberate.
 */
export function blameOrder(policies: readonly KubeObject[]): KubeObject[] {
  const admitsSomeone = (p: KubeObject) => Number(((p.spec?.ingress ?? []) as unknown[]).length > 0);
  return [...policies].sort(
    (x, y) =>
      admitsSomeone(y) - admitsSomeone(x) ||
      byCodePoint(String(y.metadata.creationTimestamp ?? ''), String(x.metadata.creationTimestamp ?? '')),
  );
}

/** Labels a controller writes per revision or per pod: a policy that selects by them stops matching on the next one. */
const PER_REVISION = /^(?:pod-template-hash|controller-revision-hash|statefulset\.kubernetes\.io\/pod-name)$|\/hash$/;

/** `k=v,…` of the labels a NetworkPolicy can durably select a pod by, for a `change` that admits it. */
export function selectableLabels(pod: KubeObject): string {
  return Object.entries(pod.metadata.labels ?? {})
    .filter(([k]) => !PER_REVISION.test(k))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** A NetworkPolicy as evidence: when it was made, whom it isolates, whom it admits. */
export function describePolicy(policy: KubeObject): string {
  return `NetworkPolicy ${policy.metadata.name} (created ${String(policy.metadata.creationTimestamp ?? '?')}): podSelector ${JSON.stringify(policy.spec?.podSelector ?? {})}, ingress ${JSON.stringify(policy.spec?.ingress ?? [])}`;
}
