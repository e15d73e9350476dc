import { conditionOf } from '../../cluster/conditions.js';
import type { KubeObject } from '../../cluster/types.js';
import { byCodePoint } from '../../code-point-order.js';
import type { FindingInput, ResourceRef } from '../envelope/findings.js';
import { groupBy } from '../kube/container-groups.js';
import { canSee, clip, describeEvent, type EventSummary, findEvents, formatAge, isRecent } from '../kube/events.js';
import { EvidenceList, nameList } from '../kube/evidence-list.js';
import { ownerKey, ownerOf } from '../kube/pod-owners.js';
import { namespacePods, podRef, ref } from '../kube/pods.js';
import { formatBytes, formatCpu, parseQuantity } from '../kube/quantity.js';
import { revisionChanges } from '../kube/revisions.js';
import { nodeUsage, shareOf } from '../kube/usage.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

const NAME = 'scheduling';

/**
 * One clause of a FailedScheduling message. The scheduler prints
 * `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {node-role.kubernetes.io/master: }. preemption: …`
 * (older releases: `… had taint {k: v}, that the pod didn't tolerate`).
 */
interface SchedulingReason {
  nodes: number;
  text: string;
  code: string;
  taint?: string;
}

export interface ParsedSchedulingMessage {
  totalNodes: number | undefined;
  reasons: SchedulingReason[];
}

const CONTROL_PLANE_TAINT = /node-role\.kubernetes\.io\/(master|control-plane)|node-role\.kubernetes\.io\/infra/;

function classify(text: string): { code: string; taint?: string } {
  if (/Insufficient cpu/i.test(text)) return { code: 'POD_INSUFFICIENT_CPU' };
  if (/Insufficient memory/i.test(text)) return { code: 'POD_INSUFFICIENT_MEMORY' };
  const taint = /taint \{([^}]*)\}/.exec(text);
  if (taint) return { code: 'POD_UNTOLERATED_TAINT', taint: `{${taint[1]}}` };
  if (/node affinity\/selector|node selector/i.test(text)) return { code: 'POD_NODE_SELECTOR_MISMATCH' };
  if (/pod (anti-)?affinity|affinity rules|topology spread/i.test(text)) return { code: 'POD_AFFINITY_MISMATCH' };
  if (/unbound immediate PersistentVolumeClaims|persistentvolumeclaim "[^"]+" not found/i.test(text))
    return { code: 'POD_UNBOUND_PVC' };
  if (/Too many pods/i.test(text)) return { code: 'POD_TOO_MANY_PODS' };
  if (/volume node affinity conflict|didn't find available persistent volumes/i.test(text))
    return { code: 'POD_UNBOUND_PVC' };
  return { code: 'POD_UNSCHEDULABLE' };
}

export function parseSchedulingMessage(message: string): ParsedSchedulingMessage {
  // Everything after "preemption:" repeats the node list from the preemption plugin's point of view.
  const main = message.split(/\.?\s*preemption:/)[0] ?? message;
  const head = /(\d+)\/(\d+) nodes are available:?\s*(.*)$/s.exec(main);
  const body = (head ? head[3]! : main).trim().replace(/\.$/, '');
  const totalNodes = head ? Number(head[2]) : undefined;
  // Clauses start with a count ("2 node(s) …", "1 Insufficient cpu"); taints contain ": " and ", " of their own.
  const parts = body
    .split(/,\s+(?=\d+\s)/)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const reasons: SchedulingReason[] = parts.map((part) => {
    const m = /^(\d+)\s+(.*)$/s.exec(part);
    const text = (m ? m[2]! : part).trim();
    const nodes = m ? Number(m[1]) : (totalNodes ?? 0);
    return { nodes, text, ...classify(text) };
  });
  return { totalNodes, reasons };
}

