import { clip, ENVELOPE_EVIDENCE_PER_FINDING, EVIDENCE_TEXT_MAX } from '../../limits.js';
import type { LogPort } from '../../logging/port.js';
import type { Finding } from '../envelope/findings.js';
import { FindingSchema } from '../envelope/findings.js';
import { dedupeFindings } from '../rank/root-cause.js';
import { scrubText } from '../scrub.js';
import type { Analyzer, AnalyzerContext } from './analyzer.js';

/**
 * Analysis: every analyzer a template names runs over the gathered context. What an analyzer produces is validated,
 * bounded and scrubbed here, in one place, whoever calls: the engine and the analyzer tests take the same path.
 */

export type AnalyzerRegistry = ReadonlyMap<string, Analyzer> | Readonly<Record<string, Analyzer>>;

export type AnalysisLogger = Pick<LogPort, 'warn'>;

const MAX_MESSAGE = 500;

export function lookupAnalyzer(registry: AnalyzerRegistry, name: string): Analyzer | undefined {
  if (registry instanceof Map) return registry.get(name);
  return Object.hasOwn(registry, name) ? (registry as Record<string, Analyzer>)[name] : undefined;
}

/** Run analyzers over one context: valid, scrubbed, deduplicated findings, worst first. */
export function runAnalyzers(
  analyzers: readonly Analyzer[],
  ctx: AnalyzerContext,
  logger: AnalysisLogger = { warn: () => {} },
): Finding[] {
  const findings: Finding[] = [];
  for (const analyzer of analyzers) {
    let produced: unknown[];
    try {
      produced = analyzer.analyze(ctx);
    } catch (error) {
      // One analyzer's bug must not cost the operator the rest of the triage.
      logger.warn(`Analyzer ${analyzer.name} failed: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    for (const input of produced) {
      const parsed = FindingSchema.safeParse(input, { jitless: true });
      if (parsed.success) findings.push(bounded(parsed.data));
      else
        logger.warn(`Analyzer ${analyzer.name} produced an invalid finding: ${parsed.error.issues[0]?.message ?? ''}`);
    }
  }
  return dedupeFindings(findings);
}

function bounded(f: Finding): Finding {
  return {
    ...f,
    message: clip(scrubText(f.message), MAX_MESSAGE),
    evidence: [...new Set(f.evidence.map((e) => clip(scrubText(e), EVIDENCE_TEXT_MAX)))].slice(
      0,
      ENVELOPE_EVIDENCE_PER_FINDING,
    ),
    confidence: Math.round(f.confidence * 100) / 100,
  };
}
