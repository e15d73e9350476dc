import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import {
  at,
  crashing,
  deployment,
  makePod,
  NS,
  podEvent,
  replicaSet,
  run,
  runningOk,
} from '../../../support/analyzers/units.js';

describe('crashloop reads the evidence', () => {
  const sts = { kind: 'StatefulSet', name: 'sync' };
  const cm: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'sync-config', namespace: NS },
    data: { DB_HOST: 'pg-primary.demo.svc.cluster.local', DB_PORT: '5432' },
  };
  const spec = [{ name: 'sync', image: 'r/sync:1', envFrom: [{ configMapRef: { name: 'sync-config' } }] }];
  const failing = makePod('sync-2', { owner: sts, containers: spec, statuses: [crashing('sync')], node: 'n1' });
  const healthy = ['sync-0', 'sync-1'].map((n) =>
    makePod(n, { owner: sts, containers: spec, statuses: [runningOk('sync')], node: 'n1', ready: true }),
  );
  const log = {
    'demo/sync-2/sync:previous':
      'connecting\nTraceback (most recent call last):\n  File "db.py", line 2\npsycopg2.OperationalError: could not translate host name "pg-primary.demo.svc.cluster.local" to address: Name or service not known',
  };

  it('traces a host that does not exist to the ConfigMap key that names it, and makes the ConfigMap the owner', () => {
    const [f] = run(['crashloop'], [failing, ...healthy, cm], log);
    expect(f).toMatchObject({
      code: 'CONTAINER_CRASHLOOP_CONFIG_ERROR',
      owner: { kind: 'ConfigMap', name: 'sync-config' },
    });
    expect(f?.related).toContainEqual({ kind: 'ConfigMap', name: 'sync-config', namespace: NS });
    expect(f?.message).toContain('set by ConfigMap sync-config key DB_HOST');
    expect(f?.evidence.join('\n')).toContain('could not translate host name');
    expect(f?.evidence.join('\n')).toContain('sync-0, sync-1 of StatefulSet sync are ready');
  });

  it('names the missing Service when Services were read, and leaves an existing Service to the DNS analyzers', () => {
    const svc = (name: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: NS },
    });
    const [missing] = run(['crashloop'], [failing, cm, svc('pg')], log);
    expect(missing?.evidence).toContain('no Service pg-primary in namespace demo (Services there: pg)');
    const [exists] = run(['crashloop'], [failing, cm, svc('pg-primary')], log);
    expect(exists?.code).toBe('CONTAINER_CRASHLOOP');
    expect(exists?.owner).toBeUndefined();
  });

  it('does not blame the configuration when lookups merely time out', () => {
    const timeout = {
      'demo/sync-2/sync:previous':
        'psycopg2.OperationalError: could not translate host name "pg-primary.demo.svc.cluster.local" to address: Temporary failure in name resolution',
    };
    const [f] = run(['crashloop'], [failing, cm], timeout);
    expect(f?.code).toBe('CONTAINER_CRASHLOOP');
    expect(f?.owner).toBeUndefined();
  });

  it('names the init container that fails, and what it blocks', () => {
    const pod = makePod('api-1', {
      initContainers: [{ name: 'migrate', image: 'r/migrate:1' }],
      containers: [{ name: 'api', image: 'r/api:1' }],
      initStatuses: [crashing('migrate')],
      statuses: [{ name: 'api', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }],
      phase: 'Pending',
      node: 'n1',
    });
    const [f] = run(['crashloop'], [pod], {
      'demo/api-1/migrate:previous': 'ERROR: Validate failed\nDetected failed migration to version 7 (drop column).',
    });
    expect(f?.message).toMatch(/^Init container migrate of pod api-1 keeps failing \(Init:CrashLoopBackOff\)/);
    expect(f?.message).toContain('Detected failed migration to version 7');
    expect(f?.evidence).toContain(
      'pod api-1: Init:CrashLoopBackOff; container(s) api cannot start until init container migrate succeeds',
    );
  });

  it('infers liveness restarts from failing probes and a SIGTERM exit when no kill event was read', () => {
    const probe = { httpGet: { port: 8081, path: '/healthz' } };
    const pod = makePod('auth-1', {
      containers: [{ name: 'auth', image: 'r/auth:1', livenessProbe: probe, ports: [{ containerPort: 8080 }] }],
      statuses: [crashing('auth', 143)],
      node: 'n1',
    });
    const unhealthy = podEvent(
      'auth-1',
      'Unhealthy',
      'Liveness probe failed: dial tcp 10.0.0.1:8081: connect: connection refused',
      1,
      {
        count: 30,
        fieldPath: 'spec.containers{auth}',
      },
    );
    const findings = run(['crashloop', 'liveness-probe'], [pod, unhealthy]);
    const crash = findings.find((f) => f.code === 'CONTAINER_CRASHLOOP');
    expect(crash?.severity).toBe('medium');
    expect(crash?.message).toContain('the restarts follow its failing liveness probe');
    const probeFinding = findings.find((f) => f.code === 'CONTAINER_LIVENESS_FAILING');
    expect(probeFinding?.message).toContain('the kubelet restarts the container');
    expect(probeFinding?.confidence).toBeGreaterThan(crash!.confidence);
  });

  it('names the replica that is failing now, not the first by name', () => {
    const owner = { kind: 'ReplicaSet', name: 'web-5d8f7' };
    const recovering = makePod('web-5d8f7-aaaaa', {
      owner,
      statuses: [
        { ...runningOk('app', 7), lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: at(3) } } },
      ],
      ready: true,
    });
    const backingOff = makePod('web-5d8f7-zzzzz', { owner, statuses: [crashing('app')] });
    const steady = makePod('web-5d8f7-mmmmm', { owner, statuses: [runningOk('app')], ready: true, node: 'n3' });
    const [f] = run(['crashloop'], [recovering, backingOff, steady], {
      'demo/web-5d8f7-zzzzz/app:previous': 'panic: nil map',
    });
    expect(f?.resource.name).toBe('web-5d8f7-zzzzz');
    expect(f?.evidence.join('\n')).toContain('web-5d8f7-zzzzz, web-5d8f7-aaaaa');
    expect(f?.evidence).toContain('ready replicas of ReplicaSet web-5d8f7: web-5d8f7-mmmmm (node n3)');
  });

  it('reports a crash loop of pods that are gone, after a complete rollout, as cleared history', () => {
    const objects = [
      deployment('inv', 12, 2, 2),
      replicaSet('inv-7bd5f8c96', 'inv', 11, 0, 0, {}),
      replicaSet('inv-84f6c9d7b5', 'inv', 12, 2, 2, {}),
      ...['inv-84f6c9d7b5-xtkmz', 'inv-84f6c9d7b5-fc5nc'].map((n) =>
        makePod(n, {
          owner: { kind: 'ReplicaSet', name: 'inv-84f6c9d7b5' },
          statuses: [runningOk('app')],
          ready: true,
        }),
      ),
      podEvent(
        'inv-7bd5f8c96-647fj',
        'BackOff',
        'Back-off restarting failed container app in pod inv-7bd5f8c96-647fj',
        180,
        {
          count: 31,
        },
      ),
    ];
    const [f] = run(['crashloop'], objects);
    expect(f).toMatchObject({ code: 'CONTAINER_CRASHLOOP_RESOLVED', severity: 'info' });
    expect(f?.stale).toContain('no longer exists');
    expect(f?.message).toContain(
      'ReplicaSet inv-84f6c9d7b5 (revision 12) runs 2/2 ready: inv-84f6c9d7b5-fc5nc, inv-84f6c9d7b5-xtkmz',
    );
    // While the new revision is not fully ready, the old warnings are not yet history.
    const short = objects.map((o) => (o.metadata.name === 'inv' ? deployment('inv', 12, 2, 1) : o));
    expect(run(['crashloop'], short)).toEqual([]);
  });
});
