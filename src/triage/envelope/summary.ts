import { eventTime } from '../../cluster/event-time.js';
import type { KubeObject, ResourceKind } from '../../cluster/types.js';
import { clip, ENVELOPE_EVIDENCE_PER_FINDING, EVIDENCE_TEXT_MAX } from '../../limits.js';
import type { EvidenceAssessment, OutcomeIndex } from '../gather/gathering.js';
import { formatAge } from '../kube/events.js';
import type { RankedCauseWithFinding } from '../rank/root-cause.js';
import type { TriageTemplate } from '../templates/template-schema.js';
import type { TriageEnvelope } from './envelope.js';
import type { Finding } from './findings.js';
import { compareFindings, findingKey } from './findings.js';
import { renderAction } from './next-actions.js';

/** Presentation: the summary sentence, prompt suggestions, and keeping the envelope within its size limit. */

/** An envelope travels through Step Functions (256 KB) and Slack; a typical one stays far below this. */
export const ENVELOPE_BYTES_LIMIT = 32 * 1024;

const MAX_PROMPTS = 5;

/** "Nothing wrong" read from a truncated list is not proof of health: it earns Medium at most. */
export function limitedConfidence(
  confidence: TriageEnvelope['rubrics']['confidence'],
  causes: readonly RankedCauseWithFinding[],
  index: OutcomeIndex,
): TriageEnvelope['rubrics']['confidence'] {
  return confidence === 'High' && causes.length === 0 && index.limited.size > 0 ? 'Medium' : confidence;
}

/** Findings in the order their next actions should appear: ranked causes first, then the rest. */
export function orderForActions(findings: readonly Finding[], causes: readonly RankedCauseWithFinding[]): Finding[] {
  const lead = causes.map((c) => c.finding);
  const leadKeys = new Set(lead.map(findingKey));
  return [...lead, ...findings.filter((f) => !leadKeys.has(findingKey(f))).sort(compareFindings)];
}

export interface SummaryInput {
  title: string;
  namespace: string;
  causes: readonly RankedCauseWithFinding[];
  findings: readonly Finding[];
  evidence: EvidenceAssessment;
  required: number;
  timedOut: boolean;
  limited: ReadonlySet<ResourceKind>;
  /** What a sweep looked at, for a namespace found healthy ("12 pods, 4 workloads, …"). */
  checked?: string;
}

function listed(names: readonly string[]): string {
  return names.length <= 3 ? names.join(', ') : `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`;
}

export function summarize(input: SummaryInput): string {
  const { title, namespace, causes, findings, evidence, required } = input;
  const have = required - evidence.missing.length;
  const parts: string[] = [];
  const top = causes[0];
  const stale = findings.filter((f) => f.stale !== undefined).length;
  if (top) {
    const others = causes.slice(1).map((c) => `${c.resource.kind} ${c.resource.name}`);
    const entity = `${top.resource.kind} ${top.resource.name}`;
    const impact = (top.impact ?? []).map((i) => `${i.resource.kind} ${i.resource.name}`);
    parts.push(
      `${title} in ${namespace}: ${clip(top.summary, 200)} (${top.code} on ${entity}, ${top.finding.severity}, confidence ${top.confidence}). Change ${entity}: ${clip(top.change ?? '', 160)}${impact.length > 0 ? `; it takes down ${listed(impact)}` : ''}${others.length > 0 ? `; independently, ${listed(others)} ${others.length > 1 ? 'are' : 'is'} at fault too` : ''}.`,
    );
  } else if (evidence.present.length === 0) {
    // Silence from a cluster that could not be read is not health.
    parts.push(`${title} in ${namespace}: unknown: the cluster could not be read, so nothing can be concluded.`);
  } else {
    const notes = findings.length - stale;
    // "Healthy" rests on every read the verdict needs: what was refused, failed, timed out or cut short makes it
    // unknown, naming what could not be read.
    const unread = [...evidence.missing, ...[...input.limited].map((k) => `all ${k} (the list stopped at its limit)`)];
    const seen =
      unread.length > 0
        ? `unknown: could not read ${unread.join(', ')}; no fault seen in what could be read`
        : evidence.gaps.length > 0
          ? `no current fault in what was read${input.checked ? ` (checked ${input.checked})` : ''}, but ${[...new Set(evidence.gaps.map((g) => g.type))].join(', ')} could not be read`
          : input.checked
            ? `healthy, no current fault (checked ${input.checked})`
            : 'no fault found';
    parts.push(
      `${title} in ${namespace}: ${seen}${notes > 0 ? ` (${notes} informational finding${notes > 1 ? 's' : ''})` : ''}.`,
    );
  }
  if (stale > 0) {
    parts.push(
      `${stale} older warning${stale > 1 ? 's describe' : ' describes'} a fault that has since cleared (marked stale).`,
    );
  }
  if (evidence.missing.length === 0) {
    parts.push(`Evidence complete (${have}/${required}).`);
  } else {
    const why = evidence.missing.map((type) => {
      const gap = evidence.gaps.find((g) => g.type === type);
      return gap ? `${type}: ${gap.reason}` : type;
    });
    parts.push(
      `Evidence incomplete (${have}/${required}, missing ${why.join('; ')})${evidence.completeness < evidence.threshold ? ' — treat this as provisional' : ''}.`,
    );
  }
  if (input.limited.size > 0) {
    const kinds = [...input.limited].sort().join(', ');
    parts.push(`Only part of the namespace's ${kinds} was read (list limit reached); faults beyond it are not seen.`);
  }
  if (input.timedOut) parts.push('The triage deadline passed; this is what was gathered in time.');
  return parts.join(' ');
}

