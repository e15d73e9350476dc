import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/cluster/types.js';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import { readSpecFromRequest, runRead } from '../../../src/workflow/reads.js';
import { fakeReader } from '../../support/engine-fakes.js';

const pod = (name: string, ready: boolean, labels: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'shop', labels },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

const objects: Record<string, KubeObject[]> = {
  pods: [pod('web-1', true, { app: 'web' }), pod('web-2', false, { app: 'web' }), pod('db-0', false, { app: 'db' })],
  deployments: [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { selector: { matchLabels: { app: 'web' } } },
    },
  ],
  services: [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { selector: { app: 'web' } },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'external', namespace: 'shop' }, spec: {} },
  ],
};

function reader() {
  const r = fakeReader({
    objects,
    logs: { 'shop/web-1/': 'ok\n', 'shop/web-2/': 'connect ECONNREFUSED 10.0.0.9:5432\n' },
  });
  return r;
}

function logsOf(r: ReturnType<typeof fakeReader>): string[] {
  return r.calls.flatMap((c) => (c.op === 'logs' && 'pod' in c.query ? [c.query.pod] : []));
}

describe('logs of a workload, a Service or a selector', () => {
  it('reads the pod `kubectl logs deployment/web` would, the unready one first', async () => {
    const r = reader();
    const spec = readSpecFromRequest(classifyRequest('kubectl logs deployment/web -n shop'), 'shop');
    expect(spec).toMatchObject({ verb: 'logs', kind: 'deployments', name: 'web' });
    const result = await runRead(r, spec!);
    expect(logsOf(r)).toEqual(['web-2']);
    expect(result.outcome).toBe('ok');
    expect(result.summary).toContain('pod web-2 of Deployment web (not ready, 1 of 2 not ready)');
    expect(result.lines.join('\n')).toContain('ECONNREFUSED');
  });

  it('follows a Service’s selector and a typed -l selector', async () => {
    const viaService = reader();
    await runRead(viaService, {
      title: 'logs svc/web',
      verb: 'logs',
      kind: 'services',
      name: 'web',
      namespace: 'shop',
    });
    expect(logsOf(viaService)).toEqual(['web-2']);
    const viaSelector = reader();
    const spec = readSpecFromRequest(classifyRequest('kubectl logs -l app=web -n shop'), 'shop');
    expect(spec).toMatchObject({ verb: 'logs', kind: 'pods', labelSelector: 'app=web' });
    await runRead(viaSelector, spec!);
    expect(logsOf(viaSelector)).toEqual(['web-2']);
  });

  it('says why there is nothing to read rather than failing', async () => {
    const r = reader();
    const none = await runRead(r, {
      title: 'logs svc/external',
      verb: 'logs',
      kind: 'services',
      name: 'external',
      namespace: 'shop',
    });
    expect(none).toMatchObject({ outcome: 'empty' });
    expect(none.summary).toMatch(/has no pod selector/);
    expect(logsOf(r)).toEqual([]);
  });
});
