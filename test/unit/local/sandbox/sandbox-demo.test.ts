import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeScenarios, DemoComposeError } from '../../../../local/demo/compose.js';
import { DEMO_NAMESPACES, DEMO_SNAPSHOT } from '../../../../local/demo/index.js';
import { createClusterReader } from '../../../../src/cluster/reader.js';
import { loadSnapshotFiles, snapshotNow } from '../../../../src/cluster/snapshot.js';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { kubeconfigYaml } from '../../../../src/snapshot-api/kubeconfig.js';
import { type SnapshotServer, startSnapshotServer } from '../../../../src/snapshot-api/server.js';
import { silentLogger } from '../../../../src/triage/engine.js';
import { triage } from '../../../../src/triage/index.js';

describe('demo cluster composition', () => {
  const pod = (namespace: string, created: string, finished: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace, creationTimestamp: created },
    status: { containerStatuses: [{ name: 'c', lastState: { terminated: { finishedAt: finished } } }] },
  });

  it('shifts every scenario so that all end at the same instant, logs included', () => {
    const { objects, logs } = composeScenarios(
      [
        {
          name: 'a',
          objects: [pod('a', '2025-01-01T09:00:00Z', '2025-01-01T10:00:00.123Z')],
          logs: { 'a/p/c': '2025-01-01T09:59:59Z boom\n' },
        },
        { name: 'b', objects: [pod('b', '2025-06-01T11:30:00Z', '2025-06-01T12:00:00Z')], logs: {} },
      ],
      new Date('2025-11-21T10:00:00Z'),
    );
    expect(objects.map((o) => o.metadata.creationTimestamp)).toEqual([
      '2025-11-21T08:59:59.877Z',
      '2025-11-21T09:30:00Z',
    ]);
    expect(snapshotNow(objects)?.toISOString()).toBe('2025-11-21T10:00:00.000Z');
    expect(JSON.stringify(objects[0])).toContain('"finishedAt":"2025-11-21T10:00:00.000Z"');
    expect(logs['a/p/c']).toBe('2025-11-21T09:59:58.877Z boom\n');
  });

  it('refuses scenarios that share an object', () => {
    const object = pod('x', '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z');
    expect(() =>
      composeScenarios(
        [
          { name: 'a', objects: [object], logs: {} },
          { name: 'b', objects: [object], logs: {} },
        ],
        new Date(),
      ),
    ).toThrow(DemoComposeError);
  });
});

describe('the demo cluster npm start serves', () => {
  let server: SnapshotServer;
  beforeAll(async () => {
    const { objects, logs } = await loadSnapshotFiles(DEMO_SNAPSHOT);
    server = await startSnapshotServer({ objects, logs, port: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const demo of DEMO_NAMESPACES) {
    it(`${demo.namespace}: "${demo.try}" finds ${demo.expectedRootCause ?? 'nothing wrong'}`, async () => {
      const reader = createClusterReader({
        kubeconfig: { yaml: kubeconfigYaml({ server: server.url }) },
        requestTimeoutMs: 5_000,
      });
      const envelope = await triage({ text: demo.try.replace(/^\/triage\s+/, '') }, { reader, logger: silentLogger });
      expect(envelope.routing.namespace).toBe(demo.namespace);
      expect(envelope.rootCause[0]?.code).toBe(demo.expectedRootCause);
      expect(envelope.evidence.completeness).toBe(1);
    });
  }
});
