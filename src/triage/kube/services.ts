import levenshtein from 'damerau-levenshtein';
import { conditionOf } from '../../cluster/conditions.js';
import type { KubeObject } from '../../cluster/types.js';
import { byCodePoint } from '../../code-point-order.js';
import { EVIDENCE_PER_FINDING } from '../../limits.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { canSee, clip, describeEvent, findEvents } from './events.js';
import { crashLog, decisiveLogLine, quoteVerdict } from './log-verdicts.js';
import { ownerOf } from './pod-owners.js';
import { containers, isPodReady, namespacePods, nodeOfPod, ref } from './pods.js';
import { formatMap, matchesMap } from './selectors.js';

/** Service → endpoints → pods, the chain every networking analyzer walks. */

export function findService(ctx: AnalyzerContext, name: string, namespace = ctx.namespace): KubeObject | undefined {
  return ctx
    .objects('services')
    .find((s) => s.metadata.name === name && (s.metadata.namespace ?? namespace) === namespace);
}

export interface EndpointState {
  /** Whether Endpoints or EndpointSlices were available to judge. */
  known: boolean;
  ready: number;
  notReady: number;
  /** Ports as the endpoints publish them: `name:port`. */
  ports: { name?: string; port: number }[];
}

export function endpointState(ctx: AnalyzerContext, service: KubeObject): EndpointState {
  const name = service.metadata.name;
  const namespace = service.metadata.namespace ?? ctx.namespace;
  const slices = ctx
    .objects('endpointslices')
    .filter((s) => s.metadata.namespace === namespace && s.metadata.labels?.['kubernetes.io/service-name'] === name);
  if (slices.length > 0) {
    let ready = 0;
    let notReady = 0;
    const ports: EndpointState['ports'] = [];
    for (const slice of slices) {
      for (const ep of (slice['endpoints'] as { conditions?: { ready?: boolean } }[] | undefined) ?? []) {
        if (ep.conditions?.ready === false) notReady++;
        else ready++;
      }
      for (const p of (slice['ports'] as { name?: string; port?: number }[] | undefined) ?? []) {
        if (typeof p.port === 'number') ports.push({ name: p.name || undefined, port: p.port });
      }
    }
    return { known: true, ready, notReady, ports };
  }
  const ep = ctx.objects('endpoints').find((e) => e.metadata.name === name && e.metadata.namespace === namespace);
  if (ep !== undefined) {
    let ready = 0;
    let notReady = 0;
    const ports: EndpointState['ports'] = [];
    for (const subset of (ep['subsets'] as Record<string, unknown[]>[] | undefined) ?? []) {
      ready += (subset['addresses'] ?? []).length;
      notReady += (subset['notReadyAddresses'] ?? []).length;
      for (const p of (subset['ports'] ?? []) as { name?: string; port?: number }[]) {
        if (typeof p.port === 'number') ports.push({ name: p.name || undefined, port: p.port });
      }
    }
    return { known: true, ready, notReady, ports };
  }
  // The control plane keeps an Endpoints object for every Service with a selector. When the namespace has none at
  // all, they were not read (a `kubectl get all` dump leaves them out): that is not knowing, not "no endpoints".
  const inNamespace = (kind: 'endpoints' | 'endpointslices') =>
    ctx.objects(kind).some((o) => (o.metadata.namespace ?? ctx.namespace) === namespace);
  const known = canSee(ctx, 'endpoints') && (inNamespace('endpoints') || inNamespace('endpointslices'));
  return { known, ready: 0, notReady: 0, ports: [] };
}

export function selectedPods(ctx: AnalyzerContext, service: KubeObject): KubeObject[] {
  const selector = service.spec?.selector as Record<string, string> | undefined;
  if (!selector || Object.keys(selector).length === 0) return [];
  return namespacePods(ctx).filter(
    (p) => matchesMap(selector, p.metadata.labels) && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded',
  );
}

/** Deployments and StatefulSets of the Service's namespace whose pod template the selector matches. */
function workloadsSelected(ctx: AnalyzerContext, service: KubeObject): KubeObject[] {
  const selector = service.spec?.selector as Record<string, string> | undefined;
  if (!selector || Object.keys(selector).length === 0) return [];
  const namespace = service.metadata.namespace ?? ctx.namespace;
  return [...ctx.objects('deployments'), ...ctx.objects('statefulsets')].filter(
    (w) =>
      (w.metadata.namespace ?? namespace) === namespace &&
      matchesMap(selector, w.spec?.template?.metadata?.labels as Record<string, string> | undefined),
  );
}

