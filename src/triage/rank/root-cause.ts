import { eventTime } from '../../cluster/event-time.js';
import type { KubeObject } from '../../cluster/types.js';
import type { RankedCause } from '../envelope/envelope.js';
import {
  compareFindings,
  type Finding,
  findingKey,
  type ResourceRef,
  refKey,
  SEVERITY_ORDER,
} from '../envelope/findings.js';
import { alternativesOf, changeOf, groupCauses } from './causes.js';

/**
 * Findings become a ranked root cause by severity × confidence × recency. Recency matters because snapshots and
 * long-lived namespaces carry old, resolved events: a fault whose newest event is hours old must not outrank one
 * that is happening now. A finding that another finding points at (`related`) is upstream of it and ranks a
 * little higher, so "no default StorageClass" leads "pod waits for its claim".
 */

export interface RankedCauseWithFinding extends RankedCause {
  score: number;
  finding: Finding;
}

const SEVERITY_WEIGHT: Readonly<Record<Finding['severity'], number>> = {
  info: 0.1,
  low: 0.3,
  medium: 0.55,
  high: 0.8,
  critical: 1,
};

const UPSTREAM_BOOST = 1.15;
const MINUTE = 60_000;

/** 1 for what is happening now, fading for faults whose newest event is old. */
export function recencyFactor(newest: Date | undefined, now: Date): number {
  if (!newest) return 1; // no dated event: the finding comes from current status
  const age = now.getTime() - newest.getTime();
  if (age <= 15 * MINUTE) return 1;
  if (age <= 60 * MINUTE) return 0.8;
  if (age <= 6 * 60 * MINUTE) return 0.5;
  return 0.25;
}

/** When an Event last happened (src/cluster/event-time.ts), as a Date. */
export function eventDate(e: KubeObject): Date | undefined {
  const at = eventTime(e);
  return at === undefined ? undefined : new Date(at);
}

type InvolvedEvent = KubeObject & { involvedObject?: { kind?: string; name?: string; namespace?: string } };

function newestEventFor(ref: ResourceRef, events: readonly KubeObject[]): Date | undefined {
  let newest: Date | undefined;
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as KubeObject;
    const io = (e as InvolvedEvent).involvedObject;
    if (!io || io.kind !== ref.kind || io.name !== ref.name) continue;
    if (ref.namespace && io.namespace && io.namespace !== ref.namespace) continue;
    const t = eventDate(e);
    if (t && (!newest || t > newest)) newest = t;
  }
  return newest;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export interface RankOptions {
  now: Date;
  events: readonly KubeObject[];
  limit?: number;
  /** Words of the request break ties between faults of similar weight: a factor per finding, 1 when silent. */
  preference?: (finding: Finding) => number;
}

/**
 * The events about each of these object names, in their order: a namespace holds thousands of events about
 * thousands of objects, and the findings ask about a few. Only events with an involvedObject can be about one.
 */
function eventsByName(events: readonly KubeObject[], names: ReadonlySet<unknown>): Map<unknown, KubeObject[]> {
  const byName = new Map<unknown, KubeObject[]>();
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as KubeObject;
    const io = (e as InvolvedEvent).involvedObject;
    if (!io || !names.has(io.name)) continue;
    const list = byName.get(io.name);
    if (list === undefined) byName.set(io.name, [e]);
    else list.push(e);
  }
  return byName;
}

const NO_EVENTS: readonly KubeObject[] = [];

/**
 * The independent root causes, best first: each names the entity to change, what to change in it, the chain to the
 * symptom, and what fails because of it (`impact`), which is never ranked as a cause of its own.
 */
export function rankRootCauses(findings: readonly Finding[], opts: RankOptions): RankedCauseWithFinding[] {
  const referenced = new Set(findings.flatMap((f) => f.related.map(refKey)));
  const current = findings.filter((f) => f.severity !== 'info' && f.stale === undefined);
  const byName = eventsByName(opts.events, new Set(current.map((f) => f.resource.name)));
  const scored = current
    .map((finding) => {
      const events = byName.get(finding.resource.name) ?? NO_EVENTS;
      const recency = recencyFactor(newestEventFor(finding.resource, events), opts.now);
      const upstream =
        referenced.has(refKey(finding.resource)) || (finding.owner && referenced.has(refKey(finding.owner)))
          ? UPSTREAM_BOOST
          : 1;
      const preference = opts.preference?.(finding) ?? 1;
      const score = SEVERITY_WEIGHT[finding.severity] * finding.confidence * recency * upstream * preference;
      return { finding, score, confidence: round2(finding.confidence * recency) };
    })
    .sort((a, b) => b.score - a.score || compareFindings(a.finding, b.finding));
  return groupCauses(scored, opts.limit ?? 5).map(({ lead: s, impact }, i) => {
    const alternatives = alternativesOf(s.finding);
    return {
      rank: i + 1,
      code: s.finding.code,
      summary: s.finding.message,
      confidence: s.confidence,
      // The root cause names what a person must change; the chain leads from it to where the symptom shows.
      resource: s.finding.owner ?? s.finding.resource,
      chain: chainOf(s.finding),
      change: changeOf(s.finding),
      impact,
      ...(alternatives.length > 0 ? { alternatives } : {}),
      score: round2(s.score),
      finding: s.finding,
    };
  });
}

function chainOf(f: Finding): ResourceRef[] {
  const chain = f.owner ? [f.owner, f.resource] : [f.resource];
  for (const r of f.related) if (!chain.some((c) => refKey(c) === refKey(r))) chain.push(r);
  return chain.slice(0, 6);
}

/** Merge findings that name the same code on the same resource (two analyzers, or two reads of one object). */
export function dedupeFindings(findings: readonly Finding[]): Finding[] {
  const byKey = new Map<string, Finding>();
  for (const f of findings) {
    const key = findingKey(f);
    const seen = byKey.get(key);
    if (!seen) {
      byKey.set(key, { ...f, evidence: [...f.evidence], related: [...f.related], remediation: [...f.remediation] });
      continue;
    }
    const worse = SEVERITY_ORDER[f.severity] > SEVERITY_ORDER[seen.severity];
    byKey.set(key, {
      ...seen,
      ...(seen.owner || f.owner ? { owner: seen.owner ?? f.owner } : {}),
      severity: worse ? f.severity : seen.severity,
      message: worse ? f.message : seen.message,
      confidence: Math.max(seen.confidence, f.confidence),
      evidence: unique([...seen.evidence, ...f.evidence]),
      related: uniqueBy([...seen.related, ...f.related], refKey),
      remediation: unique([...seen.remediation, ...f.remediation]),
    });
  }
  return [...byKey.values()].sort(compareFindings);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function uniqueBy<T>(values: readonly T[], key: (v: T) => string): T[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const k = key(v);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
