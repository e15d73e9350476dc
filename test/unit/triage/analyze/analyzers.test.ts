import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../../src/cluster/types.js';
import {
  ANALYZERS,
  contextFromObjects,
  getAnalyzer,
  runAnalyzers,
  UnknownAnalyzerError,
} from '../../../../src/triage/analyze/index.js';
import { FindingSchema, SEVERITY_ORDER as SEVERITY_RANK } from '../../../../src/triage/envelope/findings.js';
import { findEvents } from '../../../../src/triage/kube/events.js';
import { event, iso, NAMES, NOW, pod, runningReady } from '../../../support/analyzers/units.js';
import { analyze, loadFixture } from '../../../support/analyzers-support.js';

describe('analyzer registry', () => {
  it('holds exactly the named analyzers, each with a domain and its needs', () => {
    expect([...ANALYZERS.keys()].sort()).toEqual([...NAMES].sort());
    for (const name of NAMES) {
      const a = getAnalyzer(name);
      expect(a.name).toBe(name);
      expect(a.needs.length).toBeGreaterThan(0);
    }
  });

  it('refuses an unknown analyzer with the list of known ones', () => {
    expect(() => getAnalyzer('nope')).toThrow(UnknownAnalyzerError);
    expect(() => getAnalyzer('nope')).toThrow(/pvc-binding/);
  });

  it('has service-endpoints explain an empty Service next to the entry-point finding', () => {
    const fx = loadFixture('ingress-pending--backend-without-endpoints.yaml');
    const [svc] = analyze(fx, ['service-endpoints']);
    expect(svc).toMatchObject({
      code: 'SERVICE_NO_ENDPOINTS',
      severity: 'medium',
      resource: { kind: 'Service', name: 'blog-web' },
    });
    expect(svc?.evidence).toContain('Service blog-web selector app=blog-web');
  });

  it('returns findings that satisfy the Finding schema', () => {
    const fx = loadFixture('route-5xx--pods-not-ready.yaml');
    for (const f of analyze(fx)) expect(FindingSchema.safeParse(f).success).toBe(true);
  });
});

describe('recency', () => {
  it('does not turn old events on healthy pods into findings', () => {
    const objects = [
      pod('web-1', { status: runningReady, spec: { nodeName: 'n1' } }),
      event('web-1', 'FailedMount', 'MountVolume.SetUp failed for volume "cfg" : configmap "cfg" not found', 180),
      event('web-1', 'Unhealthy', 'Liveness probe failed: HTTP probe failed with statuscode: 500', 240),
      event('web-1', 'Failed', 'Failed to pull image "registry.example.com/app:1": not found', 300),
    ];
    const findings = runAnalyzers(
      [...ANALYZERS.values()],
      contextFromObjects({ namespace: 'demo', now: NOW, objects }),
    );
    expect(findings).toEqual([]);
  });

  it('ranks a current fault above leftovers of an old one', () => {
    const objects = [
      pod('old-1', {
        status: {
          ...runningReady,
          containerStatuses: [
            {
              name: 'app',
              ready: true,
              restartCount: 1,
              state: { running: { startedAt: iso(60 * 20) } },
              lastState: { terminated: { reason: 'OOMKilled', exitCode: 137, finishedAt: iso(60 * 20) } },
            },
          ],
        },
        spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'x', resources: { limits: { memory: '256Mi' } } }] },
      }),
      event('old-1', 'Unhealthy', 'Liveness probe failed: connection refused', 60 * 20, 40),
      pod('new-1', {
        status: {
          phase: 'Pending',
          conditions: [{ type: 'PodScheduled', status: 'True' }],
          containerStatuses: [
            {
              name: 'app',
              ready: false,
              restartCount: 0,
              state: { waiting: { reason: 'CreateContainerConfigError', message: 'secret "api-token" not found' } },
            },
          ],
        },
        spec: { nodeName: 'n1' },
      }),
    ];
    const findings = runAnalyzers(
      [...ANALYZERS.values()],
      contextFromObjects({ namespace: 'demo', now: NOW, objects }),
    );
    expect(findings[0]).toMatchObject({
      code: 'CONTAINER_CONFIG_ERROR',
      severity: 'high',
      resource: { name: 'new-1' },
    });
    expect(findings[0]?.message).toContain('Secret api-token');
    const old = findings.find((f) => f.resource.name === 'old-1');
    expect(old?.code).toBe('CONTAINER_OOMKILLED');
    expect(SEVERITY_RANK[old!.severity]).toBeLessThanOrEqual(SEVERITY_RANK.low);
    expect(findings.map((f) => f.code)).not.toContain('CONTAINER_LIVENESS_FAILING');
  });

  it('sums repeated events across replicas', () => {
    const fx = loadFixture('scheduling-failures--insufficient-cpu.yaml');
    const top = analyze(fx, ['scheduling'])[0];
    expect(top?.evidence[0]).toContain('21 FailedScheduling event(s)');
  });

  it('reads events.k8s.io series counts and times', () => {
    const ev: KubeObject = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'x.1', namespace: 'demo', creationTimestamp: iso(50) },
      regarding: { kind: 'Pod', name: 'x', namespace: 'demo' },
      reason: 'BackOff',
      note: 'Back-off restarting failed container',
      type: 'Warning',
      series: { count: 42, lastObservedTime: iso(1) },
    };
    const ctx = contextFromObjects({ namespace: 'demo', now: NOW, objects: [ev] });
    const [summary] = findEvents(ctx, { kind: 'Pod', name: 'x' });
    expect(summary).toMatchObject({ count: 42, reason: 'BackOff', message: 'Back-off restarting failed container' });
    expect(summary?.last?.toISOString()).toBe(iso(1));
  });
});

