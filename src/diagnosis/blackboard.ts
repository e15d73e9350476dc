import { byCodePoint } from '../code-point-order.js';
import { type Domain, type ResourceRef, SEVERITY_ORDER, type Severity } from '../triage/envelope/index.js';
import { canonicalKind, isClusterScoped } from './kinds.js';
import { describeResource } from './resource-text.js';

/**
 * The blackboard's `group_findings` and `print_findings_report`. Specialists write findings independently; grouping
 * links the ones that share a resource or name each other as related (a pod waiting on a PVC, a Route pointing at
 * a Service) into one incident, and the root-most finding of each incident decides its domain.
 */

/**
 * What grouping needs from a finding. An analyzer's Finding fits as is; a specialist's shared-context entry
 * (`specialist`, `summary`, optional code and resource) is accepted too and normalised by toGroupable.
 */
export interface GroupableFinding {
  code?: string;
  domain: Domain;
  severity?: Severity;
  resource?: ResourceRef;
  related?: readonly ResourceRef[];
  message: string;
  confidence: number;
  evidence?: readonly string[];
  remediation?: readonly string[];
}

export interface SharedFindingLike {
  specialist: Domain;
  summary: string;
  confidence: number;
  code?: string;
  severity?: Severity;
  resource?: ResourceRef;
  related?: readonly ResourceRef[];
  evidence?: readonly string[];
}

function toGroupable(finding: GroupableFinding | SharedFindingLike): GroupableFinding {
  if ('specialist' in finding && !('domain' in finding)) {
    const { specialist, summary, ...rest } = finding;
    return { ...rest, domain: specialist, message: summary };
  }
  return finding as GroupableFinding;
}

type Finding = GroupableFinding;

export interface FindingGroup {
  /** Stable for the same set of resources: `incident-<first resource key>`. */
  id: string;
  title: string;
  primaryDomain: Domain;
  /** The finding nothing else in the group explains: the cause the others depend on. */
  rootCause: Finding;
  /** Root cause first, then by causal depth, severity and confidence. */
  findings: Finding[];
  resources: ResourceRef[];
  domains: Domain[];
  severity: Severity;
  /** Causal links inside the group: `dependent` depends on (is explained by) `cause`. */
  links: Array<{ cause: string; dependent: string }>;
}

/**
 * How far down the stack a kind sits, for breaking ties between findings neither of which names the other:
 * storage and nodes sit below pods, pods below the workloads and services that depend on them.
 */
const KIND_DEPTH: Record<string, number> = {
  storageclasses: 0,
  persistentvolumes: 0,
  volumeattachments: 0,
  csidrivers: 0,
  persistentvolumeclaims: 1,
  nodes: 1,
  clusteroperators: 1,
  namespaces: 1,
  resourcequotas: 1,
  configmaps: 2,
  pods: 3,
  replicasets: 4,
  deployments: 4,
  statefulsets: 4,
  daemonsets: 4,
  endpoints: 5,
  endpointslices: 5,
  services: 5,
  ingresses: 6,
  routes: 6,
};

function depth(ref: ResourceRef | undefined): number {
  return ref ? (KIND_DEPTH[canonicalKind(ref.kind)] ?? 3) : 3;
}

/** How far up the stack an object sits: volumes and nodes at the bottom, Routes and Ingresses at the top. */
export function stackDepth(ref: ResourceRef): number {
  return depth(ref);
}

/** Services, Endpoints, Ingresses and Routes: where traffic failures show, rarely what a person changes. */
export const SYMPTOM_DEPTH = 5;

export function resourceKey(ref: ResourceRef, fallbackNamespace?: string): string {
  const kind = canonicalKind(ref.kind);
  const ns = isClusterScoped(kind) ? '' : (ref.namespace ?? fallbackNamespace ?? '');
  return `${kind}/${ns}/${ref.name}`;
}

class UnionFind {
  private readonly parent = new Map<string, string>();
  find(x: string): string {
    let root = this.parent.get(x) ?? x;
    if (root !== x) {
      root = this.find(root);
      this.parent.set(x, root);
    } else if (!this.parent.has(x)) this.parent.set(x, x);
    return root;
  }
  union(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    // The smaller key wins so the representative, and with it the group id, does not depend on input order.
    if (ra !== rb) {
      if (ra < rb) this.parent.set(rb, ra);
      else this.parent.set(ra, rb);
    }
  }
}

const label = (f: Finding) => `${f.code ?? 'FINDING'}@${f.resource ? resourceKey(f.resource) : 'unscoped'}`;

export interface GroupOptions {
  /**
   * The cause the session's ranking leads with (the envelope's top cause, or the one a specialist's evidence put
   * first): in its group it is the root cause, so the report agrees with the envelope unless it says why not.
   */
  lead?: { code: string; resource: ResourceRef };
}

