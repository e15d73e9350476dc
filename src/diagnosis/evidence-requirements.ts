import type { EvidenceItem } from './evidence.js';
import { latest } from './evidence.js';
import { type DiagnosticState, type EvidenceRequirement, evidenceLabel, STATE_MACHINE } from './state-machine.js';

/** What a state asks of the evidence, what is still missing, and the one completeness figure shown everywhere. */

export function countEvidence(evidence: readonly EvidenceItem[], requirement: EvidenceRequirement): number {
  const floor = requirement.newerThan ? latest(evidence, requirement.newerThan)?.at : undefined;
  const have = evidence.filter(
    (e) =>
      e.type === requirement.type &&
      (!floor || e.at >= floor) &&
      (requirement.source === undefined || e.source === requirement.source),
  ).length;
  const kinds = requirement.orKinds;
  if (!kinds || have === 0 || have >= requirement.minCount) return have;
  // The record of a triage run says that it ran, not how the fault shows: it is no kind of evidence about the fault.
  const seen = new Set(
    evidence.filter((e) => kinds.includes(e.type) && !e.id.startsWith('triage:')).map((e) => e.type),
  );
  return Math.max(have, seen.size);
}

export interface EvidenceGapItem extends EvidenceRequirement {
  have: number;
  label: string;
}

/** What the state still needs before the session may move on. */
export function missingEvidence(state: DiagnosticState, evidence: readonly EvidenceItem[]): EvidenceGapItem[] {
  return STATE_MACHINE[state].exitRequirements
    .map((r) => ({ ...r, have: countEvidence(evidence, r), label: evidenceLabel(r.type) }))
    .filter((r) => r.have < r.minCount);
}

/** How complete the evidence is, against the threshold that makes it complete enough. */
export interface EvidenceFigure {
  value: number;
  threshold: number;
}

/**
 * The one evidence figure of a session: how much of what its template needs the latest triage could read (ADR-023's
 * completeness, against the template's threshold). The envelope shows it, `/triage status` shows it, and the plan
 * review and fix validation judge by it. Where the session stands in the workflow is a different question, answered
 * by the state and what it still needs (`missingEvidence`), never by a second percentage.
 */
export function evidenceFigure(evidence: readonly EvidenceItem[]): EvidenceFigure | undefined {
  let triage: EvidenceItem | undefined;
  for (const e of evidence) {
    if (e.completeness !== undefined && e.id.startsWith('triage:') && (!triage || e.at >= triage.at)) triage = e;
  }
  return triage?.completeness ? { ...triage.completeness } : undefined;
}

export function formatMissing(gaps: readonly EvidenceGapItem[]): string {
  return gaps
    .map((g) => {
      const alternative = g.orKinds && g.minCount > 1 ? `, or one seen in ${g.minCount} kinds of evidence` : '';
      return `${g.label} (${g.have}/${g.minCount}, ${g.quality}${alternative})`;
    })
    .join(', ');
}
