import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadSnapshotFiles } from '../../../src/cluster/snapshot.js';
import { type TriageEnvelope, TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';
import { pvcScenario, triageAt, withSnapshotServer } from '../../support/triage-helpers.js';

/**
 * A cluster that misbehaves must still produce an envelope within the deadline, one that says what it could not
 * see and why, and that is honest about its confidence.
 */

const request = { text: 'Quick triage PVC binding in student03', timeoutMs: 2_000 };

/** What each evidence type is read from, as the gap's detail names it. */
const READS: Record<string, string> = {
  pvcs: 'persistentvolumeclaims',
  events: 'events',
  storageclasses: 'storageclasses',
  persistentvolumes: 'persistentvolumes',
};

/** `missing` lists what is missing; every entry has a gap that says which read failed and why. */
function expectExplained(envelope: TriageEnvelope, why: RegExp): void {
  expect(envelope.evidence.missing.length).toBeGreaterThan(0);
  for (const type of envelope.evidence.missing) {
    const gaps = envelope.evidence.gaps.filter((g) => g.type === type);
    expect({ type, gaps: gaps.length > 0 }).toEqual({ type, gaps: true });
    for (const gap of gaps) {
      expect(gap.detail).toContain(READS[type] ?? type);
      expect(gap.detail).toMatch(why);
    }
  }
  const summarized = envelope.summary.match(/missing ([^)]*)\)/)?.[1] ?? '';
  for (const type of envelope.evidence.missing) expect(summarized).toContain(type);
}

