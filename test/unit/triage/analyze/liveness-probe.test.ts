import { describe, expect, it } from 'vitest';
import { at, deployment, makePod, podEvent, replicaSet, run, runningOk } from '../../../support/analyzers/units.js';

const POD = 'checkout-7c9d8f6b5-x2x7q';
const FAILED = 'Liveness probe failed: HTTP probe failed with statuscode: 500';
const KILLED = 'Container checkout failed liveness probe, will be restarted';

const container = (probePort: number) => ({
  name: 'checkout',
  image: 'registry.example.com/checkout:3.2',
  ports: [{ containerPort: 8080, name: 'http' }],
  livenessProbe: { httpGet: { path: '/healthz', port: probePort, scheme: 'HTTP' }, periodSeconds: 5 },
});

const restarted = {
  name: 'checkout',
  ready: true,
  restartCount: 4,
  state: { running: { startedAt: at(1) } },
  lastState: { terminated: { reason: 'Error', exitCode: 137, startedAt: at(6), finishedAt: at(1.5) } },
};

const workload = (probePort: number) => [
  deployment('checkout', 3, 1, 0),
  replicaSet('checkout-7c9d8f6b5', 'checkout', 3, 1, 0, { containers: [container(probePort)] }),
  makePod(POD, {
    owner: { kind: 'ReplicaSet', name: 'checkout-7c9d8f6b5' },
    node: 'node-a',
    containers: [container(probePort)],
    statuses: [restarted],
  }),
];

const fieldPath = 'spec.containers{checkout}';

describe('liveness-probe names the pod whose container the kubelet restarts for failing its probe', () => {
  it("quotes the kubelet's probe failure and kill, the probe settings and the restarts", () => {
    const findings = run(
      ['liveness-probe'],
      [
        ...workload(8080),
        podEvent(POD, 'Unhealthy', FAILED, 2, { count: 12, fieldPath }),
        podEvent(POD, 'Killing', KILLED, 3, { count: 4, type: 'Normal', fieldPath }),
      ],
    );
    expect(findings.map((f) => f.code)).toEqual(['CONTAINER_LIVENESS_FAILING']);
    const [f] = findings;
    expect(f).toMatchObject({
      analyzer: 'liveness-probe',
      severity: 'high',
      resource: { kind: 'Pod', name: POD, namespace: 'demo' },
      remediation: ['tune-liveness-probe', 'inspect-previous-logs'],
    });
    expect(f?.message).toBe(
      `The liveness probe of container checkout in pod ${POD} fails (12 failures, 4 restarts by the kubelet).`,
    );
    expect(f?.evidence[0]).toBe(`Unhealthy ×12 (last 2m ago): ${FAILED}`);
    expect(f?.evidence).toContain(`Killing ×4 (last 3m ago): ${KILLED}`);
    expect(f?.evidence).toContain(
      'livenessProbe httpGet http :8080/healthz initialDelaySeconds=0 periodSeconds=5 timeoutSeconds=1 failureThreshold=3',
    );
    expect(f?.evidence).toContain('container checkout: 4 restarts, last exit code 137 (Error)');
  });

  it('says the probe aims at a port the container does not declare', () => {
    const [f] = run(
      ['liveness-probe'],
      [
        ...workload(8081),
        podEvent(
          POD,
          'Unhealthy',
          'Liveness probe failed: Get "http://10.128.2.17:8081/healthz": dial tcp 10.128.2.17:8081: connect: connection refused',
          1,
          { count: 9, fieldPath },
        ),
        podEvent(POD, 'Killing', KILLED, 1.5, { count: 3, type: 'Normal', fieldPath }),
      ],
    );
    expect(f).toMatchObject({
      code: 'CONTAINER_LIVENESS_FAILING',
      resource: { kind: 'Pod', name: POD },
      remediation: ['fix-probe-port'],
    });
    expect(f?.evidence).toContain('probe port 8081 is not a declared containerPort (container declares 8080(http))');
  });

  it('says nothing of a probed container whose only liveness failures are hours old, nor of readiness failures', () => {
    const healthy = makePod(POD, {
      owner: { kind: 'ReplicaSet', name: 'checkout-7c9d8f6b5' },
      node: 'node-a',
      containers: [container(8080)],
      statuses: [runningOk('checkout', 1)],
      ready: true,
    });
    expect(
      run(
        ['liveness-probe'],
        [
          healthy,
          podEvent(POD, 'Unhealthy', FAILED, 600, { count: 3, fieldPath }),
          podEvent(POD, 'Killing', KILLED, 600, { count: 1, type: 'Normal', fieldPath }),
          podEvent(POD, 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503', 1, {
            count: 4,
            fieldPath,
          }),
        ],
      ),
    ).toEqual([]);
  });
});