/** What a sweep read, in a person's words: "14 pods, 5 workloads, 6 services, 2 claims, 3 nodes". */
export function checkedSummary(index: OutcomeIndex, namespace: string, now: Date): string {
  // Counted, not filtered: there may be thousands of pods and events.
  const inNs = (kind: ResourceKind) => {
    const objects = index.objects.get(kind) ?? [];
    let n = 0;
    for (let i = 0; i < objects.length; i++)
      if (((objects[i] as KubeObject).metadata.namespace ?? namespace) === namespace) n++;
    return n;
  };
  const workloads = inNs('deployments') + inNs('statefulsets') + inNs('daemonsets') + inNs('cronjobs');
  const parts: Array<[number, string]> = [
    [inNs('pods'), 'pod'],
    [workloads, 'workload'],
    [inNs('services'), 'service'],
    [inNs('persistentvolumeclaims'), 'claim'],
    [(index.objects.get('nodes') ?? []).length, 'node'],
    [inNs('events'), 'event'],
  ];
  const counted = parts
    .filter(([n]) => n > 0)
    .map(([n, word]) => `${n} ${word}${n === 1 ? '' : 's'}`)
    .join(', ');
  const runs = latestJobRuns(index, namespace);
  const states = workloadStates(index, namespace);
  const claims = (index.objects.get('persistentvolumeclaims') ?? [])
    .filter((c) => (c.metadata.namespace ?? namespace) === namespace)
    .slice(0, 4)
    .map((c) => `${c.metadata.name} ${c.status?.phase ?? '?'}`);
  const cleared = clearedWarnings(index, namespace, now);
  return [
    counted,
    ...(states.length > 0 ? [`workloads: ${states.join(', ')}`] : []),
    ...(claims.length > 0 ? [`claims: ${claims.join(', ')}`] : []),
    ...(runs.length > 0 ? [`latest job runs: ${runs.join(', ')}`] : []),
    ...(cleared.length > 0 ? [`earlier warnings, since cleared: ${cleared.join('; ')}`] : []),
  ].join('; ');
}

/** Each workload and how many of its replicas are ready: what "healthy" was judged on. */
function workloadStates(index: OutcomeIndex, namespace: string): string[] {
  const out: string[] = [];
  for (const kind of ['deployments', 'statefulsets', 'daemonsets'] as const) {
    for (const w of index.objects.get(kind) ?? []) {
      if ((w.metadata.namespace ?? namespace) !== namespace) continue;
      const ready = Number(w.status?.readyReplicas ?? w.status?.numberReady ?? 0);
      const desired = Number(w.spec?.replicas ?? w.status?.desiredNumberScheduled ?? 1);
      out.push(`${w.metadata.name} ${ready}/${desired}`);
      if (out.length >= 6) return out;
    }
  }
  return out;
}

/**
 * Warnings in the namespace that no current fault explains, newest first, one per object and reason: a healthy
 * answer says what it saw and judged to be history, so the reader can check that judgement.
 */
