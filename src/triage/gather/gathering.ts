import { setMaxListeners } from 'node:events';
import { newestObservedTime } from '../../cluster/observed-time.js';
import { RESOURCES } from '../../cluster/resources.js';
import { logKey } from '../../cluster/snapshot.js';
import type { ClusterReader, KubeObject, ResourceKind } from '../../cluster/types.js';
import { clip } from '../../limits.js';
import type { EvidenceGap } from '../envelope/envelope.js';
import type { TriageTemplate } from '../templates/template-schema.js';
import type { ReadOutcome } from './rounds.js';
import { executeRound } from './rounds.js';

/**
 * Gathering: a template's rounds, run within the step budget and the deadline, and what they brought back:
 * which evidence types are present or missing (and why), and every object and log indexed for the analyzers.
 */

export interface Gathered {
  outcomes: ReadOutcome[];
  stepsExecuted: number;
  requests: number;
  timedOut: boolean;
  /** Rounds not run, and why. */
  skipped: Array<{ round: TriageTemplate['rounds'][number]; reason: 'step-budget' | 'timeout' }>;
}

export async function gather(
  template: TriageTemplate,
  namespace: string,
  stepBudget: number,
  timeoutMs: number,
  reader: ClusterReader,
): Promise<Gathered> {
  const controller = new AbortController();
  // Every read of a round listens to the one deadline; a sweep's round holds dozens.
  setMaxListeners(0, controller.signal);
  const timer = setTimeout(
    () => controller.abort(new DOMException('triage deadline passed', 'TimeoutError')),
    timeoutMs,
  );
  const previous = new Map<string, ReadOutcome[]>();
  const gathered: Gathered = { outcomes: [], stepsExecuted: 0, requests: 0, timedOut: false, skipped: [] };
  try {
    for (const [i, round] of template.rounds.entries()) {
      if (i >= stepBudget) {
        gathered.skipped.push({ round, reason: 'step-budget' });
        continue;
      }
      if (controller.signal.aborted) {
        gathered.skipped.push({ round, reason: 'timeout' });
        continue;
      }
      gathered.stepsExecuted++;
      const outcomes = await executeRound(round, {
        reader,
        namespace,
        signal: controller.signal,
        previous,
        onRequest: () => {
          gathered.requests++;
        },
      });
      for (const o of outcomes) {
        const list = previous.get(o.readId) ?? [];
        list.push(o);
        previous.set(o.readId, list);
      }
      gathered.outcomes.push(...outcomes);
    }
  } finally {
    clearTimeout(timer);
    gathered.timedOut = controller.signal.aborted;
    // Let a reader that honours the signal stop whatever is still in flight.
    controller.abort();
  }
  return gathered;
}

export interface EvidenceAssessment {
  completeness: number;
  threshold: number;
  present: string[];
  missing: string[];
  gaps: EvidenceGap[];
}

export function assessEvidence(template: TriageTemplate, gathered: Gathered): EvidenceAssessment {
  const required = [...new Set(template.evidence.required)];
  const collected = new Set(gathered.outcomes.filter((o) => o.status !== 'failed').map((o) => o.evidence));
  const declared = new Set(template.rounds.flatMap((r) => r.reads.map((read) => read.evidence)));
  const others = [...declared].filter((t) => !required.includes(t) && collected.has(t));
  const present = [...required.filter((t) => collected.has(t)), ...others];
  const missing = required.filter((t) => !collected.has(t));

  const gaps: EvidenceGap[] = [];
  const seen = new Set<string>();
  const add = (gap: EvidenceGap) => {
    const key = `${gap.type}|${gap.reason}`;
    if (seen.has(key)) return;
    seen.add(key);
    gaps.push({ ...gap, detail: clip(gap.detail, 200) });
  };
  const uncollected = [...required, ...[...declared].filter((t) => !required.includes(t))].filter(
    (t) => !collected.has(t),
  );
  for (const type of uncollected) {
    const failures = gathered.outcomes.filter((o) => o.evidence === type && o.status === 'failed');
    for (const f of failures)
      if (f.status === 'failed') add({ type, reason: f.reason, detail: `${f.label}: ${f.detail}` });
    for (const { round, reason } of gathered.skipped) {
      if (!round.reads.some((r) => r.evidence === type)) continue;
      add({
        type,
        reason,
        detail:
          reason === 'step-budget'
            ? `round "${round.name}" is beyond the step budget`
            : `round "${round.name}" did not start before the deadline`,
      });
    }
    if (!declared.has(type)) add({ type, reason: 'not-observed', detail: 'no read in this template collects it' });
  }
  const completeness =
    required.length === 0 ? 1 : Math.round(((required.length - missing.length) / required.length) * 100) / 100;
  return { completeness, threshold: template.evidence.threshold, present, missing, gaps };
}

