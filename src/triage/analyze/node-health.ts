import { conditionOf } from '../../cluster/conditions.js';
import type { KubeObject } from '../../cluster/types.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { groupBy } from '../kube/container-groups.js';
import { canSee, describeEvent, findEvents, formatAge, HOUR } from '../kube/events.js';
import { formatTaint, nodeTaints, placementBlockers } from '../kube/placement.js';
import { ownerKey, ownerOf } from '../kube/pod-owners.js';
import { isoAge, namespacePods, podRef, ref } from '../kube/pods.js';
import { formatBytes, parseQuantity } from '../kube/quantity.js';
import { matchesMap } from '../kube/selectors.js';
import { claimOfVolume, fitEvidence, workloadName, workloadRef } from '../kube/storage.js';
import { nodeUsage, shareOf } from '../kube/usage.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

const NAME = 'node-health';

const PRESSURE = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'] as const;

/** Where the kubelet keeps node heartbeats: one Lease per node, renewed every leaseDurationSeconds / 4. */
const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** Pods beyond these in a finding's related list would crowd out the node's own objects. */
const MAX_RELATED_PODS = 2;

// biome-ignore lint/suspicious/noExplicitAny: raw condition JSON
function conditionLine(ctx: AnalyzerContext, c: any): string {
  const since = c.lastTransitionTime
    ? ` since ${c.lastTransitionTime} (${formatAge(isoAge(ctx.now, c.lastTransitionTime))})`
    : '';
  return `${c.type}=${c.status}${since}: ${c.reason ?? ''} ${c.message ?? ''}`.trim();
}

/**
 * Taints with when they were added, one entry per key and value: `node.kubernetes.io/unreachable:NoSchedule,NoExecute
 * (added 12m ago)`.
 */
function taintText(ctx: AnalyzerContext, node: KubeObject): string | undefined {
  const taints = nodeTaints(node);
  if (taints.length === 0) return undefined;
  const byKey = groupBy(taints, (t) => formatTaint({ ...t, effect: '' }));
  return `taints ${[...byKey.entries()]
    .map(([key, group]) => {
      const added = group.map((t) => t.timeAdded).find((t): t is string => typeof t === 'string');
      return `${key}${group.map((t) => t.effect).join(',')}${added ? ` (added ${formatAge(isoAge(ctx.now, added))} ago)` : ''}`;
    })
    .join(', ')}`;
}

/** A condition and the node's taints on one line: the taints are how the condition acts on pods. */
// biome-ignore lint/suspicious/noExplicitAny: raw condition JSON
function conditionWithTaints(ctx: AnalyzerContext, c: any, node: KubeObject): string {
  const taints = taintText(ctx, node);
  return taints ? `${conditionLine(ctx, c)}; ${taints}` : conditionLine(ctx, c);
}

const NO_PODS: readonly KubeObject[] = [];

