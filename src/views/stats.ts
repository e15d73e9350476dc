import type { DiagnosisMetrics } from '../memory/metrics.js';
import { context, fields, header, type KnownBlock } from './blocks.js';

function rate(value: number | null): string {
  return value === null ? 'n/a' : `${Math.round(value * 100)}%`;
}

function duration(ms: number | null): string {
  if (ms === null) return 'n/a';
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** ADR-005's success metrics as blocks; shared by `/triage stats` and App Home. */
export function metricsBlocks(metrics: DiagnosisMetrics, scope: string): KnownBlock[] {
  return [
    header('Diagnosis metrics'),
    fields([
      ['Sessions', `${metrics.sessions.total} (${metrics.sessions.open} open, ${metrics.sessions.resolved} resolved)`],
      [
        'Time to resolution',
        `p50 ${duration(metrics.timeToResolution.p50Ms)}, p90 ${duration(metrics.timeToResolution.p90Ms)}`,
      ],
      [
        'Evidence at resolution',
        metrics.evidenceCompletenessAtResolution.mean === null
          ? 'n/a'
          : `mean ${rate(metrics.evidenceCompletenessAtResolution.mean)}, min ${rate(metrics.evidenceCompletenessAtResolution.min)}`,
      ],
      ['Knowledge reuse', `${rate(metrics.knowledgeReuse.rate)} of resolved used a past incident`],
      ['First-time fix', `${rate(metrics.firstTimeFix.rate)} (${metrics.firstTimeFix.validatedSessions} validated)`],
      [
        'Calming interventions',
        `${metrics.interventions.total} (${metrics.interventions.blocked} blocked, ${metrics.interventions.warned} warned)`,
      ],
      [
        'Break-glass',
        `${metrics.breakGlass.granted} granted, postmortems on time ${rate(metrics.breakGlass.postmortemCompliance)}`,
      ],
    ]),
    context(scope),
  ];
}

export function statsView(metrics: DiagnosisMetrics, scope: string): { text: string; blocks: KnownBlock[] } {
  return {
    text: `Diagnosis metrics: ${metrics.sessions.resolved} resolved, knowledge reuse ${rate(metrics.knowledgeReuse.rate)}`,
    blocks: metricsBlocks(metrics, scope),
  };
}
