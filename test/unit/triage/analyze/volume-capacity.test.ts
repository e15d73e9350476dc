import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import { storageClass } from '../../../support/analyzers/storage-nodes.js';
import { makePod, NS, run, runningOk } from '../../../support/analyzers/units.js';

const POD = 'orders-db-0';
const LOG_KEY = `${NS}/${POD}/postgres`;
const WAL_FULL =
  '2025-11-21 11:58:41.312 UTC [41] PANIC:  could not write to file "/var/lib/postgresql/wal/pg_wal/xlogtemp.41": No space left on device';

const claim = (name: string, size: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: NS },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'gp3', resources: { requests: { storage: size } } },
  status: { phase: 'Bound', capacity: { storage: size } },
});

const statefulSet: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'orders-db', namespace: NS },
  spec: { replicas: 1 },
  status: { replicas: 1, readyReplicas: 1 },
};

const db = (volumes: Record<string, unknown>[]) =>
  makePod(POD, {
    owner: { kind: 'StatefulSet', name: 'orders-db' },
    node: 'node-a',
    containers: [
      {
        name: 'postgres',
        image: 'docker.io/library/postgres:16.4',
        volumeMounts: [
          { name: 'data', mountPath: '/var/lib/postgresql/data' },
          { name: 'wal', mountPath: '/var/lib/postgresql/wal' },
        ],
      },
    ],
    volumes,
    statuses: [runningOk('postgres', 2)],
    ready: true,
  });

const claims: Record<string, unknown>[] = [
  { name: 'data', persistentVolumeClaim: { claimName: 'data-orders-db-0' } },
  { name: 'wal', persistentVolumeClaim: { claimName: 'wal-orders-db-0' } },
];

const objects = (volumes = claims) => [
  statefulSet,
  db(volumes),
  claim('data-orders-db-0', '100Gi'),
  claim('wal-orders-db-0', '8Gi'),
  storageClass('gp3', 'ebs.csi.aws.com', { allowVolumeExpansion: false }),
];

describe('volume-capacity names the full claim the application writes to', () => {
  it("names the claim mounted at the path in the kernel's error, with its capacity and StorageClass", () => {
    const findings = run(['volume-capacity'], objects(), {
      [`${LOG_KEY}:previous`]: `2025-11-21 11:58:40.001 UTC [1] LOG:  database system is ready to accept connections\n${WAL_FULL}\n`,
    });
    expect(findings.map((f) => f.code)).toEqual(['VOLUME_FULL']);
    const [f] = findings;
    expect(f).toMatchObject({
      analyzer: 'volume-capacity',
      severity: 'high',
      resource: { kind: 'PersistentVolumeClaim', name: 'wal-orders-db-0', namespace: NS },
      related: [{ kind: 'StatefulSet', name: 'orders-db', namespace: NS }],
      remediation: ['expand-volume'],
    });
    expect(f?.message).toBe(
      'PersistentVolumeClaim wal-orders-db-0 (8Gi) is full: StatefulSet orders-db cannot write to it.',
    );
    expect(f?.evidence).toEqual([
      `${POD}/postgres: ${WAL_FULL}`,
      'claim wal-orders-db-0: capacity 8Gi, StorageClass gp3 (no volume expansion)',
    ]);
    expect(f?.change).toContain('StorageClass gp3 must allow volume expansion first');
  });

  it('says nothing when the logs report no full volume, or the full volume is not a claim', () => {
    expect(
      run(['volume-capacity'], objects(), {
        [LOG_KEY]: '2025-11-21 11:58:40.001 UTC [1] LOG:  database system is ready to accept connections\n',
      }),
    ).toEqual([]);
    expect(
      run(
        ['volume-capacity'],
        objects([
          { name: 'data', emptyDir: {} },
          { name: 'wal', emptyDir: {} },
        ]),
        { [LOG_KEY]: WAL_FULL },
      ),
    ).toEqual([]);
  });
});