function requests(pod: KubeObject, resource: 'cpu' | 'memory'): number {
  const list: { resources?: { requests?: Record<string, string> } }[] = Array.isArray(pod.spec?.containers)
    ? pod.spec.containers
    : [];
  const sum = list.reduce((n, c) => n + (parseQuantity(c.resources?.requests?.[resource]) ?? 0), 0);
  const inits: typeof list = Array.isArray(pod.spec?.initContainers) ? pod.spec.initContainers : [];
  const initMax = inits.reduce((n, c) => Math.max(n, parseQuantity(c.resources?.requests?.[resource]) ?? 0), 0);
  return Math.max(sum, initMax);
}

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

/** Only nodes the pod could otherwise land on say anything about capacity. */
function toleratesAll(pod: KubeObject, node: KubeObject): boolean {
  const tolerations: Toleration[] = Array.isArray(pod.spec?.tolerations) ? pod.spec.tolerations : [];
  const taints: Toleration[] = Array.isArray(node.spec?.taints) ? node.spec.taints : [];
  return taints
    .filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute')
    .every((t) =>
      tolerations.some(
        (tol) =>
          (tol.effect === undefined || tol.effect === t.effect) &&
          (tol.key === undefined
            ? tol.operator === 'Exists'
            : tol.key === t.key && (tol.operator === 'Exists' || (tol.value ?? '') === (t.value ?? ''))),
      ),
    );
}

function selectorLine(pod: KubeObject): string | undefined {
  const selector = pod.spec?.nodeSelector as Record<string, string> | undefined;
  if (selector && Object.keys(selector).length > 0) {
    return `nodeSelector ${Object.entries(selector)
      .map(([k, v]) => `${k}=${v}`)
      .join(',')}`;
  }
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (Array.isArray(terms) && terms.length > 0) return `required node affinity ${JSON.stringify(terms)}`;
  return undefined;
}

function labelMissLine(ctx: AnalyzerContext, pod: KubeObject): string | undefined {
  const selector = pod.spec?.nodeSelector as Record<string, string> | undefined;
  if (!selector || !canSee(ctx, 'nodes')) return undefined;
  const nodes = ctx.objects('nodes');
  const matching = nodes.filter((n) => Object.entries(selector).every(([k, v]) => n.metadata.labels?.[k] === v));
  return `${matching.length}/${nodes.length} nodes carry the labels the nodeSelector requires`;
}

/** `{dedicated: gpu}` as the scheduler prints it → the key and value of the taint. */
function parseTaint(taint: string | undefined): { key: string; value: string } | undefined {
  const m = /^\{([^:}]+):\s*([^}]*)\}$/.exec(taint?.trim() ?? '');
  return m ? { key: m[1]!.trim(), value: m[2]!.trim() } : undefined;
}

/** The nodes that carry a taint the scheduler named, as `key=value:Effect on a, b, c`. */
function taintLine(ctx: AnalyzerContext, reasons: readonly SchedulingReason[]): string | undefined {
  if (!canSee(ctx, 'nodes')) return undefined;
  const lines: string[] = [];
  for (const r of reasons) {
    const taint = parseTaint(r.taint);
    if (!taint) continue;
    const carriers = ctx
      .objects('nodes')
      .filter((n) =>
        (Array.isArray(n.spec?.taints) ? (n.spec.taints as Toleration[]) : []).some(
          (t) => t.key === taint.key && (t.value ?? '') === taint.value,
        ),
      );
    if (carriers.length === 0) continue;
    const effect = (carriers[0]!.spec.taints as Toleration[]).find((t) => t.key === taint.key)?.effect;
    lines.push(
      `taint ${taint.key}${taint.value ? `=${taint.value}` : ''}${effect ? `:${effect}` : ''} on ${nameList(
        carriers.map((n) => n.metadata.name),
        4,
      )}; the pod has no toleration for it`,
    );
  }
  return lines.length > 0 ? lines.join('; ') : undefined;
}

