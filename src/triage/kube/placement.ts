import type { KubeObject } from '../../cluster/types.js';
import { type LabelSelectorRequirement, requirementHolds } from './selectors.js';

/**
 * Where a pod template may run: taints against tolerations, nodeSelector and required node affinity, evaluated the
 * way the scheduler does. Used to explain why a node has no pod of a DaemonSet (a CSI node plugin that does not
 * tolerate a GPU taint) and whether any node satisfies a StorageClass's allowedTopologies.
 */

export interface Taint {
  key?: string;
  value?: string;
  effect?: string;
  timeAdded?: string;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

/** `key=value:Effect`, the way kubectl prints a taint. */
export function formatTaint(t: Taint): string {
  return `${t.key ?? ''}${t.value ? `=${t.value}` : ''}:${t.effect ?? ''}`;
}

export function nodeTaints(node: KubeObject): Taint[] {
  return Array.isArray(node.spec?.taints) ? node.spec.taints : [];
}

/** v1.Toleration.ToleratesTaint: an empty effect matches every effect, `Exists` with no key matches every key. */
export function tolerates(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  const operator = toleration.operator ?? 'Equal';
  if (operator === 'Exists') return !toleration.key || toleration.key === taint.key;
  return toleration.key === taint.key && (toleration.value ?? '') === (taint.value ?? '');
}

/**
 * Taints the DaemonSet controller tolerates on its pods' behalf (pkg/controller/daemon/util): a node plugin keeps
 * running on a node that is not ready, unreachable, under pressure or cordoned.
 */
const DAEMONSET_DEFAULT_TOLERATIONS: readonly Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' },
];

/** Taints that keep a pod with these tolerations off the node (PreferNoSchedule only discourages). */
function untoleratedTaints(node: KubeObject, tolerations: readonly Toleration[]): Taint[] {
  return nodeTaints(node).filter(
    (t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !tolerations.some((tol) => tolerates(tol, t)),
  );
}

interface NodeSelectorTerm {
  matchExpressions?: LabelSelectorRequirement[];
  matchFields?: LabelSelectorRequirement[];
}

function termHolds(term: NodeSelectorTerm, node: KubeObject): boolean {
  const labels = node.metadata.labels ?? {};
  const fields = { 'metadata.name': node.metadata.name };
  const expressions = term.matchExpressions ?? [];
  const matchFields = term.matchFields ?? [];
  // An empty term selects nothing (v1 nodeaffinity semantics).
  if (expressions.length === 0 && matchFields.length === 0) return false;
  return expressions.every((r) => requirementHolds(r, labels)) && matchFields.every((r) => requirementHolds(r, fields));
}

/** Why a pod template cannot run on the node, or an empty list when it can. */
export function placementBlockers(
  // biome-ignore lint/suspicious/noExplicitAny: raw pod spec JSON
  podSpec: any,
  node: KubeObject,
  opts: { daemonSet?: boolean } = {},
): string[] {
  const blockers: string[] = [];
  const own: Toleration[] = Array.isArray(podSpec?.tolerations) ? podSpec.tolerations : [];
  const tolerations = opts.daemonSet ? [...own, ...DAEMONSET_DEFAULT_TOLERATIONS] : own;
  for (const t of untoleratedTaints(node, tolerations)) blockers.push(`does not tolerate taint ${formatTaint(t)}`);
  const labels = node.metadata.labels ?? {};
  const selector: Record<string, string> = podSpec?.nodeSelector ?? {};
  const missing = Object.entries(selector).filter(([k, v]) => labels[k] !== v);
  if (missing.length > 0) blockers.push(`nodeSelector ${missing.map(([k, v]) => `${k}=${v}`).join(',')} not on node`);
  const terms: NodeSelectorTerm[] | undefined =
    podSpec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (Array.isArray(terms) && terms.length > 0 && !terms.some((t) => termHolds(t, node))) {
    blockers.push('required node affinity does not match the node');
  }
  return blockers;
}

interface TopologySelectorTerm {
  matchLabelExpressions?: { key?: string; values?: string[] }[];
}

/** StorageClass allowedTopologies: terms are ORed, expressions within a term ANDed, values of one key ORed. */
export function allowsNode(allowedTopologies: unknown, node: KubeObject): boolean {
  const terms: TopologySelectorTerm[] = Array.isArray(allowedTopologies) ? allowedTopologies : [];
  if (terms.length === 0) return true;
  const labels = node.metadata.labels ?? {};
  return terms.some((term) =>
    (term.matchLabelExpressions ?? []).every((e) => e.key !== undefined && (e.values ?? []).includes(labels[e.key]!)),
  );
}

/** `topology.kubernetes.io/zone in (us-east-1a, us-east-1b)`, terms joined by " or ". */
export function formatTopologies(allowedTopologies: unknown): string {
  const terms: TopologySelectorTerm[] = Array.isArray(allowedTopologies) ? allowedTopologies : [];
  return terms
    .map((term) =>
      (term.matchLabelExpressions ?? []).map((e) => `${e.key} in (${(e.values ?? []).join(', ')})`).join(' and '),
    )
    .join(' or ');
}

/** The label keys allowedTopologies constrain, to show where the nodes actually are. */
export function topologyKeys(allowedTopologies: unknown): string[] {
  const terms: TopologySelectorTerm[] = Array.isArray(allowedTopologies) ? allowedTopologies : [];
  return [...new Set(terms.flatMap((t) => (t.matchLabelExpressions ?? []).map((e) => e.key ?? '')))].filter(Boolean);
}