describe('triage against a misbehaving API server', () => {
  it('reports a healthy read as complete (baseline)', async () => {
    const envelope = await withSnapshotServer({ objects: pvcScenario() }, (server) => triageAt(server.url, request));
    expect(envelope.evidence.completeness).toBe(1);
    expect(envelope.rootCause[0]?.code).toBe('PVC_NO_DEFAULT_STORAGECLASS');
    expect(envelope.rubrics.confidence).not.toBe('Low');
  });

  it('returns an envelope when the API server is down', async () => {
    const url = await withSnapshotServer({ objects: [] }, async (server) => server.url);
    const envelope = await triageAt(url, request);
    expect(TriageEnvelopeSchema.safeParse(envelope).success).toBe(true);
    expect(envelope.evidence.completeness).toBe(0);
    expect(envelope.evidence.missing).toEqual(['pvcs', 'events', 'storageclasses', 'persistentvolumes']);
    expect(new Set(envelope.evidence.gaps.map((g) => g.reason))).toEqual(new Set(['unreachable']));
    expect(envelope.rubrics.confidence).toBe('Low');
    expect(envelope.rootCause).toEqual([]);
    expect(envelope.summary).toMatch(/Evidence incomplete \(0\/4/);
    expectExplained(envelope, /cannot reach the API server/);
    expect(envelope.summary).toMatch(/could not be read, so nothing can be concluded/);
  });

  it('returns what it has when the API server hangs past the deadline', async () => {
    const envelope = await withSnapshotServer(
      {
        objects: pvcScenario(),
        faults: [{ match: { resource: 'persistentvolumes' }, effect: { type: 'hang' } }],
      },
      (server) => triageAt(server.url, { ...request, timeoutMs: 1_000 }, 10_000),
    );
    expect(envelope.execution.timedOut).toBe(true);
    expect(envelope.evidence.missing).toEqual(['persistentvolumes']);
    expect(envelope.evidence.gaps).toContainEqual(
      expect.objectContaining({ type: 'persistentvolumes', reason: 'timeout' }),
    );
    expect(envelope.evidence.completeness).toBeLessThan(envelope.evidence.threshold);
    expect(envelope.rubrics.confidence).toBe('Low');
    expect(envelope.summary).toMatch(/deadline passed/);
    expectExplained(envelope, /timed out|deadline/);
  });

  it('names the kind it was forbidden to read', async () => {
    const envelope = await withSnapshotServer(
      {
        objects: pvcScenario(),
        faults: [{ match: { resource: 'storageclasses' }, effect: { type: 'status', status: 403 } }],
      },
      (server) => triageAt(server.url, request),
    );
    expect(envelope.evidence.missing).toEqual(['storageclasses']);
    expect(envelope.evidence.gaps).toEqual([
      expect.objectContaining({
        type: 'storageclasses',
        reason: 'forbidden',
        detail: expect.stringContaining('storageclasses'),
      }),
    ]);
    expect(envelope.evidence.completeness).toBe(0.75);
    expect(envelope.rubrics.confidence).toBe('Low');
    // Without StorageClasses the analyzer cannot claim "no default class", and mutating advice is withheld.
    expect(envelope.rootCause.map((c) => c.code)).not.toContain('PVC_NO_DEFAULT_STORAGECLASS');
    expect(envelope.nextActions.every((a) => a.type === 'read-only')).toBe(true);
    expectExplained(envelope, /forbidden/);
  });

  it('survives server errors on some requests', async () => {
    const envelope = await withSnapshotServer(
      {
        objects: pvcScenario(),
        faults: [
          { match: { resource: 'events' }, effect: { type: 'status', status: 500 } },
          { match: { resource: 'persistentvolumes' }, effect: { type: 'status', status: 503 } },
        ],
      },
      (server) => triageAt(server.url, request),
    );
    expect(envelope.evidence.missing).toEqual(['events', 'persistentvolumes']);
    // The required evidence leads; what else failed (the sweep's node events) is listed too, never hidden.
    const gaps = envelope.evidence.gaps.map((g) => [g.type, g.reason]);
    expect(gaps.slice(0, 2)).toEqual([
      ['events', 'server-error'],
      ['persistentvolumes', 'server-error'],
    ]);
    expect(gaps.every(([, reason]) => reason === 'server-error')).toBe(true);
    expect(envelope.evidence.completeness).toBe(0.5);
    expect(envelope.rubrics.confidence).toBe('Low');
    expectExplained(envelope, /HTTP 50[03]|failed/);
  });

  it('stays deterministic under a seeded random fault rate', async () => {
    const run = () =>
      withSnapshotServer({ objects: pvcScenario(), faultRate: 0.4, seed: 7 }, (server) =>
        triageAt(server.url, request),
      );
    const [a, b] = [await run(), await run()];
    const strip = (e: typeof a) => ({ ...e, execution: { ...e.execution, durationMs: 0 } });
    expect(strip(a)).toEqual(strip(b));
    expect(TriageEnvelopeSchema.safeParse(a).success).toBe(true);
  });

  it('answers "unknown: could not read pods", never "healthy", when the pods list is refused or times out', async () => {
    const file = fileURLToPath(new URL('../../fixtures/snapshots/healthy.yaml', import.meta.url));
    const { objects } = await loadSnapshotFiles(file);
    const healthy = { text: 'is wiki healthy?', namespace: 'wiki', timeoutMs: 2_000 };
    const whole = await withSnapshotServer({ objects }, (server) => triageAt(server.url, healthy));
    expect(whole.summary).toMatch(/healthy, no current fault/);
    for (const effect of [{ type: 'status', status: 403 } as const, { type: 'hang' } as const]) {
      const envelope = await withSnapshotServer(
        { objects, faults: [{ match: { resource: 'pods' }, effect }] },
        (server) => triageAt(server.url, { ...healthy, timeoutMs: 1_500 }, 10_000),
      );
      expect(envelope.rootCause).toEqual([]);
      expect(envelope.summary).toMatch(/unknown: could not read pods/);
      expect(envelope.summary).not.toMatch(/healthy, no current fault/);
      expect(envelope.evidence.missing).toContain('pods');
      expect(envelope.evidence.gaps.some((g) => g.type === 'pods')).toBe(true);
    }
  });
});