/** The pods on each node that have not run to completion, in the namespace's order: one walk for every node. */
function activePodsByNode(pods: readonly KubeObject[]): Map<unknown, KubeObject[]> {
  const byNode = new Map<unknown, KubeObject[]>();
  for (let i = 0; i < pods.length; i++) {
    const p = pods[i] as KubeObject;
    if (p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded') continue;
    const node: unknown = p.spec?.nodeName;
    const list = byNode.get(node);
    if (list === undefined) byNode.set(node, [p]);
    else list.push(p);
  }
  return byNode;
}

function evictedNode(pod: KubeObject): string | undefined {
  return pod.spec?.nodeName;
}

function dedupe(refs: readonly ResourceRef[]): ResourceRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = `${r.kind}|${r.namespace ?? ''}|${r.name}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * The node's heartbeat. A Lease renewed long ago means the kubelet is down or cut off; a fresh Lease on a node whose
 * status is Unknown means the kubelet runs but cannot post status.
 */
function leaseLine(ctx: AnalyzerContext, node: string): { line: string; ref: ResourceRef; stale: boolean } | undefined {
  const lease = ctx
    .objects('leases')
    .find((l) => l.metadata.name === node && l.metadata.namespace === NODE_LEASE_NAMESPACE);
  const renewed = lease?.spec?.renewTime;
  if (lease === undefined || typeof renewed !== 'string') return undefined;
  const age = isoAge(ctx.now, renewed);
  const duration = Number(lease.spec?.leaseDurationSeconds ?? 40) * 1000;
  const stale = age > duration;
  return {
    line: `Lease ${NODE_LEASE_NAMESPACE}/${node} last renewed ${formatAge(age)} ago (renewTime ${renewed}, leaseDurationSeconds ${duration / 1000})${stale ? ': the kubelet has stopped heartbeating' : ': the kubelet still heartbeats'}`,
    ref: ref('Lease', node, NODE_LEASE_NAMESPACE),
    stale,
  };
}

/** Volumes still attached to the node: a replacement pod elsewhere cannot attach a ReadWriteOnce one. */
function attachedVolumes(ctx: AnalyzerContext, node: string): { lines: string[]; refs: ResourceRef[] } {
  const pvs = new Map(ctx.objects('persistentvolumes').map((pv) => [pv.metadata.name, pv]));
  const here = ctx
    .objects('volumeattachments')
    .filter((va) => va.spec?.nodeName === node && va.status?.attached !== false);
  // The namespace's own claims first: those are the ones its pods wait for.
  const ranked = here
    .map((va) => {
      const pvName = String(va.spec?.source?.persistentVolumeName ?? '');
      const pv = pvs.get(pvName);
      const claim = pv ? claimOfVolume(pv) : undefined;
      return { va, pvName, claim, ours: claim?.startsWith(`${ctx.namespace}/`) === true };
    })
    .sort((a, b) => Number(b.ours) - Number(a.ours));
  const shown = ranked.slice(0, 2);
  const lines = shown.map(
    ({ va, pvName, claim }) =>
      `VolumeAttachment ${va.metadata.name} keeps PV ${pvName}${claim ? ` (claim ${claim})` : ''} attached to ${node}`,
  );
  if (ranked.length > shown.length) lines.push(`${ranked.length} VolumeAttachments in all still point at ${node}`);
  return { lines, refs: shown.map(({ va }) => ref('VolumeAttachment', va.metadata.name)) };
}

/**
 * Services of the namespace that select the stranded pods, where a dead node's outage shows up as 503s; `emptied`
 * when no pod they select is ready anywhere else.
 */
function servicesOf(
  ctx: AnalyzerContext,
  node: string,
  stranded: readonly KubeObject[],
): { service: KubeObject; emptied: boolean }[] {
  const all = namespacePods(ctx).filter((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded');
  return ctx
    .objects('services')
    .filter((s) => (s.metadata.namespace ?? ctx.namespace) === ctx.namespace)
    .flatMap((service) => {
      const selector = service.spec?.selector;
      if (!selector || Object.keys(selector).length === 0) return [];
      if (!stranded.some((p) => matchesMap(selector, p.metadata.labels))) return [];
      const readyElsewhere = all.some(
        (p) =>
          p.spec?.nodeName !== node &&
          matchesMap(selector, p.metadata.labels) &&
          conditionOf(p, 'Ready')?.status === 'True',
      );
      return [{ service, emptied: !readyElsewhere }];
    })
    .sort((a, b) => Number(b.emptied) - Number(a.emptied));
}

/**
 * A CNI DaemonSet mounts the host's CNI configuration or binaries. When the kubelet says the network plugin is not
 * ready, the one that cannot run on the node is the cause.
 */
function cniDaemonSetBlocked(ctx: AnalyzerContext, node: KubeObject): { ds: KubeObject; why: string } | undefined {
  for (const ds of ctx.objects('daemonsets')) {
    const volumes: { hostPath?: { path?: string } }[] = ds.spec?.template?.spec?.volumes ?? [];
    if (!volumes.some((v) => /^\/(etc|opt)\/cni\b/.test(v.hostPath?.path ?? ''))) continue;
    const blockers = placementBlockers(ds.spec?.template?.spec, node, { daemonSet: true });
    if (blockers.length > 0) return { ds, why: blockers.join('; ') };
  }
  return undefined;
}

interface Eviction {
  pod: KubeObject;
  resource: string;
  container: string;
  usage: number;
  request: number;
  message: string;
}

/**
 * The kubelet's eviction message (pkg/kubelet/eviction/helpers.go): `The node was low on resource: memory.
 * Threshold quantity: 100Mi, available: 78836Ki. Container report-builder was using 6012380Ki, request is 512Mi, has
 * larger consumption of memory.` (older kubelets: `…, which exceeds its request of 512Mi.`).
 */
export function parseEviction(message: string): {
  resource?: string;
  containers: { name: string; usage: number; request: number }[];
} {
  const resource = /The node was low on resource: ([\w.-]+?)\.(?:\s|$)/.exec(message)?.[1];
  const containers: { name: string; usage: number; request: number }[] = [];
  const re = /Container (\S+) was using (\S+?), (?:request is (\S+?),|which exceeds its request of (\S+?)\.)/g;
  for (let m = re.exec(message); m !== null; m = re.exec(message)) {
    const usage = parseQuantity(m[2]);
    const request = parseQuantity(m[3] ?? m[4]) ?? 0;
    if (usage !== undefined) containers.push({ name: m[1]!, usage, request });
  }
  return { ...(resource ? { resource } : {}), containers };
}

function evictionsOf(pods: readonly KubeObject[]): Eviction[] {
  return pods.flatMap((pod) => {
    const message = String(pod.status?.message ?? '');
    const parsed = parseEviction(message);
    if (parsed.resource === undefined) return [];
    return parsed.containers.map((c) => ({
      pod,
      resource: parsed.resource!,
      container: c.name,
      usage: c.usage,
      request: c.request,
      message,
    }));
  });
}

/**
 * The workload that drove the node into pressure: the evicted container using the most of the starved resource, far
 * beyond its request (at least twice, or with no request), and a real share (≥ 10 %) of what the node offers. A pod
 * evicted with a small overage is a victim, not the cause.
 */
function pressureOffender(
  ctx: AnalyzerContext,
  node: KubeObject,
  evictions: readonly Eviction[],
): Eviction | undefined {
  const top = [...evictions].sort((a, b) => b.usage - a.usage)[0];
  if (top === undefined || (top.request > 0 && top.usage < 2 * top.request)) return undefined;
  const allocatable = parseQuantity(node.status?.allocatable?.[top.resource] ?? node.status?.capacity?.[top.resource]);
  if (allocatable !== undefined && top.usage < 0.1 * allocatable) return undefined;
  return ownerOf(ctx, top.pod) === undefined ? undefined : top;
}

function limitOf(pod: KubeObject, container: string, resource: string): string | undefined {
  const spec = (Array.isArray(pod.spec?.containers) ? pod.spec.containers : []).find(
    (c: { name?: string }) => c?.name === container,
  );
  const limit = spec?.resources?.limits?.[resource];
  return typeof limit === 'string' || typeof limit === 'number' ? String(limit) : undefined;
}

function bytesOrCount(resource: string, n: number): string {
  return resource === 'pid' || resource === 'pids' ? String(n) : formatBytes(n);
}

/** A node reporting a pressure condition, with the eviction threshold and the workload behind its evictions. */
function nodePressure(
  ctx: AnalyzerContext,
  node: KubeObject,
  type: (typeof PRESSURE)[number],
  // biome-ignore lint/suspicious/noExplicitAny: raw condition JSON
  c: any,
  nodeEvents: ReturnType<typeof findEvents>,
  evictedHere: readonly KubeObject[],
  relevant: boolean,
): FindingInput {
  const name = node.metadata.name;
  const evidence = [conditionWithTaints(ctx, c, node)];
  const threshold = nodeEvents.find((e) =>
    /EvictionThresholdMet|FreeDiskSpaceFailed|ImageGCFailed|SystemOOM/.test(e.reason),
  );
  if (threshold) evidence.push(describeEvent(threshold, ctx.now));
  const used = nodeUsage(ctx, name);
  const allocatable = node.status?.allocatable ?? {};
  if (used !== undefined && type === 'MemoryPressure' && parseQuantity(allocatable.memory)) {
    evidence.push(
      `memory in use now on the node (metrics.k8s.io): ${shareOf(used.memory, parseQuantity(allocatable.memory) as number, 'memory', 'allocatable')}`,
    );
  }
  const evictions = evictionsOf(evictedHere);
  const offender = pressureOffender(ctx, node, evictions);
  const workload = offender ? ownerOf(ctx, offender.pod) : undefined;
  if (offender && workload) {
    const limit = limitOf(offender.pod, offender.container, offender.resource);
    evidence.push(
      `container ${offender.container} of pod ${offender.pod.metadata.name} (${workload.kind} ${workload.name}) was using ${bytesOrCount(offender.resource, offender.usage)} of ${offender.resource} against a request of ${bytesOrCount(offender.resource, offender.request)}${limit ? ` and a limit of ${limit}` : ` and no ${offender.resource} limit`} when evicted`,
      `Evicted: ${offender.message.trim()}`,
    );
  } else if (evictedHere[0]?.status?.message) {
    evidence.push(`Evicted: ${String(evictedHere[0].status.message).trim()}`);
  }
  if (evictedHere.length > 0)
    evidence.push(
      `${evictedHere.length} pod(s) of ${ctx.namespace} evicted from the node: ${evictedHere
        .slice(0, 4)
        .map((p) => p.metadata.name)
        .join(', ')}`,
    );
  return {
    code: 'NODE_PRESSURE',
    analyzer: NAME,
    domain: 'platform',
    severity: relevant ? 'high' : 'medium',
    resource: ref('Node', name),
    message: `Node ${name} reports ${type} since ${formatAge(isoAge(ctx.now, c.lastTransitionTime))}${evictedHere.length > 0 ? ` and evicted ${evictedHere.length} pod(s) of ${ctx.namespace}` : ''}${workload && offender ? `; ${workload.kind} ${workload.name} drives it (container ${offender.container} used ${bytesOrCount(offender.resource, offender.usage)} of ${offender.resource}, request ${bytesOrCount(offender.resource, offender.request)})` : ''}.`,
    evidence: fitEvidence(evidence),
    confidence: relevant ? 0.9 : 0.65,
    related: dedupe([...(workload ? [workload] : []), ...evictedHere.slice(0, MAX_RELATED_PODS).map(podRef)]),
    remediation: [
      type === 'DiskPressure' ? 'free-node-disk' : 'reduce-node-memory',
      ...(workload ? ['set-resource-limits'] : []),
      'drain-node',
    ],
    ...(workload ? { owner: workload } : {}),
  };
}

/** Evicted pods of one owner: how long ago, from which nodes, and whether those nodes are still unhealthy. */
function evictedPods(ctx: AnalyzerContext, group: readonly KubeObject[], nodes: readonly KubeObject[]): FindingInput {
  // Evicted pods keep no finish time; the eviction event or the pod's start tells how old the eviction is.
  const pod = group[0]!;
  const events = findEvents(ctx, {
    kind: 'Pod',
    name: pod.metadata.name,
    namespace: ctx.namespace,
    reasons: ['Evicted'],
  });
  const when =
    events[0]?.last?.toISOString() ?? conditionOf(pod, 'DisruptionTarget')?.lastTransitionTime ?? pod.status?.startTime;
  const age = isoAge(ctx.now, when);
  const nodeName = evictedNode(pod);
  const nodeObj = nodes.find((n) => n.metadata.name === nodeName);
  const nodeStillBad =
    nodeObj !== undefined &&
    (conditionOf(nodeObj, 'Ready')?.status !== 'True' ||
      PRESSURE.some((t) => conditionOf(nodeObj, t)?.status === 'True'));
  const current = age <= HOUR || nodeStillBad;
  const owner = ownerOf(ctx, pod);
  const fromNodes = [...new Set(group.map(evictedNode).filter((n): n is string => n !== undefined))];
  return {
    code: 'POD_EVICTED',
    analyzer: NAME,
    domain: 'platform',
    severity: current ? 'medium' : 'low',
    resource: podRef(pod),
    message: `${group.length} pod(s)${owner ? ` of ${owner.kind} ${owner.name}` : ''} were evicted from node${fromNodes.length > 1 ? 's' : ''} ${fromNodes.join(', ') || '?'} ${formatAge(age)} ago.`,
    evidence: fitEvidence([
      `Evicted: ${pod.status?.message ?? ''}`,
      ...(events[0] ? [describeEvent(events[0], ctx.now)] : []),
      `${group.length} evicted pod(s) left in Failed phase${nodeStillBad ? `; node ${nodeName} still unhealthy` : ''}`,
    ]),
    confidence: current ? 0.8 : 0.4,
    related: [...(owner ? [owner] : []), ...fromNodes.map((n) => ref('Node', n))],
    remediation: ['clean-evicted-pods'],
  };
}

export const nodeHealthAnalyzer: Analyzer = {
  name: NAME,
  domain: 'platform',
  description:
    'NotReady nodes (since when, their Lease, taints, attached volumes and stranded pods), node pressure with the workload behind its evictions.',
  needs: ['nodes', 'pods', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const findings: FindingInput[] = [];
    const pods = namespacePods(ctx);
    const evicted = pods.filter((p) => p.status?.phase === 'Failed' && p.status?.reason === 'Evicted');
    const nodes = canSee(ctx, 'nodes') ? ctx.objects('nodes') : [];
    const onNode = activePodsByNode(pods);

    for (const node of nodes) {
      const name = node.metadata.name;
      const here = onNode.get(name) ?? NO_PODS;
      const evictedHere = evicted.filter((p) => evictedNode(p) === name);
      const relevant = here.length > 0 || evictedHere.length > 0;
      const ready = conditionOf(node, 'Ready');
      const nodeEvents = findEvents(ctx, { kind: 'Node', name }).filter(
        (e) => e.type === 'Warning' || /NotReady|Pressure/.test(e.reason),
      );
      if (ready && ready.status !== 'True') {
        findings.push(notReady(ctx, node, ready, here, nodeEvents));
      }
      for (const type of PRESSURE) {
        const c = conditionOf(node, type);
        if (c?.status !== 'True') continue;
        findings.push(nodePressure(ctx, node, type, c, nodeEvents, evictedHere, relevant));
      }
    }

    for (const [, group] of groupBy(evicted, (p) => ownerKey(ctx, p))) {
      findings.push(evictedPods(ctx, group, nodes));
    }
    return findings;
  },
};

function notReady(
  ctx: AnalyzerContext,
  node: KubeObject,
  // biome-ignore lint/suspicious/noExplicitAny: raw condition JSON
  ready: any,
  here: readonly KubeObject[],
  nodeEvents: ReturnType<typeof findEvents>,
): FindingInput {
  const name = node.metadata.name;
  const relevant = here.length > 0;
  // Evidence in the order an engineer reads it (the envelope keeps the first six lines): what the node says, what it
  // strands, its heartbeat and taints, then what keeps the workload from moving on.
  const evidence = [conditionWithTaints(ctx, ready, node)];
  if (here.length > 0) {
    const states = here
      .slice(0, 4)
      .map(
        (p) =>
          `${p.metadata.name} (${p.metadata.deletionTimestamp ? `Terminating since ${formatAge(isoAge(ctx.now, p.metadata.deletionTimestamp))}` : p.status?.phase}, ready=${conditionOf(p, 'Ready')?.status ?? '?'})`,
      );
    evidence.push(`${here.length} pod(s) of ${ctx.namespace} stranded on the node: ${states.join(', ')}`);
  }
  const lease = leaseLine(ctx, name);
  if (lease) evidence.push(lease.line);
  let owner: ResourceRef | undefined;
  if (ready.status === 'False' && /\bcni\b|network plugin|NetworkReady=false/i.test(String(ready.message ?? ''))) {
    const cni = cniDaemonSetBlocked(ctx, node);
    if (cni) {
      owner = workloadRef(cni.ds);
      evidence.push(`${workloadName(cni.ds)} (the CNI plugin) has no pod on the node: it ${cni.why}`);
    }
  }
  // A StatefulSet replaces a pod only once it is gone, and a pod on an unreachable node never finishes terminating.
  const stuck = here.filter((p) => ownerOf(ctx, p)?.kind === 'StatefulSet');
  for (const p of stuck.slice(0, 1)) {
    const sts = ownerOf(ctx, p)!;
    evidence.push(
      `StatefulSet ${sts.name} will not recreate ${p.metadata.name} while the pod object exists: it stays ${p.metadata.deletionTimestamp ? 'Terminating' : 'assigned to the node'} until the kubelet on ${name} confirms, or the node is confirmed down and removed`,
    );
  }
  const volumes = attachedVolumes(ctx, name);
  evidence.push(...volumes.lines);
  const elsewhere = ctx
    .objects('pods')
    .filter((p) => p.spec?.nodeName === name && (p.metadata.namespace ?? ctx.namespace) !== ctx.namespace).length;
  if (elsewhere > 0) evidence.push(`${elsewhere} more pod(s) of other namespaces on the node`);
  if (nodeEvents[0]) evidence.push(describeEvent(nodeEvents[0], ctx.now));
  if (node.spec?.unschedulable) evidence.push('node is cordoned (unschedulable)');
  const owners = dedupe(here.map((p) => ownerOf(ctx, p)).filter((o): o is ResourceRef => o !== undefined));
  const services = servicesOf(ctx, name, here);
  // The chain from the node to where the outage shows (its pods, their workload and Service), then its own objects.
  const related: ResourceRef[] = [
    ...(owner ? [owner] : []),
    ...here.slice(0, MAX_RELATED_PODS).map(podRef),
    ...owners.slice(0, 1),
    ...services
      .slice(0, 1)
      .map(({ service }) => ref('Service', service.metadata.name, service.metadata.namespace ?? ctx.namespace)),
    ...(lease ? [lease.ref] : []),
    ...volumes.refs.slice(0, 1),
  ];
  const reason = String(ready.message ?? ready.reason ?? '').trim();
  return {
    code: 'NODE_NOT_READY',
    analyzer: NAME,
    domain: 'platform',
    severity: relevant ? 'critical' : 'medium',
    resource: ref('Node', name),
    message: `Node ${name} is NotReady (Ready=${ready.status}${reason ? `: ${reason}` : ''}) for ${formatAge(isoAge(ctx.now, ready.lastTransitionTime))}${
      relevant
        ? `; ${here.length} pod(s) of ${ctx.namespace} are stranded on it (${here
            .slice(0, 2)
            .map((p) => p.metadata.name)
            .join(', ')}${here.length > 2 ? ', …' : ''})`
        : ''
    }${services[0]?.emptied ? `, and Service ${services[0].service.metadata.name} has no ready pod elsewhere` : ''}.`,
    evidence: fitEvidence(evidence),
    confidence: relevant ? 0.95 : 0.7,
    related: dedupe(related),
    remediation: ['check-kubelet', 'drain-node'],
    ...(owner ? { owner } : {}),
  };
}