/** Who drives a workload's replica count, from the annotations and labels the tools themselves write. */
export function managedBy(workload: KubeObject): string | undefined {
  const a = workload.metadata.annotations ?? {};
  const l = workload.metadata.labels ?? {};
  if (a['downscaler/original-replicas'] !== undefined)
    return `kube-downscaler scaled it down (annotation downscaler/original-replicas=${a['downscaler/original-replicas']})`;
  if (a['argocd.argoproj.io/tracking-id'] !== undefined || l['argocd.argoproj.io/instance'] !== undefined)
    return `managed by Argo CD (${a['argocd.argoproj.io/tracking-id'] ?? l['argocd.argoproj.io/instance']})`;
  if (a['meta.helm.sh/release-name'] !== undefined) return `managed by Helm release ${a['meta.helm.sh/release-name']}`;
  if (l['app.kubernetes.io/managed-by'] !== undefined) return `managed by ${l['app.kubernetes.io/managed-by']}`;
  return undefined;
}

/** The newest "Scaled down replica set … to 0" the deployment controller reported for a Deployment. */
export function scaledToZeroEvent(ctx: AnalyzerContext, workload: KubeObject): string | undefined {
  const event = findEvents(ctx, {
    kind: workload.kind ?? 'Deployment',
    name: workload.metadata.name,
    namespace: workload.metadata.namespace ?? ctx.namespace,
    reasons: ['ScalingReplicaSet'],
    message: /\bto 0(?: from \d+)?\s*$/,
  })[0];
  return event ? describeEvent(event, ctx.now) : undefined;
}

/** A workload whose spec asks for zero replicas: nothing will ever back the Service. */
function scaledToZero(workload: KubeObject): boolean {
  return workload.spec?.replicas === 0;
}

function similar(a: string, b: string): boolean {
  return a.includes(b) || b.includes(a) || levenshtein(a, b).steps <= 2;
}

interface Candidate {
  owner: ResourceRef;
  pods: KubeObject[];
  score: number;
  /** How their labels differ from the selector: `app.kubernetes.io/name=shipping`. */
  differs: string[];
}

/**
 * The pods a selector that matches nothing was most likely meant for: the workload whose pod labels come closest
 * (same key with a near value counts more than a bare key), preferring the workload named like the Service.
 */
function intendedPods(ctx: AnalyzerContext, service: KubeObject): Candidate | undefined {
  const selector = service.spec?.selector as Record<string, string> | undefined;
  if (!selector || Object.keys(selector).length === 0) return undefined;
  const groups = new Map<string, Candidate>();
  for (const pod of namespacePods(ctx)) {
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue;
    const owner = ownerOf(ctx, pod) ?? ref('Pod', pod.metadata.name, pod.metadata.namespace);
    const key = `${owner.kind}/${owner.name}`;
    const seen = groups.get(key);
    if (seen) {
      seen.pods.push(pod);
      continue;
    }
    const labels = pod.metadata.labels ?? {};
    let score = 0;
    let partial = false;
    const differs: string[] = [];
    for (const [k, v] of Object.entries(selector)) {
      const have = labels[k];
      if (have === v) {
        score += 3;
      } else if (have !== undefined) {
        score += similar(v, have) ? 2 : 1;
        partial ||= similar(v, have);
        differs.push(`${k}=${have}`);
      } else {
        const elsewhere = Object.entries(labels).find(([, lv]) => lv === v);
        if (elsewhere) {
          score += 2;
          partial = true;
          differs.push(`${elsewhere[0]}=${elsewhere[1]} (no ${k})`);
        } else differs.push(`no ${k} label`);
      }
    }
    const name = service.metadata.name;
    if (owner.name === name) score += 2;
    else if (owner.name.startsWith(`${name}-`) || name.startsWith(`${owner.name}-`)) score += 1;
    // A pod that shares nothing but unrelated keys with the selector is no evidence of intent.
    if (!partial && owner.name !== name) continue;
    groups.set(key, { owner, pods: [pod], score, differs });
  }
  return [...groups.values()].sort((a, b) => b.score - a.score || byCodePoint(a.owner.name, b.owner.name))[0];
}

/** The pod whose labels come closest to the selector, to show what the selector probably meant. */
function nearestPodLabels(ctx: AnalyzerContext, selector: Record<string, string>): string | undefined {
  let best: { pod: KubeObject; score: number } | undefined;
  for (const pod of namespacePods(ctx)) {
    const labels = pod.metadata.labels ?? {};
    const score = Object.entries(selector).reduce(
      (n, [k, v]) => n + (labels[k] === v ? 2 : labels[k] !== undefined ? 1 : 0),
      0,
    );
    if (score > 0 && (best === undefined || score > best.score)) best = { pod, score };
  }
  if (best === undefined) return undefined;
  const labels = best.pod.metadata.labels ?? {};
  const shown = Object.fromEntries(
    Object.entries(labels).filter(([k]) => k in selector || !/pod-template-hash|controller-revision-hash/.test(k)),
  );
  return `closest pod ${best.pod.metadata.name} has labels ${formatMap(shown)}`;
}