/** Nodes whose labels and taints admit the pod: where its requests have to fit. */
function candidateNodes(ctx: AnalyzerContext, pod: KubeObject): KubeObject[] {
  const selector = pod.spec?.nodeSelector as Record<string, string> | undefined;
  return ctx
    .objects('nodes')
    .filter((n) => n.spec?.unschedulable !== true && toleratesAll(pod, n))
    .filter((n) => !selector || Object.entries(selector).every(([k, v]) => n.metadata.labels?.[k] === v));
}

/** Each node the pod may use, its allocatable next to the pod's request: `a 3820m, b 3820m (pod requests 3)`. */
function fitLine(ctx: AnalyzerContext, pod: KubeObject, resource: 'cpu' | 'memory'): string | undefined {
  if (!canSee(ctx, 'nodes')) return undefined;
  const nodes = candidateNodes(ctx, pod);
  if (nodes.length === 0) return undefined;
  const format = resource === 'cpu' ? formatCpu : formatBytes;
  const want = requests(pod, resource);
  const each = nodes
    .map((n) => ({ name: n.metadata.name, value: parseQuantity(n.status?.allocatable?.[resource]) ?? 0 }))
    .sort((a, b) => b.value - a.value || byCodePoint(a.name, b.name));
  const shown = each.slice(0, 4).map((n) => `${n.name} ${format(n.value)}`);
  const more = each.length > 4 ? `, and ${each.length - 4} more` : '';
  return `pod requests ${resource} ${format(want)}; allocatable ${resource} of the ${each.length} node(s) it may use: ${shown.join(', ')}${more} (the scheduler first subtracts what the pods already there request)`;
}

/**
 * What the nodes the pod may use actually use (metrics.k8s.io), against their allocatable: the scheduler places by
 * requests, so nodes that are full by requests while busy with little show that requests, not load, leave no room.
 */
function usageLine(
  ctx: AnalyzerContext,
  pod: KubeObject,
  resource: 'cpu' | 'memory',
): { line: string; range: string } | undefined {
  if (!canSee(ctx, 'nodes')) return undefined;
  const measured = candidateNodes(ctx, pod)
    .map((n) => ({
      name: n.metadata.name,
      used: nodeUsage(ctx, n.metadata.name)?.[resource],
      allocatable: parseQuantity(n.status?.allocatable?.[resource]) ?? 0,
    }))
    .filter((n): n is { name: string; used: number; allocatable: number } => n.used !== undefined && n.allocatable > 0);
  if (measured.length === 0) return undefined;
  const shares = measured.map((n) => n.used / n.allocatable);
  const low = Math.round(Math.min(...shares) * 100);
  const high = Math.round(Math.max(...shares) * 100);
  const shown = measured
    .slice(0, 4)
    .map((n) => `${n.name} ${shareOf(n.used, n.allocatable, resource, 'allocatable')}`)
    .join(', ');
  const range = low === high ? `${low}%` : `${low}–${high}%`;
  return {
    line: `measured ${resource} use of those nodes (metrics.k8s.io): ${shown}${measured.length > 4 ? `, and ${measured.length - 4} more` : ''}; they use ${range} of their ${resource}: requests, not load, leave no room`,
    range,
  };
}

