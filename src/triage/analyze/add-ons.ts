import { type Condition, conditionOf } from '../../cluster/conditions.js';
import type { KubeObject, ResourceKind } from '../../cluster/types.js';
import { EVIDENCE_PER_FINDING } from '../../limits.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { controlPlaneBlock } from '../kube/admission.js';
import { clusterResourceController } from '../kube/cert-manager.js';
import { describeEvent, findEvents, isRecent } from '../kube/events.js';
import { ownerOf } from '../kube/pod-owners.js';
import { inNamespace, podRef, ref } from '../kube/pods.js';
import { parseQuantity } from '../kube/quantity.js';
import { backingWorkloads, namespaceExists, namespaceWasRead, serviceNamed } from '../kube/reach.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

/**
 * Controllers that serve the namespace from elsewhere speak through their objects' `status.conditions` and their
 * events: cert-manager's Certificates and Issuers, External Secrets' ExternalSecrets and stores, the metrics API's
 * APIService behind an autoscaler, Karpenter's NodePools, MetalLB's address pools. A condition that is not True is
 * followed to the object it depends on (a Certificate to its Issuer, an ExternalSecret to its store, an APIService to
 * the workload behind its Service), and the first object that is itself at fault is the one to change.
 */

const NAME = 'add-ons';

const notReady = (c: Condition | undefined) => c !== undefined && c.status !== 'True';
const conditionLine = (kind: string, o: KubeObject, c: Condition) =>
  `${kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}: ${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`.slice(
    0,
    300,
  );

function named(ctx: AnalyzerContext, kind: ResourceKind, name: string, namespace?: string): KubeObject | undefined {
  return ctx
    .objects(kind)
    .find((o) => o.metadata.name === name && (namespace === undefined || o.metadata.namespace === namespace));
}

/** A Certificate that is not Ready, followed to its issuer when the issuer is not ready either. */
function certificates(ctx: AnalyzerContext, out: FindingInput[]): void {
  for (const cert of inNamespace(ctx, ctx.objects('certificates'))) {
    const readyNow = conditionOf(cert, 'Ready');
    const issuing = conditionOf(cert, 'Issuing');
    // Still valid but renewing: a fault only when the issuer it renews from cannot issue (checked below).
    const renewing = !notReady(readyNow) && issuing?.status === 'True';
    if (!renewing && (!notReady(readyNow) || !readyNow)) continue;
    const ready = (renewing ? issuing : readyNow) as Condition;
    const issuerRef = (cert.spec?.issuerRef ?? {}) as { name?: string; kind?: string };
    const issuerKind = issuerRef.kind === 'ClusterIssuer' ? 'ClusterIssuer' : 'Issuer';
    const issuer = issuerRef.name
      ? named(
          ctx,
          issuerKind === 'ClusterIssuer' ? 'clusterissuers' : 'issuers',
          issuerRef.name,
          issuerKind === 'Issuer' ? ctx.namespace : undefined,
        )
      : undefined;
    const issuerReady = conditionOf(issuer, 'Ready');
    const certRef = ref('Certificate', cert.metadata.name, ctx.namespace);
    const issuerAt = issuerRef.name
      ? ref(issuerKind, issuerRef.name, issuerKind === 'Issuer' ? ctx.namespace : undefined)
      : undefined;
    const steps = [conditionLine('Certificate', cert, ready)];
    for (const kind of ['certificaterequests', 'orders', 'challenges'] as const) {
      for (const o of inNamespace(ctx, ctx.objects(kind))) {
        const c = conditionOf(o, 'Ready');
        if (c && c.status !== 'True') steps.push(conditionLine(String(o.kind), o, c));
        const state = o.status?.state as string | undefined;
        const reason = o.status?.reason as string | undefined;
        if (state && state !== 'valid' && reason)
          steps.push(`${o.kind} ${o.metadata.name}: ${state}: ${reason}`.slice(0, 300));
      }
    }
    if (issuerReady) steps.push(conditionLine(issuerKind, issuer as KubeObject, issuerReady));
    const secret = cert.spec?.secretName as string | undefined;
    const blamesIssuer = notReady(issuerReady) && issuerAt !== undefined;
    if (renewing && !blamesIssuer) continue;
    out.push({
      code: 'CERTIFICATE_NOT_READY',
      analyzer: NAME,
      domain: 'networking',
      // A certificate that still serves while its renewal fails is a deadline, not an outage yet.
      severity: renewing ? 'medium' : 'high',
      resource: certRef,
      ...(blamesIssuer ? { owner: issuerAt } : {}),
      message: `Certificate ${cert.metadata.name} ${renewing ? `cannot renew${cert.status?.notAfter ? ` before it expires at ${cert.status.notAfter}` : ''}` : 'is not ready'}${blamesIssuer ? `: its ${issuerKind} ${issuerRef.name} is not ready (${issuerReady?.reason ?? 'not ready'})` : `: ${ready.reason ?? ''} ${ready.message ?? ''}`.trimEnd()}.`,
      evidence: steps.slice(0, EVIDENCE_PER_FINDING),
      confidence: blamesIssuer ? 0.9 : 0.8,
      related: [
        ...(secret ? [ref('Secret', secret, ctx.namespace)] : []),
        ...(issuerAt && !blamesIssuer ? [issuerAt] : []),
      ],
      remediation: ['fix-issuer'],
      change: blamesIssuer
        ? `fix ${issuerKind} ${issuerRef.name}: ${issuerReady?.message ?? issuerReady?.reason ?? 'it is not ready'}`.slice(
            0,
            300,
          )
        : `fix Certificate ${cert.metadata.name}: ${ready.message ?? ready.reason ?? 'it is not ready'}`.slice(0, 300),
    });
  }
}