describe('WaitForFirstConsumer', () => {
  const base = loadFixture('healthy.yaml');

  it('is info while no pod uses the claim', () => {
    const findings = analyze(base, ['pvc-binding']);
    expect(findings.map((f) => [f.code, f.severity])).toEqual([['PVC_WAIT_FOR_FIRST_CONSUMER', 'info']]);
  });

  it('points at the consumer when the consumer cannot be scheduled, and stays below the scheduling cause', () => {
    const consumer: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'export-job-abc12', namespace: 'wiki', creationTimestamp: '2025-11-21T09:40:00Z' },
      spec: {
        containers: [{ name: 'export', image: 'x' }],
        volumes: [{ name: 'scratch', persistentVolumeClaim: { claimName: 'wiki-export-scratch' } }],
      },
      status: {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/2 nodes are available: 2 Insufficient memory.',
          },
        ],
      },
    };
    const findings = analyze({ ...base, objects: [...base.objects, consumer] }, ['pvc-binding', 'scheduling']);
    expect(findings[0]).toMatchObject({ code: 'POD_INSUFFICIENT_MEMORY', severity: 'high' });
    const wffc = findings.find((f) => f.code === 'PVC_WAIT_FOR_FIRST_CONSUMER');
    expect(wffc?.severity).toBe('low');
    expect(wffc?.related).toContainEqual({ kind: 'Pod', name: 'export-job-abc12', namespace: 'wiki' });
  });
});

describe('missing evidence', () => {
  it('stays quiet about kinds whose reads failed instead of guessing', () => {
    const fx = loadFixture('pvc-binding--no-default-storageclass.yaml');
    const ctx = contextFromObjects({
      namespace: fx.namespace,
      now: fx.now,
      objects: fx.objects.filter((o) => o.kind !== 'StorageClass'),
      unavailable: ['storageclasses'],
    });
    expect(runAnalyzers([getAnalyzer('pvc-binding')], ctx)).toEqual([]);
  });

  it('does not report an ingress class problem when IngressClasses could not be read', () => {
    const fx = loadFixture('ingress-pending--no-class.yaml');
    const ctx = contextFromObjects({
      namespace: fx.namespace,
      now: fx.now,
      objects: fx.objects.filter((o) => o.kind !== 'IngressClass'),
      unavailable: ['ingressclasses'],
    });
    const codes = runAnalyzers([getAnalyzer('ingress')], ctx).map((f) => f.code);
    expect(codes).not.toContain('INGRESS_NO_CLASS');
    expect(codes).toContain('INGRESS_NO_ADDRESS');
  });
});

describe('contextFromObjects', () => {
  it('indexes by kind, drops duplicates and unknown kinds, and reads logs by namespace', () => {
    const objects: KubeObject[] = [
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'b', namespace: 'demo' } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'demo' } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'demo' } },
      { apiVersion: 'v1', kind: 'Widget', metadata: { name: 'w' } },
    ];
    const ctx = contextFromObjects({
      namespace: 'demo',
      now: NOW,
      objects,
      logs: { 'demo/a/app': 'now', 'demo/a/app:previous': 'before', 'kube-system/coredns-1/coredns': 'dns' },
    });
    expect(ctx.objects('pods').map((p) => p.metadata.name)).toEqual(['a', 'b']);
    expect(ctx.objects('services')).toEqual([]);
    expect(ctx.log('a', 'app')).toBe('now');
    expect(ctx.log('a', 'app', true)).toBe('before');
    expect(ctx.log('coredns-1', 'coredns', false, 'kube-system')).toBe('dns');
    expect(ctx.log('zzz', 'app')).toBeUndefined();
  });
});