/** The findings being grouped, the resource each is about, what each names as related, and which one leads. */
interface FindingGraph {
  findings: ReturnType<typeof toGroupable>[];
  ownKey: string[];
  relatedKeys: string[][];
  isLead: (i: number) => boolean;
}

/** The findings of one group, root cause first, and the cause-to-dependent links between them. */
function causalOrder(
  indexes: readonly number[],
  graph: FindingGraph,
): { ordered: number[]; edges: Array<{ cause: number; dependent: number }> } {
  const { findings, ownKey, relatedKeys, isLead } = graph;
  // Finding i depends on finding j when i names j's resource as related (and they are not on the same object).
  const dependsOn = new Map<number, Set<number>>();
  const edges: Array<{ cause: number; dependent: number }> = [];
  // Two findings that name each other (the claim names its pod, the pod names its claim) are one link, not a
  // cycle: the one lower in the stack is the cause, and the lead, when one of them is, causes the other.
  const causes = (j: number, i: number): boolean => {
    if (!relatedKeys[i]?.includes(ownKey[j] as string)) return false;
    if (!relatedKeys[j]?.includes(ownKey[i] as string)) return true;
    if (isLead(j) !== isLead(i)) return isLead(j);
    const fi = findings[i] as Finding;
    const fj = findings[j] as Finding;
    if (depth(fj.resource) !== depth(fi.resource)) return depth(fj.resource) < depth(fi.resource);
    const si = SEVERITY_ORDER[fi.severity ?? 'medium'];
    const sj = SEVERITY_ORDER[fj.severity ?? 'medium'];
    return sj !== si ? sj > si : j < i;
  };
  for (const i of indexes) {
    for (const j of indexes) {
      if (i === j || ownKey[i] === ownKey[j]) continue;
      if (causes(j, i)) {
        dependsOn.set(i, new Set([...(dependsOn.get(i) ?? []), j]));
        edges.push({ cause: j, dependent: i });
      }
    }
  }
  // Causal depth: how many links separate a finding from a root cause (cycles are cut by the visited set).
  const causalDepth = (i: number, seen = new Set<number>()): number => {
    if (seen.has(i)) return 0;
    seen.add(i);
    const causes = [...(dependsOn.get(i) ?? [])];
    return causes.length === 0 ? 0 : 1 + Math.max(...causes.map((j) => causalDepth(j, new Set(seen))));
  };
  const ordered = [...indexes].sort((a, b) => {
    const fa = findings[a] as Finding;
    const fb = findings[b] as Finding;
    return (
      Number(isLead(b)) - Number(isLead(a)) ||
      causalDepth(a) - causalDepth(b) ||
      depth(fa.resource) - depth(fb.resource) ||
      SEVERITY_ORDER[fb.severity ?? 'medium'] - SEVERITY_ORDER[fa.severity ?? 'medium'] ||
      fb.confidence - fa.confidence ||
      a - b
    );
  });
  return { ordered, edges };
}

/** Every resource the group's findings are about or name as related, each once. */
function groupResources(groupFindingsList: readonly Finding[]): ResourceRef[] {
  const resources = new Map<string, ResourceRef>();
  for (const f of groupFindingsList) {
    if (f.resource) resources.set(resourceKey(f.resource), f.resource);
    for (const r of f.related ?? []) {
      const ref = { ...r, namespace: isClusterScoped(r.kind) ? r.namespace : (r.namespace ?? f.resource?.namespace) };
      if (!resources.has(resourceKey(ref))) resources.set(resourceKey(ref), ref);
    }
  }
  return [...resources.values()];
}

/** One incident: its root cause, its findings in causal order, the links between them, its worst severity. */
function buildGroup(root: string, indexes: readonly number[], graph: FindingGraph): FindingGroup {
  const { findings } = graph;
  const { ordered, edges } = causalOrder(indexes, graph);
  // Links read as a chain from the root cause outwards, whatever order the findings arrived in.
  const position = new Map(ordered.map((index, rank) => [index, rank]));
  const links: FindingGroup['links'] = edges
    .sort(
      (a, b) =>
        (position.get(a.cause) ?? 0) - (position.get(b.cause) ?? 0) ||
        (position.get(a.dependent) ?? 0) - (position.get(b.dependent) ?? 0),
    )
    .map((e) => ({ cause: label(findings[e.cause] as Finding), dependent: label(findings[e.dependent] as Finding) }));
  const rootCause = findings[ordered[0] as number] as Finding;
  const groupFindingsList = ordered.map((i) => findings[i] as Finding);
  const severity = groupFindingsList.reduce<Severity>(
    (worst, f) => (f.severity && SEVERITY_ORDER[f.severity] > SEVERITY_ORDER[worst] ? f.severity : worst),
    'info',
  );
  const domainLabel = rootCause.domain.charAt(0).toUpperCase() + rootCause.domain.slice(1);
  return {
    id: `incident-${root}`,
    title: `${domainLabel} incident: ${rootCause.message}`,
    primaryDomain: rootCause.domain,
    rootCause,
    findings: groupFindingsList,
    resources: groupResources(groupFindingsList),
    domains: [...new Set(groupFindingsList.map((f) => f.domain))],
    severity,
    links,
  };
}