/**
 * In the namespace cert-manager keeps ClusterIssuer Secrets in, a ClusterIssuer that is not Ready is read from its
 * own condition (cert-manager's reason and message, `ErrGetKeyPair: … secrets "…" not found`), never from the Secret:
 * every Certificate cluster-wide that names it can neither be issued nor renewed.
 */
function clusterIssuers(ctx: AnalyzerContext, out: FindingInput[]): void {
  const controller = clusterResourceController(ctx);
  if (controller === undefined) return;
  for (const issuer of ctx.objects('clusterissuers')) {
    const ready = conditionOf(issuer, 'Ready');
    if (!notReady(ready) || ready === undefined) continue;
    const name = issuer.metadata.name;
    const users = ctx.objects('certificates').filter((c) => {
      const r = (c.spec?.issuerRef ?? {}) as { name?: string; kind?: string };
      return r.kind === 'ClusterIssuer' && r.name === name;
    });
    const secret = ((issuer.spec?.ca ?? {}) as { secretName?: unknown }).secretName;
    const at = ref('ClusterIssuer', name);
    out.push({
      code: 'ISSUER_NOT_READY',
      analyzer: NAME,
      domain: 'platform',
      severity: 'high',
      resource: at,
      message: `ClusterIssuer ${name} is not ready (${ready.reason ?? 'not ready'}): cert-manager in ${ctx.namespace} can neither issue nor renew a Certificate from it.`,
      evidence: [
        conditionLine('ClusterIssuer', issuer, ready),
        `cert-manager's controller ${controller.metadata.name} reads ClusterIssuer Secrets from namespace ${ctx.namespace} (--cluster-resource-namespace)`,
        ...(typeof secret === 'string' ? [`spec.ca.secretName ${secret}`] : []),
        ...(users.length > 0
          ? [
              `Certificates that name it: ${users.map((c) => `${c.metadata.namespace}/${c.metadata.name}`).join(', ')}`.slice(
                0,
                300,
              ),
            ]
          : []),
      ],
      confidence: 0.85,
      related: users.map((c) => ref('Certificate', c.metadata.name, c.metadata.namespace)),
      remediation: ['fix-issuer'],
      change: `fix ClusterIssuer ${name}: ${ready.message ?? ready.reason ?? 'it is not ready'}`.slice(0, 300),
    });
  }
}

