import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../../src/cli/commands/stats.js';
import { collectMetricsFromStore, type MetricsSource } from '../../../src/memory/collect.js';
import { memoryMatchUsedEvent, panicSignalEvent } from '../../../src/memory/metrics.js';
import { MalformedRecordError, StoreValidationError } from '../../../src/store/errors.js';
import type { SessionRecord } from '../../../src/store/sessions.js';
import type { TimelineEvent } from '../../../src/store/timeline.js';

const T0 = Date.parse('2025-08-10T04:00:00.000Z');
const iso = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

function session(id: string, createdMin: number, closedMin: number): SessionRecord {
  return {
    id,
    state: 'GATHERING',
    status: 'resolved',
    intent: 'pvc-binding',
    namespace: 'payments',
    channelId: 'C1',
    requester: 'U1',
    version: 3,
    createdAt: iso(createdMin),
    updatedAt: iso(closedMin),
    closedAt: iso(closedMin),
    evidence: { completeness: 0.75, items: [], findingCodes: [] },
    hypotheses: [],
    resumeCount: 0,
    handoffCount: 0,
    memoryMatchIds: [],
  };
}

function event(sessionId: string, minute: number, e: { type: string; data: Record<string, unknown> }): TimelineEvent {
  return { sessionId, at: iso(minute), seq: minute, type: e.type, actor: 'calmops', data: e.data };
}

/** A fake source that records every call, so the test can check the loader's request budget. */
function source(sessions: SessionRecord[], timelines: Record<string, TimelineEvent[] | Error>) {
  const calls = { listRecent: [] as unknown[], timeline: [] as Array<{ id: string; limit?: number }>, inFlight: 0 };
  let maxInFlight = 0;
  const repo: MetricsSource = {
    sessions: {
      async listRecent(status, options) {
        calls.listRecent.push({ status, ...options });
        return sessions.slice(0, options.limit);
      },
    },
    timeline: {
      async list(id, options) {
        calls.timeline.push({ id, limit: options.limit });
        calls.inFlight++;
        maxInFlight = Math.max(maxInFlight, calls.inFlight);
        await new Promise((r) => setTimeout(r, 1));
        calls.inFlight--;
        const t = timelines[id] ?? [];
        if (t instanceof Error) throw t;
        return t.slice(0, options.limit);
      },
    },
  };
  return { repo, calls, maxInFlight: () => maxInFlight };
}

describe('collectMetricsFromStore', () => {
  it('reads one bounded list of resolved sessions and one bounded timeline per session', async () => {
    const sessions = Array.from({ length: 20 }, (_, i) => session(`S${i}`, i * 10, i * 10 + 30));
    const timelines: Record<string, TimelineEvent[]> = {
      S0: [
        event(
          'S0',
          5,
          panicSignalEvent(
            {
              type: 'bypassing_diagnostics',
              severity: 'critical',
              at: iso(5),
              description: 'write early',
              evidence: {},
            },
            true,
          ),
        ),
        event('S0', 6, memoryMatchUsedEvent('M1', 0.9, 'U1')),
      ],
      S1: Array.from({ length: 5 }, (_, i) => event('S1', 12 + i, { type: 'tool.requested', data: {} })),
    };
    const { repo, calls, maxInFlight } = source(sessions, timelines);
    const since = new Date(T0);
    const out = await collectMetricsFromStore(repo, {
      limit: 12,
      eventsPerSession: 5,
      concurrency: 3,
      since,
      now: new Date(T0 + 86_400_000),
    });
    expect(calls.listRecent).toEqual([{ status: 'resolved', limit: 12, since }]);
    expect(calls.timeline).toHaveLength(12);
    expect(calls.timeline.every((c) => c.limit === 5)).toBe(true);
    expect(maxInFlight()).toBeLessThanOrEqual(3);
    expect(out.timelineQueries).toBe(12);
    expect(out.eventsRead).toBe(7);
    expect(out.truncatedTimelines).toBe(1);
    expect(out.window).toEqual({
      since: since.toISOString(),
      limit: 12,
      resolvedSessions: 12,
      oldestResolvedAt: iso(30),
      newestResolvedAt: iso(140),
    });
    expect(out.metrics.sessions.resolved).toBe(12);
    expect(out.metrics.timeToResolution).toMatchObject({ count: 12, p50Ms: 30 * 60_000 });
    expect(out.metrics.evidenceCompletenessAtResolution).toMatchObject({ mean: 0.75 });
    expect(out.metrics.knowledgeReuse).toMatchObject({ usedMemoryMatch: 1, resolved: 12 });
    expect(out.metrics.interventions.byType.bypassing_diagnostics).toMatchObject({ total: 1, blocked: 1 });
  });

  it('keeps counting a session whose timeline cannot be read, and says which one', async () => {
    const { repo } = source([session('S0', 0, 10), session('S1', 0, 20)], {
      S1: new MalformedRecordError({ PK: 'SESSION#S1', SK: 'EVENT#x#1' }, []),
    });
    const out = await collectMetricsFromStore(repo);
    expect(out.metrics.sessions.resolved).toBe(2);
    expect(out.skippedTimelines).toEqual([{ sessionId: 'S1', reason: expect.stringContaining('SESSION#S1') }]);
  });

  it('refuses unbounded or nonsensical options before reading anything', async () => {
    const { repo, calls } = source([], {});
    await expect(collectMetricsFromStore(repo, { limit: 5000 })).rejects.toBeInstanceOf(StoreValidationError);
    await expect(collectMetricsFromStore(repo, { eventsPerSession: 0 })).rejects.toThrow(/eventsPerSession/);
    expect(calls.listRecent).toHaveLength(0);
  });
});

describe('formatDuration', () => {
  it('reads like a clock a person would say out loud', () => {
    expect(formatDuration(null)).toBe('-');
    expect(formatDuration(45_000)).toBe('45s');
    expect(formatDuration(12 * 60_000 + 30_000)).toBe('12m 30s');
    expect(formatDuration(3 * 3_600_000 + 5 * 60_000)).toBe('3h 05m');
    expect(formatDuration(52 * 3_600_000)).toBe('2d 4h');
  });
});
