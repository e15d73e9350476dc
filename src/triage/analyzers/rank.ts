import type { AnalyzerContext } from '../analyzer.js';
import { type Finding, type FindingInput, FindingSchema, type Severity } from '../findings.js';
import { scrubText } from '../scrub.js';
import { clip } from './events.js';

export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };

export const MAX_EVIDENCE = 5;

function refKey(f: Pick<Finding, 'resource'>): string {
  return `${f.resource.kind}/${f.resource.namespace ?? ''}/${f.resource.name}`;
}

/** Most severe first, then most confident, then code and resource so equal findings keep a stable order. */
export function compareFindings(a: Finding, b: Finding): number {
  const s = SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity];
  if (s !== 0) return s;
  if (a.confidence !== b.confidence) return b.confidence - a.confidence;
  if (a.code !== b.code) return a.code < b.code ? -1 : 1;
  const ar = refKey(a);
  const br = refKey(b);
  return ar < br ? -1 : ar > br ? 1 : 0;
}

/** Validate, bound and scrub what an analyzer produced: at most five evidence strings of at most 300 characters. */
export function normalizeFinding(input: FindingInput): Finding {
  const finding = FindingSchema.parse(input);
  return {
    ...finding,
    message: clip(scrubText(finding.message), 500),
    evidence: [...new Set(finding.evidence.map((e) => clip(scrubText(e))))].slice(0, MAX_EVIDENCE),
    confidence: Math.round(finding.confidence * 100) / 100,
  };
}

/** Run analyzers against one context and return their findings ranked (deterministically). */
export function rankFindings(inputs: readonly FindingInput[]): Finding[] {
  return inputs.map(normalizeFinding).sort(compareFindings);
}

export function runAnalyzers(
  analyzers: readonly { analyze(ctx: AnalyzerContext): FindingInput[] }[],
  ctx: AnalyzerContext,
): Finding[] {
  return rankFindings(analyzers.flatMap((a) => a.analyze(ctx)));
}