type ExternalSecretSpec = {
  secretStoreRef?: { name?: string; kind?: string };
  target?: { name?: string };
  data?: Array<{ secretKey?: string }>;
  dataFrom?: unknown[];
};

/** ExternalSecrets that do not sync, followed to their store; and a Secret key a pod needs that no mapping writes. */
function externalSecrets(ctx: AnalyzerContext, out: FindingInput[]): void {
  const missingKeys = missingSecretKeys(ctx);
  for (const es of inNamespace(ctx, ctx.objects('externalsecrets'))) {
    const spec = (es.spec ?? {}) as ExternalSecretSpec;
    const target = spec.target?.name ?? es.metadata.name;
    const esRef = ref('ExternalSecret', es.metadata.name, ctx.namespace);
    const consumers = missingKeys.filter((m) => m.secret === target);
    const ready = conditionOf(es, 'Ready');
    if (notReady(ready) && ready) {
      const storeKind = spec.secretStoreRef?.kind === 'ClusterSecretStore' ? 'ClusterSecretStore' : 'SecretStore';
      const storeName = spec.secretStoreRef?.name;
      const store = storeName
        ? named(
            ctx,
            storeKind === 'ClusterSecretStore' ? 'clustersecretstores' : 'secretstores',
            storeName,
            storeKind === 'SecretStore' ? ctx.namespace : undefined,
          )
        : undefined;
      const storeReady = conditionOf(store, 'Ready');
      const storeAt = storeName
        ? ref(storeKind, storeName, storeKind === 'SecretStore' ? ctx.namespace : undefined)
        : undefined;
      const blamesStore = notReady(storeReady) && storeAt !== undefined;
      out.push({
        code: 'EXTERNALSECRET_NOT_SYNCED',
        analyzer: NAME,
        domain: 'platform',
        severity: 'high',
        resource: esRef,
        ...(blamesStore ? { owner: storeAt } : {}),
        message: `ExternalSecret ${es.metadata.name} does not sync Secret ${target}${blamesStore ? `: its ${storeKind} ${storeName} is not ready` : `: ${ready.reason ?? ''} ${ready.message ?? ''}`.trimEnd()}.`,
        evidence: [
          conditionLine('ExternalSecret', es, ready),
          ...(store && storeReady ? [conditionLine(storeKind, store, storeReady)] : []),
          ...eventLines(ctx, 'ExternalSecret', es.metadata.name),
        ].slice(0, EVIDENCE_PER_FINDING),
        confidence: 0.9,
        related: consumers.map((c) => c.workload),
        remediation: ['fix-external-secret'],
        change: blamesStore
          ? `fix ${storeKind} ${storeName}: ${storeReady?.message ?? storeReady?.reason ?? 'it is not ready'}`.slice(
              0,
              300,
            )
          : `fix ExternalSecret ${es.metadata.name}: ${ready.message ?? ready.reason ?? 'it does not sync'}`.slice(
              0,
              300,
            ),
      });
      continue;
    }
    // Synced, yet a pod needs a key the mapping does not write: the mapping is what to change.
    if (spec.dataFrom && spec.dataFrom.length > 0) continue;
    const written = new Set((spec.data ?? []).map((d) => d.secretKey));
    for (const c of consumers) {
      if (c.key === undefined || written.has(c.key)) continue;
      out.push({
        code: 'EXTERNALSECRET_KEY_MISSING',
        analyzer: NAME,
        domain: 'platform',
        severity: 'high',
        resource: esRef,
        message: `ExternalSecret ${es.metadata.name} writes Secret ${target} without key ${c.key}, which ${c.workload.kind} ${c.workload.name} needs.`,
        evidence: [c.line, `ExternalSecret ${es.metadata.name} writes keys: ${[...written].join(', ') || 'none'}`],
        confidence: 0.95,
        related: [c.workload],
        remediation: ['fix-external-secret'],
        change: `map key ${c.key} in spec.data of ExternalSecret ${es.metadata.name} (it writes ${[...written].join(', ') || 'no key'})`,
        alternatives: [
          { resource: c.workload, change: `read one of the keys ExternalSecret ${es.metadata.name} writes` },
        ],
      });
      break;
    }
  }
}

