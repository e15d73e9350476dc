import { describe, expect, it } from 'vitest';
import { breakGlassAudit, grantOverride, validateBreakGlassRequest } from '../../../src/diagnosis/break-glass.js';
import type { PanicSignal } from '../../../src/diagnosis/panic.js';
import {
  breakGlassEvent,
  computeMetrics,
  fixValidatedEvent,
  memoryMatchUsedEvent,
  panicSignalEvent,
  type TimelineEventLike,
} from '../../../src/memory/metrics.js';
import { at, when } from '../../support/diagnosis-fixtures.js';

const minute = 60;
const signal = (type: PanicSignal['type'], severity: PanicSignal['severity']): PanicSignal => ({
  type,
  severity,
  at: at(0),
  description: 'x',
  evidence: {},
});
const asEvent = (
  sessionId: string,
  seconds: number,
  e: { type: string; data: Record<string, unknown> },
): TimelineEventLike => ({
  sessionId,
  at: at(seconds),
  type: e.type,
  data: e.data,
});

function override(sessionId: string, id: string, grantedAtSeconds: number) {
  const request = validateBreakGlassRequest(
    {
      sessionId,
      requester: 'U1',
      seniorApprover: 'U2',
      justification: 'Payments down for every customer in the EU region',
      timeLimitMinutes: 20,
      skipToState: 'RESOLVING',
    },
    { session: { id: sessionId, state: 'ANALYZING' } },
  );
  return grantOverride(request, { id, approvedBy: 'U2', now: when(grantedAtSeconds) });
}

describe('computeMetrics', () => {
  it('computes every ADR-005 success metric from sessions and timeline events', () => {
    const o1 = override('s1', 'o1', 0);
    const o2 = override('s2', 'o2', 0);
    const o3 = override('s3', 'o3', 0);
    const metrics = computeMetrics({
      now: when(10 * 86_400),
      sessions: [
        {
          id: 's1',
          status: 'resolved',
          createdAt: at(0),
          closedAt: at(10 * minute),
          memoryMatchIds: ['m1'],
          evidenceCompleteness: 0.9,
        },
        {
          id: 's2',
          status: 'resolved',
          createdAt: at(0),
          resolvedAt: at(30 * minute),
          evidence: { completeness: 0.6 },
        },
        { id: 's3', status: 'resolved', createdAt: at(0), closedAt: at(20 * minute) },
        { id: 's4', status: 'open', createdAt: at(0) },
      ],
      events: [
        asEvent('s3', 60, memoryMatchUsedEvent('m9', 0.8, 'U1')),
        asEvent('s1', 1, panicSignalEvent(signal('bypassing_diagnostics', 'critical'), true)),
        asEvent('s1', 2, panicSignalEvent(signal('destructive_without_evidence', 'critical'), true)),
        asEvent('s2', 3, panicSignalEvent(signal('jumping_between_domains', 'medium'), false)),
        asEvent('s1', 0, breakGlassEvent(breakGlassAudit('granted', o1, { at: when(0), actor: 'U2' }))),
        asEvent('s2', 0, breakGlassEvent(breakGlassAudit('granted', o2, { at: when(0), actor: 'U2' }))),
        asEvent('s3', 0, breakGlassEvent(breakGlassAudit('granted', o3, { at: when(0), actor: 'U2' }))),
        asEvent(
          's1',
          86_400,
          breakGlassEvent(breakGlassAudit('review-completed', o1, { at: when(86_400), actor: 'U3' })),
        ),
        asEvent(
          's2',
          7 * 86_400,
          breakGlassEvent(breakGlassAudit('review-completed', o2, { at: when(7 * 86_400), actor: 'U3' })),
        ),
        asEvent('s1', 600, fixValidatedEvent(true, 'ok')),
        asEvent('s2', 600, fixValidatedEvent(false, 'still pending')),
        asEvent('s2', 900, fixValidatedEvent(true, 'ok')),
        { sessionId: 's2', at: at(5), type: 'panic.signal', data: { signalType: 'nonsense' } },
      ],
    });
    expect(metrics.sessions).toEqual({ total: 4, open: 1, resolved: 3 });
    expect(metrics.timeToResolution).toEqual({ count: 3, p50Ms: 20 * 60_000, p90Ms: 30 * 60_000, meanMs: 20 * 60_000 });
    expect(metrics.evidenceCompletenessAtResolution).toEqual({ count: 2, mean: 0.75, min: 0.6 });
    expect(metrics.knowledgeReuse).toEqual({ resolved: 3, usedMemoryMatch: 2, rate: 0.667 });
    expect(metrics.firstTimeFix).toEqual({ validatedSessions: 2, passedFirstTime: 1, rate: 0.5 });
    expect(metrics.interventions.total).toBe(3);
    expect(metrics.interventions.blocked).toBe(2);
    expect(metrics.interventions.warned).toBe(1);
    expect(metrics.interventions.byType.bypassing_diagnostics).toEqual({
      total: 1,
      blocked: 1,
      bySeverity: { low: 0, medium: 0, high: 0, critical: 1 },
    });
    expect(metrics.interventions.byType.rapid_fire_commands.total).toBe(0);
    // o1 reviewed on time, o2 reviewed late, o3 never reviewed.
    expect(metrics.breakGlass).toEqual({
      granted: 3,
      reviewsDue: 3,
      reviewsCompletedOnTime: 1,
      reviewsOverdue: 2,
      postmortemCompliance: 0.333,
    });
    expect(metrics.malformedEvents).toBe(1);
  });

  it('reports null rather than zero when there is nothing to measure', () => {
    const metrics = computeMetrics({ sessions: [], events: [], now: when(0) });
    expect(metrics.timeToResolution.p50Ms).toBeNull();
    expect(metrics.knowledgeReuse.rate).toBeNull();
    expect(metrics.breakGlass.postmortemCompliance).toBeNull();
  });

  it('does not count reviews that are not due yet', () => {
    const o = override('s1', 'o1', 0);
    const metrics = computeMetrics({
      now: when(86_400),
      sessions: [],
      events: [asEvent('s1', 0, breakGlassEvent(breakGlassAudit('granted', o, { at: when(0), actor: 'U2' })))],
    });
    expect(metrics.breakGlass).toMatchObject({ granted: 1, reviewsDue: 0, postmortemCompliance: null });
  });
});