export function groupFindings(
  input: ReadonlyArray<GroupableFinding | SharedFindingLike>,
  options: GroupOptions = {},
): FindingGroup[] {
  const findings = input.map(toGroupable);
  const leadKey = options.lead ? `${options.lead.code}@${resourceKey(options.lead.resource)}` : undefined;
  const isLead = (i: number) => leadKey !== undefined && label(findings[i] as Finding) === leadKey;
  const uf = new UnionFind();
  // A finding about no resource can only join others through what it names as related.
  const ownKey = findings.map((f, i) => (f.resource ? resourceKey(f.resource) : `unscoped/#${i}`));
  const relatedKeys = findings.map((f) => (f.related ?? []).map((r) => resourceKey(r, f.resource?.namespace)));
  findings.forEach((_, i) => {
    uf.find(ownKey[i] as string);
    for (const key of relatedKeys[i] ?? []) uf.union(ownKey[i] as string, key);
  });

  const members = new Map<string, number[]>();
  findings.forEach((_, i) => {
    const root = uf.find(ownKey[i] as string);
    members.set(root, [...(members.get(root) ?? []), i]);
  });

  const graph: FindingGraph = { findings, ownKey, relatedKeys, isLead };
  const groups: FindingGroup[] = [];
  for (const [root, indexes] of members) groups.push(buildGroup(root, indexes, graph));
  return groups.sort(
    (a, b) =>
      SEVERITY_ORDER[b.severity] - SEVERITY_ORDER[a.severity] ||
      b.findings.length - a.findings.length ||
      byCodePoint(a.id, b.id),
  );
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** The findings report: one section per incident, root cause first, with the evidence a human would check. */
export function formatFindingsReport(groups: readonly FindingGroup[], options: { title?: string } = {}): string {
  const lines: string[] = [`# ${options.title ?? 'Findings report'}`, ''];
  if (groups.length === 0) {
    lines.push('No findings were recorded.');
    return `${lines.join('\n')}\n`;
  }
  const total = groups.reduce((n, g) => n + g.findings.length, 0);
  lines.push(`${total} finding(s) grouped into ${groups.length} incident(s).`, '');
  groups.forEach((group, index) => {
    const root = group.rootCause;
    lines.push(
      `## ${index + 1}. ${group.title}`,
      '',
      `- **Primary domain:** ${group.primaryDomain}${group.domains.length > 1 ? ` (also ${group.domains.filter((d) => d !== group.primaryDomain).join(', ')})` : ''}`,
      `- **Severity:** ${group.severity}`,
      `- **Root cause:** ${root.code ? `\`${root.code}\` ` : ''}${root.resource ? `on ${describeResource(root.resource)} ` : ''}(confidence ${root.confidence.toFixed(2)}): ${root.message}`,
    );
    if (group.links.length > 0) {
      lines.push(`- **Causal links:** ${group.links.map((l) => `${l.cause} → ${l.dependent}`).join('; ')}`);
    }
    lines.push(
      `- **Resources:** ${group.resources.map(describeResource).join(', ')}`,
      '',
      '| # | Severity | Code | Resource | Finding | Confidence |',
      '|---|---|---|---|---|---|',
    );
    group.findings.forEach((f, i) => {
      lines.push(
        `| ${i + 1} | ${f.severity ?? '-'} | ${f.code ? `\`${f.code}\`` : '-'} | ${f.resource ? cell(describeResource(f.resource)) : '-'} | ${cell(f.message)} | ${f.confidence.toFixed(2)} |`,
      );
    });
    const withEvidence = group.findings.filter((f) => (f.evidence ?? []).length > 0);
    if (withEvidence.length > 0) {
      lines.push('', '**Evidence**', '');
      for (const f of withEvidence) {
        lines.push(`- ${f.code ? `\`${f.code}\` ` : ''}${f.resource ? describeResource(f.resource) : f.message}:`);
        for (const line of (f.evidence ?? []).slice(0, 3)) lines.push(`  - ${line.replace(/\r?\n/g, ' ')}`);
      }
    }
    const hints = [...new Set(group.findings.flatMap((f) => f.remediation ?? []))];
    if (hints.length > 0) lines.push('', `**Remediation hints:** ${hints.map((h) => `\`${h}\``).join(', ')}`);
    lines.push('');
  });
  return `${lines.join('\n').trimEnd()}\n`;
}