/** `couldn't find key X in Secret ns/name`, as the kubelet reports a pod it cannot configure. */
function missingSecretKeys(ctx: AnalyzerContext) {
  const out: Array<{ secret: string; key: string | undefined; workload: ResourceRef; line: string }> = [];
  for (const e of findEvents(ctx, { kind: 'Pod', reasons: ['Failed'], namespace: ctx.namespace })) {
    const m = /couldn't find key (\S+) in Secret ([a-z0-9-]+)\/([a-z0-9.-]+)/.exec(e.message);
    const gone = /secret "([a-z0-9.-]+)" not found/.exec(e.message);
    if ((!m && !gone) || !isRecent(ctx.now, e.last)) continue;
    const pod = ctx
      .objects('pods')
      .find((p) => p.metadata.name === e.involvedName && p.metadata.namespace === ctx.namespace);
    const workload = pod ? (ownerOf(ctx, pod) ?? podRef(pod)) : ref('Pod', e.involvedName, ctx.namespace);
    const secret = (m ? m[3] : gone?.[1]) as string;
    out.push({ secret, key: m ? (m[1] as string) : undefined, workload, line: describeEvent(e, ctx.now) });
  }
  return out;
}
function eventLines(ctx: AnalyzerContext, kind: string, name: string): string[] {
  return findEvents(ctx, { kind, name })
    .filter((e) => e.type === 'Warning' && isRecent(ctx.now, e.last))
    .slice(0, 2)
    .map((e) => describeEvent(e, ctx.now));
}

/** An autoscaler that cannot read its metrics, followed to the APIService and the workload that serves it. */
function blindAutoscalers(ctx: AnalyzerContext, out: FindingInput[]): void {
  for (const hpa of inNamespace(ctx, ctx.objects('horizontalpodautoscalers'))) {
    const active = conditionOf(hpa, 'ScalingActive');
    if (active?.status !== 'False' || !/FailedGet\w*Metric/.test(active.reason ?? '')) continue;
    const group = /\(get [a-z]+\.([a-z0-9.]+)\)/.exec(active.message ?? '')?.[1] ?? 'metrics.k8s.io';
    const hpaRef = ref('HorizontalPodAutoscaler', hpa.metadata.name, ctx.namespace);
    const evidence = [conditionLine('HorizontalPodAutoscaler', hpa, active)];
    const apiService = ctx.objects('apiservices').find((a) => a.spec?.group === group);
    if (!apiService) {
      out.push({
        code: 'HPA_METRICS_UNAVAILABLE',
        analyzer: NAME,
        domain: 'compute',
        severity: 'high',
        resource: hpaRef,
        message: `HorizontalPodAutoscaler ${hpa.metadata.name} cannot read its metrics; the ${group} APIService ${ctx.unavailable.has('apiservices') ? 'could not be read' : 'is not registered'}.`,
        evidence,
        confidence: ctx.unavailable.has('apiservices') ? 0.5 : 0.75,
        related: [],
        remediation: ['fix-metrics-api'],
      });
      continue;
    }
    const available = conditionOf(apiService, 'Available');
    if (available) evidence.push(conditionLine('APIService', apiService, available));
    if (!notReady(available)) continue;
    const apiRef = ref('APIService', apiService.metadata.name);
    const target = apiService.spec?.service as { name?: string; namespace?: string } | undefined;
    let owner: ResourceRef = apiRef;
    let blocked: ReturnType<typeof controlPlaneBlock>;
    const related: ResourceRef[] = [apiRef];
    if (target?.name && target.namespace) {
      related.push(ref('Service', target.name, target.namespace));
      const svc = serviceNamed(ctx, target.namespace, target.name);
      const backend = svc ? backingWorkloads(ctx, svc)[0] : undefined;
      const blocking =
        svc &&
        backend &&
        /context deadline exceeded|i\/o timeout|Client\.Timeout|timed out/i.test(available?.message ?? '')
          ? controlPlaneBlock(ctx, svc)
          : undefined;
      if (backend && blocking) {
        owner = blocking.policy;
        related.push(backend, blocking.policy);
        evidence.push(...blocking.evidence);
        blocked = blocking;
      } else if (backend) {
        owner = backend;
        related.push(backend);
      } else if (!namespaceWasRead(ctx, target.namespace) && namespaceExists(ctx, target.namespace) !== 'absent') {
        evidence.push(`namespace ${target.namespace}, where the APIService's backend runs, was not read`);
      }
    }
    out.push({
      code: 'HPA_METRICS_UNAVAILABLE',
      analyzer: NAME,
      domain: 'compute',
      severity: 'high',
      resource: hpaRef,
      owner,
      message: `HorizontalPodAutoscaler ${hpa.metadata.name} cannot scale: APIService ${apiService.metadata.name} is unavailable (${available?.reason ?? 'not available'})${blocked ? `; NetworkPolicy ${blocked.policy.namespace}/${blocked.policy.name} drops the API server's calls to its backend` : owner !== apiRef ? `; ${owner.kind} ${owner.namespace}/${owner.name} serves it` : ''}.`,
      evidence,
      confidence: 0.9,
      related,
      remediation: ['fix-metrics-api'],
      change: blocked
        ? `let NetworkPolicy ${blocked.policy.namespace}/${blocked.policy.name} admit the API server's calls to the backend of APIService ${apiService.metadata.name} (an ingress rule with an ipBlock, or no from, on port ${blocked.ports})`
        : owner !== apiRef
          ? `make ${owner.kind} ${owner.namespace}/${owner.name} serve APIService ${apiService.metadata.name} again: ${available?.message ?? ''}`.slice(
              0,
              300,
            )
          : `restore the backend of APIService ${apiService.metadata.name}: ${available?.message ?? ''}`.slice(0, 300),
    });
  }
}

