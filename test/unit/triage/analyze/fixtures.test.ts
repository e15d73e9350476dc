import { describe, expect, it } from 'vitest';
import { SEVERITY_ORDER as SEVERITY_RANK } from '../../../../src/triage/envelope/findings.js';
import { analyze, fixtureFiles, loadFixture } from '../../../support/analyzers-support.js';

/** Which analyzer must name the root cause, and on which resource, for every broken fixture. */
const EXPECTED: Record<string, { analyzer: string; resource: string }> = {
  'pvc-binding--no-default-storageclass.yaml': {
    analyzer: 'pvc-binding',
    resource: 'PersistentVolumeClaim/jupyter-data',
  },
  'pvc-binding--provisioner-missing.yaml': {
    analyzer: 'pvc-binding',
    resource: 'PersistentVolumeClaim/data-warehouse-db-0',
  },
  'pvc-binding--storageclass-not-found.yaml': {
    analyzer: 'pvc-binding',
    resource: 'PersistentVolumeClaim/training-cache',
  },
  'pvc-binding--static-pv-too-small.yaml': { analyzer: 'pvc-binding', resource: 'PersistentVolumeClaim/erp-shared' },
  'pvc-binding--static-pv-selector.yaml': { analyzer: 'pvc-binding', resource: 'PersistentVolumeClaim/genome-data' },
  'scheduling-failures--insufficient-cpu.yaml': {
    analyzer: 'scheduling',
    resource: 'Pod/payments-api-7f8c9d6b54-4xk9p',
  },
  'scheduling-failures--untolerated-taint.yaml': { analyzer: 'scheduling', resource: 'Pod/nightly-etl-29392110-kq7bd' },
  'scheduling-failures--node-selector.yaml': {
    analyzer: 'scheduling',
    resource: 'Pod/report-renderer-84d6f5c7b9-b5n6x',
  },
  'crashloop-analysis--missing-env.yaml': { analyzer: 'crashloop', resource: 'Pod/order-worker-69b7c4d8f5-fk2lp' },
  'crashloop-analysis--configmap-key.yaml': { analyzer: 'container-config', resource: 'Pod/invoicer-7d4f8b9c6e-p5s9v' },
  'crashloop-analysis--liveness-wrong-port.yaml': {
    analyzer: 'liveness-probe',
    resource: 'Pod/search-api-5b8d9f7c6d-l4hxq',
  },
  'oom-killed--limit-too-low.yaml': { analyzer: 'oom-killed', resource: 'Pod/pdf-renderer-6f9c7b5d48-c7x2m' },
  'oom-killed--jvm-heap-exceeds-limit.yaml': { analyzer: 'oom-killed', resource: 'Pod/risk-engine-85c7d9f6b4-d2k8w' },
  'image-pull--tag-not-found.yaml': { analyzer: 'image-pull', resource: 'Pod/web-frontend-7c5d8e9f4b-k2m9x' },
  'image-pull--unauthorized.yaml': { analyzer: 'image-pull', resource: 'Pod/partner-gateway-6b8f7d9c5a-v7q2z' },
  'image-pull--platform-mismatch.yaml': { analyzer: 'image-pull', resource: 'Pod/telemetry-agent-58d9c7f6b2-x4n8t' },
  'node-not-ready--kubelet-stopped.yaml': { analyzer: 'node-health', resource: 'Node/ip-10-33-2-51.ec2.internal' },
  'node-not-ready--memory-pressure.yaml': { analyzer: 'node-health', resource: 'Node/ip-10-34-2-51.ec2.internal' },
  'ingress-pending--no-class.yaml': { analyzer: 'ingress', resource: 'Ingress/storefront' },
  'ingress-pending--class-without-controller.yaml': { analyzer: 'ingress', resource: 'Ingress/campaign-site' },
  'ingress-pending--backend-without-endpoints.yaml': { analyzer: 'ingress', resource: 'Ingress/blog' },
  'route-5xx--selector-mismatch.yaml': { analyzer: 'route', resource: 'Route/checkout' },
  'route-5xx--wrong-target-port.yaml': { analyzer: 'route', resource: 'Route/catalog-api' },
  'route-5xx--pods-not-ready.yaml': { analyzer: 'route', resource: 'Route/inventory' },
  'volume-mount-failures--configmap-missing.yaml': {
    analyzer: 'volume-mount',
    resource: 'Pod/notifier-8d9e0f1a2b-j5k6l',
  },
  'volume-mount-failures--multi-attach.yaml': { analyzer: 'volume-mount', resource: 'Pod/pg-0' },
  'volume-mount-failures--permission-denied.yaml': { analyzer: 'volume-mount', resource: 'Pod/gitea-9f0a1b2c3d-m7n8p' },
  'dns-failure--coredns-down.yaml': { analyzer: 'dns', resource: 'Pod/coredns-5d78c9869d-8kq2w' },
  'dns-failure--upstream-timeouts.yaml': { analyzer: 'dns', resource: 'Pod/dns-default-t5w9k' },
};