export interface WhyNoEndpoints {
  code: 'SELECTS_NO_PODS' | 'SCALED_TO_ZERO' | 'PODS_NOT_READY' | 'NO_SELECTOR' | 'UNKNOWN';
  evidence: string[];
  /**
   * The entity to change, when it is not the Service's selector: the workload scaled to zero. For SELECTS_NO_PODS
   * it is the Service itself.
   */
  owner?: ResourceRef;
  /** What the Service's emptiness follows from: the workloads of its unready pods, the nodes they are stuck on. */
  upstream: ResourceRef[];
  /**
   * The unready pods' own state names a cause elsewhere (a crash loop, an image that cannot be pulled, a pod that
   * cannot be scheduled, a dead node): the empty Service is then a symptom, not the fault.
   */
  causeElsewhere: boolean;
}

const BROKEN_WAITING = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

function readyStatus(node: KubeObject): string | undefined {
  return conditionOf(node, 'Ready')?.status;
}

function nodeReady(node: KubeObject): boolean {
  return readyStatus(node) === 'True';
}

/** Why a pod is not ready, when its status says so; undefined when it runs and only its readiness probe fails. */
function unreadyCause(ctx: AnalyzerContext, pod: KubeObject): string | undefined {
  const node = nodeOfPod(ctx, pod);
  if (node && !nodeReady(node))
    return `node ${node.metadata.name} is NotReady (Ready=${readyStatus(node) ?? 'Unknown'})`;
  if (pod.status?.phase === 'Pending' && conditionOf(pod, 'PodScheduled')?.status === 'False')
    return `unschedulable: ${conditionOf(pod, 'PodScheduled')?.message ?? 'no node fits'}`.slice(0, 160);
  for (const c of containers(pod)) {
    if (c.waitingReason && BROKEN_WAITING.has(c.waitingReason)) return `container ${c.name} ${c.waitingReason}`;
    if (c.restartCount > 0 && c.lastTerminated?.reason === 'OOMKilled') return `container ${c.name} OOMKilled`;
  }
  return undefined;
}

/** Explain a Service without ready endpoints: nothing selected, scaled to zero, or selected but not ready. */
/** The selector matches no pod: its workload is scaled to zero, or the pods it should select are labelled otherwise. */
function selectsNoPods(
  ctx: AnalyzerContext,
  service: KubeObject,
  selector: Record<string, string>,
  selectorLine: string,
  namespace: string,
): WhyNoEndpoints {
  const workloads = workloadsSelected(ctx, service);
  const zero = workloads.find(scaledToZero);
  if (zero) {
    const how = managedBy(zero);
    const event = scaledToZeroEvent(ctx, zero);
    return {
      code: 'SCALED_TO_ZERO',
      owner: ref(zero.kind ?? 'Deployment', zero.metadata.name, namespace),
      evidence: [
        `${zero.kind} ${zero.metadata.name} has spec.replicas 0; its pod template matches ${selectorLine}${how ? `; ${how}` : ''}`,
        ...(event ? [event] : []),
      ],
      upstream: [],
      causeElsewhere: false,
    };
  }
  const intended = intendedPods(ctx, service);
  const evidence = [selectorLine, `0 pods in ${namespace} match the selector`];
  if (intended) {
    const names = intended.pods.map((p) => p.metadata.name);
    evidence.push(
      `pods it should select: ${intended.owner.kind} ${intended.owner.name} (${names.slice(0, 3).join(', ')}${names.length > 3 ? ', …' : ''}) labelled ${intended.differs.join(', ') || 'differently'}`,
    );
  } else {
    const near = nearestPodLabels(ctx, selector);
    if (near) evidence.push(near);
  }
  return {
    code: 'SELECTS_NO_PODS',
    owner: ref('Service', service.metadata.name, namespace),
    evidence,
    upstream: [],
    causeElsewhere: false,
  };
}