/** For each key a nodeSelector requires, the values the nodes actually carry: `instance-type: c6i.4xlarge on a, b`. */
function nodeLabelsLine(ctx: AnalyzerContext, pod: KubeObject): string | undefined {
  const selector = pod.spec?.nodeSelector as Record<string, string> | undefined;
  if (!selector || !canSee(ctx, 'nodes')) return undefined;
  const nodes = ctx.objects('nodes');
  const parts = Object.keys(selector)
    .sort()
    .map((key) => {
      const byValue = new Map<string, string[]>();
      for (const n of nodes) {
        const v = n.metadata.labels?.[key] ?? '(unset)';
        byValue.set(v, [...(byValue.get(v) ?? []), n.metadata.name]);
      }
      const values = [...byValue.entries()]
        .sort(([a], [b]) => byCodePoint(a, b))
        .map(([v, names]) => `${v} (${nameList(names, 3)})`);
      return `nodes' ${key}: ${values.join(', ')}`;
    });
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/**
 * What the cluster autoscaler said about the pending pods: `pod didn't trigger scale-up: 1 max node group size
 * reached`, `pod triggered scale-up: [{pool 3->4 (max: 10)}]`, or a failed scale-up. Without a scale-up, capacity
 * does not come by itself.
 */
const AUTOSCALER_REASONS = ['NotTriggerScaleUp', 'TriggeredScaleUp', 'FailedScaleUp', 'ScaleUpTimedOut'];

function autoscalerEvent(ctx: AnalyzerContext, pods: readonly KubeObject[]): EventSummary | undefined {
  return pods
    .flatMap((p) =>
      findEvents(ctx, { kind: 'Pod', name: p.metadata.name, namespace: ctx.namespace, reasons: AUTOSCALER_REASONS }),
    )
    .filter((e) => isRecent(ctx.now, e.last))
    .sort((a, b) => (b.last?.getTime() ?? 0) - (a.last?.getTime() ?? 0))[0];
}

/** The cluster-autoscaler workload (any namespace read) whose --nodes flags set its node groups' sizes. */
function autoscalerWithLimits(
  ctx: AnalyzerContext,
): { workload: ResourceRef; flags: string[]; line: string } | undefined {
  for (const w of ctx.objects('deployments')) {
    const specs = (w.spec?.template?.spec?.containers ?? []) as Array<{
      image?: string;
      command?: string[];
      args?: string[];
    }>;
    for (const c of specs) {
      const words = [...(c.command ?? []), ...(c.args ?? [])];
      if (!`${c.image ?? ''} ${words.join(' ')}`.includes('cluster-autoscaler')) continue;
      const flags = words.filter((a) => /^--nodes=\d+:\d+:/.test(a));
      if (flags.length === 0) continue;
      const workload = ref('Deployment', w.metadata.name, w.metadata.namespace);
      return {
        workload,
        flags: flags.slice(0, 3),
        line: clip(`Deployment ${w.metadata.namespace}/${w.metadata.name} sets node group sizes: ${flags.join(' ')}`),
      };
    }
  }
  return undefined;
}

const SEVERITY_BY_SHARE = (share: number): FindingInput['severity'] => (share >= 0.5 ? 'high' : 'medium');

const MESSAGES: Readonly<Record<string, string>> = {
  POD_INSUFFICIENT_CPU: 'not enough allocatable CPU for its requests',
  POD_INSUFFICIENT_MEMORY: 'not enough allocatable memory for its requests',
  POD_UNTOLERATED_TAINT: 'a node taint the pod does not tolerate',
  POD_NODE_SELECTOR_MISMATCH: "no node matches the pod's nodeSelector/node affinity",
  POD_AFFINITY_MISMATCH: "the pod's (anti-)affinity rules exclude the nodes",
  POD_UNBOUND_PVC: 'a PersistentVolumeClaim it mounts is not bound',
  POD_TOO_MANY_PODS: 'the nodes reached their maximum pod count',
  POD_UNSCHEDULABLE: 'the scheduler rejects the nodes',
};

const REMEDIATION: Readonly<Record<string, string[]>> = {
  POD_INSUFFICIENT_CPU: ['lower-requests', 'add-capacity'],
  POD_INSUFFICIENT_MEMORY: ['lower-requests', 'add-capacity'],
  POD_UNTOLERATED_TAINT: ['add-toleration', 'remove-taint'],
  POD_NODE_SELECTOR_MISMATCH: ['fix-node-selector', 'label-node'],
  POD_AFFINITY_MISMATCH: ['relax-affinity'],
  POD_UNBOUND_PVC: ['fix-pvc-binding'],
  POD_TOO_MANY_PODS: ['add-capacity', 'raise-max-pods'],
  POD_UNSCHEDULABLE: ['describe-pod'],
};

/** What the pods' owner, the scheduler and the autoscaler said, shared by every reason a node was rejected for. */
interface Unschedulable {
  pods: KubeObject[];
  total: number;
  header: string;
  eventLine: string;
  scaler: ReturnType<typeof autoscalerEvent>;
  changed: ReturnType<typeof revisionChanges>;
  owner: ResourceRef | undefined;
  related: ResourceRef[];
}

/** One reason the scheduler rejected nodes for (its clauses merged), with the evidence that explains it. */
function reasonFinding(
  ctx: AnalyzerContext,
  seen: Unschedulable,
  code: string,
  reasons: SchedulingReason[],
): FindingInput {
  const { pods, total, header, eventLine, scaler, changed, owner, related } = seen;
  const pod = pods[0]!;
  const nodes = reasons.reduce((n, r) => n + r.nodes, 0);
  const share = total > 0 ? nodes / total : 1;
  // Control-plane taints keep workloads off masters by design: context, not the cause.
  const byDesign = code === 'POD_UNTOLERATED_TAINT' && reasons.every((r) => CONTROL_PLANE_TAINT.test(r.taint ?? ''));
  const symptom = code === 'POD_UNBOUND_PVC';
  const capacity = code === 'POD_INSUFFICIENT_CPU' || code === 'POD_INSUFFICIENT_MEMORY';
  // Ranks: which pods and the scheduler's words, what it means node by node, then autoscaler and history.
  const evidence = new EvidenceList()
    .add(0, header)
    .add(1, eventLine)
    .add(2, `${nodes}/${total} nodes: ${reasons.map((r) => r.text).join('; ')}`)
    .add(capacity ? 3 : 5, scaler && describeEvent(scaler, ctx.now))
    .add(4, changed);
  const resource = code === 'POD_INSUFFICIENT_CPU' ? 'cpu' : 'memory';
  const usage = capacity ? usageLine(ctx, pod, resource) : undefined;
  if (capacity) evidence.add(3, fitLine(ctx, pod, resource)).add(3, usage?.line);
  if (code === 'POD_UNTOLERATED_TAINT') evidence.add(3, taintLine(ctx, reasons));
  if (code === 'POD_NODE_SELECTOR_MISMATCH' || code === 'POD_AFFINITY_MISMATCH') {
    evidence.add(3, selectorLine(pod)).add(3, nodeLabelsLine(ctx, pod)).add(4, labelMissLine(ctx, pod));
  }
  const claims = symptom
    ? (Array.isArray(pod.spec?.volumes) ? pod.spec.volumes : [])
        .map((v: { persistentVolumeClaim?: { claimName?: string } }) => v?.persistentVolumeClaim?.claimName)
        .filter((c: unknown): c is string => typeof c === 'string')
    : [];
  if (claims.length > 0) evidence.add(3, `claims: ${claims.join(', ')}`);
  const noScaleUp =
    capacity && scaler?.reason === 'NotTriggerScaleUp'
      ? `; the cluster autoscaler adds no node (${scaler.message.replace(/^pod didn't trigger scale-up:\s*/i, '')})`
      : '';
  // The autoscaler reached a node group's maximum: where that maximum is set (its --nodes flags) is what to
  // change; with auto-discovery the maximum lives on the cloud's node group, outside the cluster.
  const capped =
    capacity && scaler?.reason === 'NotTriggerScaleUp' && /max node group size reached/i.test(scaler.message)
      ? autoscalerWithLimits(ctx)
      : undefined;
  if (capped) evidence.add(2, capped.line);
  return {
    ...(capped
      ? {
          owner: capped.workload,
          change: `raise the maximum in the --nodes=MIN:MAX:GROUP flag of ${capped.workload.kind} ${capped.workload.namespace}/${capped.workload.name} (${capped.flags.join(' ')}) for the node group these pods need, and the cloud node group's maximum with it`,
          alternatives: owner
            ? [{ resource: owner, change: `lower the requests or replicas of ${owner.kind} ${owner.name}` }]
            : [],
        }
      : {}),
    code,
    analyzer: NAME,
    domain: 'compute',
    // An unbound claim is the PVC analyzer's root cause; here it is only the symptom on the pod.
    severity: byDesign ? 'low' : symptom ? 'medium' : SEVERITY_BY_SHARE(share),
    resource: podRef(pod),
    message: `${pods.length > 1 ? `${pods.length} pods of ${owner?.kind} ${owner?.name} cannot` : `Pod ${pod.metadata.name} cannot`} be scheduled: ${MESSAGES[code]} (${nodes}/${total} nodes)${byDesign ? '; control-plane taint, expected' : ''}${noScaleUp}${usage ? `; the nodes are full by requests, not by use (${usage.range} used)` : ''}.`,
    evidence: evidence.lines(),
    confidence: byDesign ? 0.3 : symptom ? 0.6 : Math.min(0.95, 0.55 + 0.4 * share),
    related: [...related, ...claims.map((c: string) => ref('PersistentVolumeClaim', c, ctx.namespace))],
    remediation: REMEDIATION[code] ?? [],
  };
}

export const schedulingAnalyzer: Analyzer = {
  name: NAME,
  domain: 'compute',
  description: 'Pending pods the scheduler cannot place, with the reason behind each node it rejected.',
  needs: ['pods', 'events', 'nodes'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    const pending = namespacePods(ctx).filter(
      (p) => p.status?.phase === 'Pending' && !p.spec?.nodeName && conditionOf(p, 'PodScheduled')?.status !== 'True',
    );
    const findings: FindingInput[] = [];
    for (const [, pods] of groupBy(pending, (p) => ownerKey(ctx, p))) {
      // The condition is current state; the event adds counts. A pod whose only rejection is old keeps the condition.
      const pod = pods[0]!;
      const condition = conditionOf(pod, 'PodScheduled');
      const events = pods.flatMap((p) =>
        findEvents(ctx, {
          kind: 'Pod',
          name: p.metadata.name,
          namespace: ctx.namespace,
          reasons: ['FailedScheduling'],
        }),
      );
      events.sort((a, b) => (b.last?.getTime() ?? 0) - (a.last?.getTime() ?? 0));
      const latest = events[0];
      const message =
        (latest && isRecent(ctx.now, latest.last) ? latest.message : undefined) ??
        (condition?.reason === 'Unschedulable' ? condition.message : undefined) ??
        latest?.message;
      if (message === undefined) continue;
      const parsed = parseSchedulingMessage(message);
      const total = parsed.totalNodes ?? Math.max(1, ...parsed.reasons.map((r) => r.nodes));
      const owner = ownerOf(ctx, pod);
      const related: ResourceRef[] = owner ? [owner] : [];
      const attempts = events.reduce((n, e) => n + e.count, 0);
      const pendingFor = formatAge(Math.max(0, ctx.now.getTime() - Date.parse(pod.metadata.creationTimestamp ?? '')));
      const header = `${pods.length} pod(s) Pending for ${pendingFor}${attempts > 0 ? `, ${attempts} FailedScheduling event(s)` : ''}: ${nameList(pods.map((p) => p.metadata.name))}`;
      const eventLine = latest ? describeEvent(latest, ctx.now) : `PodScheduled=False: ${message}`;
      const scaler = autoscalerEvent(ctx, pods);
      const changed = revisionChanges(ctx, pod);

      // Merge clauses with the same code (e.g. two different taints).
      const byCode = new Map<string, SchedulingReason[]>();
      for (const r of parsed.reasons) byCode.set(r.code, [...(byCode.get(r.code) ?? []), r]);
      for (const [code, reasons] of byCode) {
        findings.push(
          reasonFinding(ctx, { pods, total, header, eventLine, scaler, changed, owner, related }, code, reasons),
        );
      }
    }
    return findings;
  },
};