function clearedWarnings(index: OutcomeIndex, namespace: string, now: Date): string[] {
  type Ev = KubeObject & {
    type?: string;
    reason?: string;
    message?: string;
    count?: number;
    series?: { count?: number };
    involvedObject?: { kind?: string; name?: string };
  };
  // Replicas repeat one warning: one line per reason and message, naming the newest object and how many others.
  const newest = new Map<string, { e: Ev; at: number; count: number; objects: Set<string> }>();
  for (const raw of index.objects.get('events') ?? []) {
    const e = raw as Ev;
    if (e.type !== 'Warning' || (e.metadata.namespace ?? namespace) !== namespace) continue;
    const key = `${e.reason}|${e.message}`;
    const at = eventTime(e) ?? 0;
    const count = Number(e.series?.count ?? e.count ?? 1);
    const object = `${e.involvedObject?.kind} ${e.involvedObject?.name}`;
    const seen = newest.get(key);
    if (!seen) newest.set(key, { e, at, count, objects: new Set([object]) });
    else {
      seen.count += count;
      seen.objects.add(object);
      if (at > seen.at) Object.assign(seen, { e, at });
    }
  }
  return [...newest.values()]
    .sort((a, b) => b.at - a.at)
    .slice(0, 3)
    .map(({ e, at, count, objects }) => {
      const age = at > 0 ? ` ${formatAge(Math.max(0, now.getTime() - at))} ago` : '';
      const others = objects.size > 1 ? ` and ${objects.size - 1} other${objects.size > 2 ? 's' : ''}` : '';
      return `${e.reason}${count > 1 ? ` ×${count}` : ''} on ${e.involvedObject?.kind} ${e.involvedObject?.name}${others}${age}: ${clip(e.message ?? '', 100)}`;
    });
}

/** The newest Job of each CronJob (or standalone Job) and how it ended: "did last night's export run?" */
function latestJobRuns(index: OutcomeIndex, namespace: string): string[] {
  const newest = new Map<string, KubeObject>();
  for (const job of index.objects.get('jobs') ?? []) {
    if ((job.metadata.namespace ?? namespace) !== namespace) continue;
    const owner = job.metadata.ownerReferences?.find((o) => o.kind === 'CronJob')?.name ?? job.metadata.name;
    const seen = newest.get(owner);
    if (!seen || (job.metadata.creationTimestamp ?? '') > (seen.metadata.creationTimestamp ?? ''))
      newest.set(owner, job);
  }
  return [...newest.values()].slice(0, 6).map((job) => {
    const conditions = (job.status?.conditions ?? []) as Array<{ type?: string; status?: string }>;
    const state =
      conditions.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')?.type ??
      (job.status?.active ? 'running' : 'pending');
    return `${job.metadata.name} ${state}`;
  });
}

export function promptSuggestions(
  template: TriageTemplate,
  namespace: string,
  causes: readonly RankedCauseWithFinding[],
  evidence: EvidenceAssessment,
): string[] {
  const out: string[] = [];
  const top = causes[0];
  if (top) {
    out.push(`Explain ${top.code} for ${top.resource.kind} ${top.resource.name} and how to confirm it`);
  }
  if (evidence.missing.length > 0) {
    out.push(`Re-run the ${template.id} triage in ${namespace} once ${evidence.missing.join(', ')} can be read`);
  }
  for (const text of template.promptSuggestions) {
    const rendered = renderAction(text, namespace, top?.resource);
    if (rendered) out.push(rendered);
  }
  for (const domain of template.relatedDomains) {
    out.push(`Ask the ${domain} specialist to review ${namespace}`);
  }
  return [...new Set(out)].slice(0, MAX_PROMPTS);
}

export function compact(f: Finding): Finding {
  return {
    ...f,
    message: clip(f.message, EVIDENCE_TEXT_MAX),
    evidence: f.evidence.slice(0, ENVELOPE_EVIDENCE_PER_FINDING).map((e) => clip(e, EVIDENCE_TEXT_MAX)),
    related: f.related.slice(0, 5),
    remediation: f.remediation.slice(0, 5),
  };
}

/** Drop the least important findings (never a ranked cause's) until the envelope fits. */
export function fitToLimit(envelope: TriageEnvelope): TriageEnvelope {
  const size = () => Buffer.byteLength(JSON.stringify(envelope), 'utf8');
  // A ranked cause's finding sits on its resource or on a link of its chain (the pod behind the owner named).
  const keep = new Set(
    envelope.rootCause.flatMap((c) =>
      [c.resource, ...(c.chain ?? [])].map((r) => findingKey({ code: c.code, resource: r })),
    ),
  );
  while (size() > ENVELOPE_BYTES_LIMIT) {
    const i = envelope.findings.findLastIndex((f) => !keep.has(findingKey(f)));
    if (i < 0) break;
    envelope.findings.splice(i, 1);
  }
  if (size() > ENVELOPE_BYTES_LIMIT) {
    envelope.findings = envelope.findings.map((f) => ({ ...f, evidence: f.evidence.slice(0, 2) }));
  }
  return envelope;
}