/** Every selected pod is unready: what the pods' own state, probes and logs say about why. */
function podsNotReady(
  ctx: AnalyzerContext,
  pods: readonly KubeObject[],
  notReady: KubeObject[],
  selectorLine: string,
  namespace: string,
): WhyNoEndpoints {
  const evidence = [selectorLine, `${pods.length} pod(s) match, 0 ready`];
  const causes = notReady.map((p) => ({ pod: p, cause: unreadyCause(ctx, p) }));
  const explained = causes.filter((c) => c.cause !== undefined);
  if (explained.length > 0) {
    evidence.push(
      `not ready because: ${explained
        .slice(0, 3)
        .map((c) => `${c.pod.metadata.name} ${c.cause}`)
        .join('; ')}`,
    );
  }
  for (const pod of notReady.slice(0, 3)) {
    const probe = findEvents(ctx, {
      kind: 'Pod',
      name: pod.metadata.name,
      namespace,
      reasons: ['Unhealthy'],
    }).find((e) => /Readiness probe failed/i.test(e.message));
    if (probe) {
      evidence.push(describeEvent(probe, ctx.now));
      break;
    }
  }
  if (explained.length === 0) {
    // Running but unready: what the pods themselves log is the next thing to read.
    for (const pod of notReady.slice(0, 3)) {
      const verdict = containers(pod)
        .filter((c) => !c.init)
        .map((c) => decisiveLogLine(crashLog(ctx, pod, c.name)))
        .find((v) => v !== undefined);
      if (verdict) {
        evidence.push(clip(`log ${pod.metadata.name}: ${quoteVerdict(verdict)}`));
        break;
      }
    }
  }
  const waiting = notReady
    .flatMap((p) => (Array.isArray(p.status?.containerStatuses) ? p.status.containerStatuses : []))
    .map((s: { name?: string; state?: { waiting?: { reason?: string } } }) => s.state?.waiting?.reason)
    .filter(Boolean);
  if (waiting.length > 0 && explained.length === 0)
    evidence.push(`containers waiting: ${[...new Set(waiting)].join(', ')}`);
  const upstream = uniqueRefs([
    ...notReady.map((p) => ownerOf(ctx, p) ?? ref('Pod', p.metadata.name, namespace)),
    ...notReady
      .map((p) => nodeOfPod(ctx, p))
      .filter((n): n is KubeObject => n !== undefined && !nodeReady(n))
      .map((n) => ref('Node', n.metadata.name)),
  ]);
  return { code: 'PODS_NOT_READY', evidence, upstream, causeElsewhere: explained.length > 0 };
}

export function whyNoEndpoints(ctx: AnalyzerContext, service: KubeObject): WhyNoEndpoints {
  const selector = service.spec?.selector as Record<string, string> | undefined;
  const namespace = service.metadata.namespace ?? ctx.namespace;
  if (!selector || Object.keys(selector).length === 0) {
    return {
      code: 'NO_SELECTOR',
      evidence: [`Service ${service.metadata.name} has no selector (endpoints are managed by hand)`],
      upstream: [],
      causeElsewhere: false,
    };
  }
  const pods = selectedPods(ctx, service);
  const selectorLine = `Service ${service.metadata.name} selector ${formatMap(selector)}`;
  if (!canSee(ctx, 'pods'))
    return { code: 'UNKNOWN', evidence: [selectorLine, 'pods could not be read'], upstream: [], causeElsewhere: false };
  if (pods.length === 0) return selectsNoPods(ctx, service, selector, selectorLine, namespace);
  const notReady = pods.filter((p) => !isPodReady(p));
  if (notReady.length === pods.length) return podsNotReady(ctx, pods, notReady, selectorLine, namespace);
  return {
    code: 'UNKNOWN',
    evidence: [selectorLine, `${pods.length - notReady.length}/${pods.length} pods ready, endpoints not yet updated`],
    upstream: [],
    causeElsewhere: false,
  };
}