const INTENTS = [
  'pvc-binding',
  'scheduling-failures',
  'ingress-pending',
  'crashloop-analysis',
  'route-5xx',
  'image-pull',
  'oom-killed',
  'node-not-ready',
  'volume-mount-failures',
  'dns-failure',
];

const broken = fixtureFiles().filter((f) => f !== 'healthy.yaml');

describe('snapshot fixtures', () => {
  it('cover every intent with at least two broken scenarios of different root cause or evidence', () => {
    for (const intent of INTENTS) {
      const mine = broken.filter((f) => f.startsWith(`${intent}--`)).map(loadFixture);
      expect(mine.length, intent).toBeGreaterThanOrEqual(2);
      expect(new Set(mine.map((f) => `${f.rootCause}|${f.evidence}`)).size, intent).toBe(mine.length);
      for (const f of mine) expect(f.intent).toBe(intent);
    }
    expect(Object.keys(EXPECTED).sort()).toEqual(broken);
  });

  it('use a distinct namespace each, so they can be merged into one cluster', () => {
    const namespaces = fixtureFiles().map((f) => loadFixture(f).namespace);
    expect(new Set(namespaces).size).toBe(namespaces.length);
  });

  it('make "now" the newest timestamp in the file', () => {
    for (const file of fixtureFiles()) {
      const fx = loadFixture(file);
      const stamps = JSON.stringify(fx.objects).match(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g) ?? [];
      expect(stamps.sort().at(-1), file).toBe(fx.now.toISOString().replace('.000Z', 'Z'));
    }
  });
});

describe.each(broken)('%s', (file) => {
  const fx = loadFixture(file);
  const findings = analyze(fx);
  const expected = EXPECTED[file]!;

  it('ranks the expected root cause first, with its key evidence', () => {
    const top = findings[0];
    expect(top?.code).toBe(fx.rootCause);
    expect(top?.analyzer).toBe(expected.analyzer);
    expect(`${top?.resource.kind}/${top?.resource.name}`).toBe(expected.resource);
    expect(top?.evidence.some((e) => e.includes(fx.evidence))).toBe(true);
    expect(SEVERITY_RANK[top!.severity]).toBeGreaterThanOrEqual(SEVERITY_RANK.high);
    expect(top!.confidence).toBeGreaterThanOrEqual(0.8);
  });

  it('keeps findings compact and free of secrets', () => {
    for (const f of findings) {
      expect(f.evidence.length).toBeLessThanOrEqual(6);
      for (const e of f.evidence) expect(e.length).toBeLessThanOrEqual(300);
    }
    const text = JSON.stringify(findings);
    expect(text).not.toMatch(/Sup3rS3cret|eyJhbGciOi|sk_live_|ops@example\.com/);
  });

  it('is deterministic whatever order the objects arrive in', () => {
    const again = analyze({ ...fx, objects: [...fx.objects].reverse() });
    expect(again).toEqual(findings);
  });
});

describe('healthy.yaml', () => {
  const fx = loadFixture('healthy.yaml');
  const findings = analyze(fx);

  it('yields nothing above low, although it holds old warning events of every kind', () => {
    expect(fx.objects.filter((o) => o.kind === 'Event' && o['type'] === 'Warning').length).toBeGreaterThanOrEqual(4);
    for (const f of findings)
      expect(SEVERITY_RANK[f.severity], `${f.code} ${f.message}`).toBeLessThanOrEqual(SEVERITY_RANK.low);
  });

  it('reports the WaitForFirstConsumer claim without a consumer as info only', () => {
    const wffc = findings.find((f) => f.code === 'PVC_WAIT_FOR_FIRST_CONSUMER');
    expect(wffc?.severity).toBe('info');
    expect(wffc?.resource.name).toBe('wiki-export-scratch');
  });

  it('keeps the two-day-old OOM kill and eviction as low-severity history', () => {
    expect(findings.find((f) => f.code === 'CONTAINER_OOMKILLED')?.severity).toBe('low');
    expect(findings.find((f) => f.code === 'POD_EVICTED')?.severity).toBe('low');
    for (const code of [
      'POD_INSUFFICIENT_MEMORY',
      'VOLUME_CONFIGMAP_MISSING',
      'CONTAINER_LIVENESS_FAILING',
      'SERVICE_NO_ENDPOINTS',
    ])
      expect(findings.map((f) => f.code)).not.toContain(code);
  });
});
