import type { RankedCauseWithFinding } from '../rank/root-cause.js';
import type { SafetyClassifiedAction, TriageEnvelope } from './envelope.js';
import { type Finding, SEVERITY_ORDER } from './findings.js';

/**
 * The three ADR-023 rubrics. Each is a small pure rule so that an operator can predict it:
 * - confidence: Low whenever evidence completeness is below the template's threshold, whatever the findings say;
 * - priority: from the worst severity that is a fault (info findings never raise priority);
 * - safety: from the most dangerous next action on offer.
 */

export type Rubrics = TriageEnvelope['rubrics'];

/** A root cause at or above this confidence, with complete evidence, earns High. */
const HIGH_CONFIDENCE = 0.75;

export function confidenceRubric(
  completeness: number,
  threshold: number,
  causes: readonly RankedCauseWithFinding[],
): Rubrics['confidence'] {
  if (completeness < threshold) return 'Low';
  const top = causes[0];
  // Nothing wrong seen with enough evidence: a reasoned "looks healthy", but absence of a fault is weaker proof.
  if (!top) return completeness >= 1 ? 'High' : 'Medium';
  return top.confidence >= HIGH_CONFIDENCE && completeness >= 1 ? 'High' : 'Medium';
}

export function priorityRubric(findings: readonly Finding[]): Rubrics['priority'] {
  const worst = findings.reduce((max, f) => Math.max(max, SEVERITY_ORDER[f.severity]), 0);
  if (worst >= SEVERITY_ORDER.critical) return 'P1';
  if (worst >= SEVERITY_ORDER.high) return 'P2';
  if (worst >= SEVERITY_ORDER.medium) return 'P3';
  return 'P4';
}

export function safetyRubric(actions: readonly SafetyClassifiedAction[]): Rubrics['safety'] {
  if (actions.some((a) => a.safety === 'DANGEROUS')) return 'BLOCK';
  if (actions.some((a) => a.type === 'mutating' || a.safety === 'REQUIRES_APPROVAL')) return 'REQUIRES_APPROVAL';
  return 'ALLOW';
}