function uniqueRefs(refs: readonly ResourceRef[]): ResourceRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = `${r.kind}/${r.namespace ?? ''}/${r.name}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export interface TargetPortProblem {
  port: number | undefined;
  targetPort: number | string;
  evidence: string[];
  /** The pods' own readiness probes succeed on the port they declare: the strongest sign the Service is wrong. */
  corroborated: boolean;
}

/**
 * Service ports that lead nowhere: a named targetPort no selected container defines (the endpoints controller
 * drops those pods), or a numeric targetPort that no container declares while every container declares its ports.
 */
export function targetPortProblems(ctx: AnalyzerContext, service: KubeObject): TargetPortProblem[] {
  const pods = selectedPods(ctx, service);
  if (pods.length === 0) return [];
  const ports: { name?: string; port?: number; targetPort?: number | string; protocol?: string }[] = Array.isArray(
    service.spec?.ports,
  )
    ? service.spec.ports
    : [];
  const declared = pods.map((p) =>
    containers(p)
      .filter((c) => !c.init)
      .flatMap((c) =>
        (Array.isArray(c.spec?.ports) ? c.spec.ports : []).map(
          (cp: { name?: string; containerPort?: number; protocol?: string }) => ({ ...cp, container: c.name }),
        ),
      ),
  );
  // Declaring container ports is optional: only pods that declare some can show that a port is missing.
  if (declared.some((d) => d.length === 0)) return [];
  const all = declared.flat();
  const shown = [...new Set(all.map((cp) => `${cp.containerPort}${cp.name ? ` (${cp.name})` : ''}`))].join(', ');
  const podNames = pods.map((p) => p.metadata.name);
  const podsLine = `${podNames.slice(0, 3).join(', ')}${podNames.length > 3 ? ', …' : ''}`;
  const problems: TargetPortProblem[] = [];
  for (const p of ports) {
    const target = p.targetPort ?? p.port;
    if (target === undefined) continue;
    const protocol = p.protocol ?? 'TCP';
    if (typeof target === 'string' && !/^\d+$/.test(target)) {
      if (all.some((cp) => cp.name === target && (cp.protocol ?? 'TCP') === protocol)) continue;
      problems.push({
        port: p.port,
        targetPort: target,
        corroborated: true,
        evidence: [
          `Service ${service.metadata.name} port ${p.port} → targetPort "${target}", a port name no container of its pods defines`,
          `pods ${podsLine} declare containerPort ${shown}`,
        ],
      });
      continue;
    }
    const number = Number(target);
    if (all.some((cp) => cp.containerPort === number)) continue;
    const probePorts = new Set(
      pods.flatMap((pod) =>
        containers(pod)
          .filter((c) => !c.init)
          .flatMap((c) => [c.spec?.readinessProbe, c.spec?.livenessProbe, c.spec?.startupProbe])
          .map((probe) => probe?.httpGet?.port ?? probe?.tcpSocket?.port ?? probe?.grpc?.port)
          .map((port: number | string | undefined) =>
            typeof port === 'string' ? all.find((cp) => cp.name === port)?.containerPort : port,
          )
          .filter((port: number | undefined): port is number => typeof port === 'number'),
      ),
    );
    const listening = all.map((cp) => cp.containerPort).filter((cp) => cp !== undefined && probePorts.has(cp));
    const readyPods = pods.filter(isPodReady);
    const corroborated = listening.length > 0 && readyPods.length > 0;
    problems.push({
      port: p.port,
      targetPort: number,
      corroborated,
      evidence: [
        `Service ${service.metadata.name} port ${p.port} → targetPort ${number}, which no container of its pods declares`,
        `pods ${podsLine} declare containerPort ${shown}${
          corroborated
            ? `; ${readyPods.length}/${pods.length} pass their probe on ${[...new Set(listening)].join(', ')}`
            : ''
        }`,
      ],
    });
  }
  return problems;
}

/** Service ports as `80→8080/TCP (http)`. */
export function servicePortsLine(service: KubeObject): string {
  const ports: { name?: string; port?: number; targetPort?: number | string; protocol?: string }[] = Array.isArray(
    service.spec?.ports,
  )
    ? service.spec.ports
    : [];
  return ports
    .map((p) => `${p.port}→${p.targetPort ?? p.port}/${p.protocol ?? 'TCP'}${p.name ? ` (${p.name})` : ''}`)
    .join(', ');
}

export type NetworkingEmit = (
  code: string,
  severity: FindingInput['severity'],
  message: string,
  evidence: string[],
  confidence: number,
  related: ResourceRef[],
  remediation: string[],
  owner?: ResourceRef,
) => void;

function sameRef(a: ResourceRef, b: ResourceRef): boolean {
  return a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
}

/** Appends networking findings about one resource to `findings`, so each check names only what differs. */
export function networkingEmitter(findings: FindingInput[], analyzer: string, resource: ResourceRef): NetworkingEmit {
  return (code, severity, message, evidence, confidence, related, remediation, owner) => {
    const sameAsResource = owner !== undefined && sameRef(owner, resource);
    findings.push({
      code,
      analyzer,
      domain: 'networking',
      severity,
      resource,
      message,
      evidence: [...new Set(evidence)].slice(0, EVIDENCE_PER_FINDING),
      confidence,
      // A finding does not point upstream at the entity it already names as its own owner.
      related: owner ? related.filter((r) => !sameRef(r, owner)) : related,
      remediation,
      ...(owner && !sameAsResource ? { owner } : {}),
    });
  };
}