/** Whether a NodePool's provisioned resources (`status.resources`) have reached one of its `spec.limits`. */
function atLimit(pool: KubeObject | undefined): boolean {
  const limits = (pool?.spec?.limits ?? {}) as Record<string, unknown>;
  const used = (pool?.status?.resources ?? {}) as Record<string, unknown>;
  return Object.entries(limits).some(([k, v]) => {
    const limit = parseQuantity(v);
    const inUse = parseQuantity(used[k]);
    return limit !== undefined && inUse !== undefined && inUse >= limit;
  });
}

/**
 * Pods Karpenter cannot provision for because a NodePool's limits are reached. A NodePool serves every namespace:
 * a pod of another namespace (its events read cluster-wide, the pod itself unread) counts when the NodePool's own
 * status shows it at its limit now.
 */
function nodePoolLimits(ctx: AnalyzerContext, out: FindingInput[]): void {
  const byPool = new Map<string, { pods: Set<string>; line: string; workloads: Map<string, ResourceRef> }>();
  for (const e of findEvents(ctx, { kind: 'Pod', message: /exceed limits for nodepool/ })) {
    if (!isRecent(ctx.now, e.last)) continue;
    const pool = /exceed limits for nodepool:? "?([a-z0-9.-]+)"?/.exec(e.message)?.[1];
    if (!pool) continue;
    const namespace = e.involvedNamespace ?? ctx.namespace;
    const pod = ctx
      .objects('pods')
      .find((p) => p.metadata.name === e.involvedName && (p.metadata.namespace ?? ctx.namespace) === namespace);
    if (pod ? pod.status?.phase !== 'Pending' : namespace === ctx.namespace || !atLimit(named(ctx, 'nodepools', pool)))
      continue;
    const entry = byPool.get(pool) ?? { pods: new Set(), line: describeEvent(e, ctx.now), workloads: new Map() };
    entry.pods.add(e.involvedName);
    const w = pod ? (ownerOf(ctx, pod) ?? podRef(pod)) : ref('Pod', e.involvedName, namespace);
    entry.workloads.set(`${w.kind}/${w.namespace ?? ''}/${w.name}`, w);
    byPool.set(pool, entry);
  }
  for (const [pool, entry] of byPool) {
    const nodePool = named(ctx, 'nodepools', pool);
    const limits = nodePool?.spec?.limits as Record<string, string> | undefined;
    const used = nodePool?.status?.resources as Record<string, string> | undefined;
    out.push({
      code: 'NODEPOOL_LIMIT_REACHED',
      analyzer: NAME,
      domain: 'platform',
      severity: 'high',
      resource: ref('NodePool', pool),
      message: `NodePool ${pool} has reached its limits: Karpenter launches no node for ${entry.pods.size} pending pod(s).`,
      evidence: [
        entry.line,
        ...(limits
          ? [`NodePool ${pool} limits ${JSON.stringify(limits)}${used ? `, in use ${JSON.stringify(used)}` : ''}`]
          : []),
      ],
      confidence: 0.9,
      related: [...entry.workloads.values()],
      remediation: ['raise-nodepool-limits'],
      change: `raise spec.limits of NodePool ${pool}${
        limits
          ? ` (${Object.entries(limits)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')})`
          : ''
      }, or free capacity in it`,
    });
  }
}

/** LoadBalancer Services MetalLB cannot give an address to. */
function addressPools(ctx: AnalyzerContext, out: FindingInput[]): void {
  for (const svc of inNamespace(ctx, ctx.objects('services'))) {
    if (svc.spec?.type !== 'LoadBalancer' || (svc.status?.loadBalancer?.ingress ?? []).length > 0) continue;
    const failed = findEvents(ctx, { kind: 'Service', name: svc.metadata.name, reasons: ['AllocationFailed'] }).find(
      (e) => isRecent(ctx.now, e.last),
    );
    if (!failed) continue;
    const annotations = svc.metadata.annotations ?? {};
    const asked = annotations['metallb.universe.tf/address-pool'] ?? annotations['metallb.io/address-pool'];
    const pools = ctx.objects('ipaddresspools');
    const pool = asked ? pools.find((p) => p.metadata.name === asked) : pools.length === 1 ? pools[0] : undefined;
    const poolRef = pool ? ref('IPAddressPool', pool.metadata.name, pool.metadata.namespace) : undefined;
    const svcRef = ref('Service', svc.metadata.name, ctx.namespace);
    out.push({
      code: 'LOADBALANCER_NO_ADDRESS',
      analyzer: NAME,
      domain: 'networking',
      severity: 'high',
      resource: svcRef,
      ...(poolRef ? { owner: poolRef } : {}),
      message: `LoadBalancer Service ${svc.metadata.name} gets no address: ${failed.message}${poolRef ? ` (IPAddressPool ${poolRef.name})` : ''}.`,
      evidence: [
        describeEvent(failed, ctx.now),
        ...(pool
          ? [`IPAddressPool ${pool.metadata.name}: addresses ${JSON.stringify(pool.spec?.addresses ?? [])}`]
          : []),
        ...(pools.length === 0 && ctx.unavailable.has('ipaddresspools') ? ['IPAddressPools could not be read'] : []),
      ],
      confidence: poolRef ? 0.9 : 0.7,
      related: [svcRef],
      remediation: ['grow-address-pool'],
      ...(poolRef
        ? { change: `add addresses to IPAddressPool ${poolRef.name}, or release ones other Services hold` }
        : {}),
    });
  }
}

export const addOnsAnalyzer: Analyzer = {
  name: NAME,
  domain: 'platform',
  description:
    'Add-ons that serve the namespace from elsewhere, by their status conditions and events: cert-manager, External Secrets, the metrics API behind autoscalers, Karpenter NodePools, MetalLB address pools.',
  needs: [
    'certificates',
    'clusterissuers',
    'externalsecrets',
    'apiservices',
    'horizontalpodautoscalers',
    'nodepools',
    'ipaddresspools',
    'events',
  ],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const out: FindingInput[] = [];
    certificates(ctx, out);
    clusterIssuers(ctx, out);
    externalSecrets(ctx, out);
    blindAutoscalers(ctx, out);
    nodePoolLimits(ctx, out);
    addressPools(ctx, out);
    return out;
  },
};
