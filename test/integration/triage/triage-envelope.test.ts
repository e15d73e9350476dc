import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadSnapshotFiles, snapshotNow } from '../../../src/cluster/snapshot.js';
import type { KubeObject } from '../../../src/cluster/types.js';
import { ENVELOPE_BYTES_LIMIT } from '../../../src/triage/engine.js';
import type { TriageEnvelope } from '../../../src/triage/envelope/envelope.js';
import { TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';
import { triageAt, withSnapshotServer } from '../../support/triage-helpers.js';

const strip = (e: TriageEnvelope) => ({ ...e, execution: { ...e.execution, durationMs: 0 } });

describe('the triage envelope', () => {
  it('is the same for the same input, timing aside, for every fixture', async () => {
    const dir = fileURLToPath(new URL('../../fixtures/snapshots/', import.meta.url));
    const files = readdirSync(dir).filter((f) => /--.+\.yaml$/.test(f));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const snapshot = await loadSnapshotFiles(join(dir, file));
      const intent = file.split('--')[0] as string;
      const namespaces = snapshot.objects.map((o) => o.metadata.namespace).filter((n): n is string => Boolean(n));
      const request = {
        intent,
        namespace: namespaces[0] ?? 'default',
        now: snapshotNow(snapshot.objects) ?? new Date(0),
      };
      const [a, b] = await withSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs }, async (server) => [
        await triageAt(server.url, request),
        await triageAt(server.url, request),
      ]);
      expect({ file, envelope: strip(a!) }).toEqual({ file, envelope: strip(b!) });
    }
  });

  it('stays under 32 KB when a namespace is full of failing pods with long logs', async () => {
    const objects: KubeObject[] = [];
    const logs: Record<string, string> = {};
    for (let i = 0; i < 400; i++) {
      const name = `api-${String(i).padStart(3, '0')}`;
      objects.push({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'big', uid: `u-${i}`, creationTimestamp: '2025-03-01T10:00:00Z' },
        spec: { containers: [{ name: 'app', image: 'registry.example/api:2' }] },
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2025-03-01T10:01:00Z' }],
          containerStatuses: [
            {
              name: 'app',
              ready: false,
              restartCount: 20 + (i % 7),
              state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s restarting failed container' } },
              lastState: {
                terminated: {
                  exitCode: 1,
                  reason: 'Error',
                  startedAt: '2025-03-01T10:58:00Z',
                  finishedAt: '2025-03-01T10:58:02Z',
                },
              },
            },
          ],
        },
      });
      logs[`big/${name}/app:previous`] =
        `${'x'.repeat(2000)}\nError: required environment variable DATABASE_URL is not set (${'y'.repeat(3000)})\n`;
      objects.push({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${name}.backoff`, namespace: 'big', uid: `e-${i}` },
        involvedObject: { kind: 'Pod', name, namespace: 'big' },
        reason: 'BackOff',
        message: `Back-off restarting failed container app in pod ${name} ${'z'.repeat(500)}`,
        type: 'Warning',
        count: 40,
        lastTimestamp: '2025-03-01T10:59:00Z',
      });
    }
    const envelope = await withSnapshotServer({ objects, logs }, (server) =>
      triageAt(server.url, { intent: 'crashloop-analysis', namespace: 'big' }),
    );
    expect(TriageEnvelopeSchema.safeParse(envelope).success).toBe(true);
    expect(envelope.findings.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(JSON.stringify(envelope))).toBeLessThan(ENVELOPE_BYTES_LIMIT);
    expect(envelope.evidence.workloads?.pods).toMatchObject({ total: 400 });
  });
});