export interface OutcomeIndex {
  objects: Map<ResourceKind, KubeObject[]>;
  /** Kinds where a list stopped at its limit. */
  limited: Set<ResourceKind>;
  logs: Map<string, string>;
  unavailable: Set<ResourceKind>;
}

export function indexOutcomes(outcomes: readonly ReadOutcome[]): OutcomeIndex {
  const objects = new Map<ResourceKind, KubeObject[]>();
  const seen = new Map<ResourceKind, Set<string>>();
  const logs = new Map<string, string>();
  const failedKinds = new Set<ResourceKind>();
  const limited = new Set<ResourceKind>();
  for (const o of outcomes) {
    if (o.status === 'failed') {
      if (o.kind !== 'logs') failedKinds.add(o.kind);
      continue;
    }
    if (o.status !== 'ok') continue;
    if (o.kind === 'logs') {
      logs.set(logKey(o.log.namespace, o.log.pod, o.log.container ?? '', o.log.previous), o.log.text);
      continue;
    }
    if (o.limited) limited.add(o.kind);
    const list = objects.get(o.kind) ?? [];
    const keys = seen.get(o.kind) ?? new Set<string>();
    const kind = RESOURCES[o.kind].kind;
    // Thousands of objects, once per process and uncompiled: an indexed loop allocates nothing per step.
    for (let i = 0; i < o.objects.length; i++) {
      const raw = o.objects[i] as KubeObject;
      // Analyzers index by `kind`; a reader that omits it on list items still gets its objects analyzed.
      const obj = raw.kind === kind ? raw : { ...raw, kind };
      const key = obj.metadata.uid ?? `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
      if (keys.has(key)) continue;
      keys.add(key);
      list.push(obj);
    }
    objects.set(o.kind, list);
    seen.set(o.kind, keys);
  }
  // A kind counts as unavailable only when no read of it succeeded: partial evidence is still evidence.
  const unavailable = new Set([...failedKinds].filter((k) => !objects.has(k)));
  return { objects, limited, logs, unavailable };
}

/** The newest instant any object read was observed at: a replayed snapshot's "now" (see observed-time.ts). */
export function newestTimestamp(outcomes: readonly ReadOutcome[]): Date | undefined {
  let newest = Number.NEGATIVE_INFINITY;
  for (const o of outcomes) {
    if (o.status !== 'ok' || o.kind === 'logs') continue;
    for (let i = 0; i < o.objects.length; i++) {
      const t = newestObservedTime(o.objects[i]);
      if (t > newest) newest = t;
    }
  }
  return Number.isFinite(newest) ? new Date(newest) : undefined;
}

/**
 * Whether the analysed namespace's pods were listed in full (no selector, not cut off): only then does a pod missing
 * from the list prove it no longer exists.
 */
export function podsListedInFull(template: TriageTemplate, gathered: Gathered): boolean {
  const full = new Set(
    template.rounds.flatMap((r) =>
      r.reads
        .filter(
          (read) =>
            read.kind === 'pods' &&
            read.scope === 'namespace' &&
            !read.namespace &&
            !read.forEach &&
            !read.name &&
            !read.labelSelector &&
            !read.fieldSelector,
        )
        .map((read) => read.id),
    ),
  );
  return gathered.outcomes.some((o) => full.has(o.readId) && o.status === 'ok' && o.kind === 'pods' && !o.limited);
}
