import { describe, expect, it } from 'vitest';
import type { KubeObject, LogQuery } from '../../../src/cluster/types.js';
import { ClusterReadError } from '../../../src/cluster/types.js';
import type { ReadOutcome, Round } from '../../../src/triage/gather/rounds.js';
import { executeRound, reasonOf, substitute } from '../../../src/triage/gather/rounds.js';
import { ReadSpecSchema } from '../../../src/triage/templates/template-schema.js';
import { fakeReader, pod } from '../../support/engine-fakes.js';

const round = (...reads: Array<Record<string, unknown>>): Round => ({
  name: 'test',
  reads: reads.map((r) => ReadSpecSchema.parse(r)),
});

const service = (name: string, selector?: Record<string, string>): KubeObject => ({
  kind: 'Service',
  metadata: { name, namespace: 'shop' },
  spec: selector ? { selector } : {},
});

/** A pods read that succeeded with these objects, as a round's source. */
function podsRead(objects: KubeObject[]): ReadOutcome {
  return { status: 'ok', readId: 'pods', evidence: 'pods', kind: 'pods', label: 'pods', objects };
}

function ctx(reader: ReturnType<typeof fakeReader>, previous: Record<string, ReadOutcome[]> = {}) {
  return {
    reader,
    namespace: 'shop',
    signal: new AbortController().signal,
    previous: new Map(Object.entries(previous)),
  };
}

describe('executeRound', () => {
  it("follows a Service's selector to its pods, skipping services without one", async () => {
    const reader = fakeReader({
      objects: {
        pods: [pod('web-1', { labels: { app: 'web', tier: 'fe' } }), pod('db-0', { labels: { app: 'db' } })],
      },
    });
    const services: ReadOutcome = {
      status: 'ok',
      readId: 'services',
      evidence: 'services',
      kind: 'services',
      label: 'services',
      objects: [service('web', { tier: 'fe', app: 'web' }), service('external')],
    };
    const outcomes = await executeRound(
      round({
        id: 'backends',
        kind: 'pods',
        labelSelector: '{{item.spec.selector}}',
        evidence: 'backends',
        forEach: { read: 'services' },
      }),
      ctx(reader, { services: [services] }),
    );
    expect(reader.calls.map((c) => c.query)).toEqual([
      { kind: 'pods', namespace: 'shop', labelSelector: 'app=web,tier=fe', maxItems: 500 },
    ]);
    expect(outcomes).toEqual([
      expect.objectContaining({ status: 'ok', label: 'pods -l app=web,tier=fe', objects: [expect.anything()] }),
    ]);
  });

  it('records a named object that does not exist as an observed absence, not a gap', async () => {
    const reader = fakeReader({ objects: { services: [] } });
    const [outcome] = await executeRound(
      round({ id: 'svc', kind: 'services', name: 'checkout', evidence: 'services' }),
      ctx(reader),
    );
    expect(outcome).toMatchObject({ status: 'ok', objects: [] });
  });

  it('passes the failure of a source read on to the reads that depend on it', async () => {
    const failedPods: ReadOutcome = {
      status: 'failed',
      readId: 'pods',
      evidence: 'pods',
      kind: 'pods',
      label: 'pods',
      reason: 'forbidden',
      detail: 'pods is forbidden',
    };
    const reader = fakeReader({ objects: {} });
    const [outcome] = await executeRound(
      round({ id: 'logs', kind: 'logs', evidence: 'logs', forEach: { read: 'pods', each: 'container' } }),
      ctx(reader, { pods: [failedPods] }),
    );
    expect(outcome).toMatchObject({
      status: 'failed',
      reason: 'forbidden',
      detail: 'depends on pods: pods is forbidden',
    });
    expect(reader.calls).toEqual([]);
  });

  it('reports nothing to follow when no source object matches', async () => {
    const pods = podsRead([pod('web-1')]);
    const reader = fakeReader({ objects: {} });
    const [outcome] = await executeRound(
      round({ id: 'logs', kind: 'logs', evidence: 'logs', forEach: { read: 'pods', where: 'restarting' } }),
      ctx(reader, { pods: [pods] }),
    );
    expect(outcome).toMatchObject({ status: 'nothing-to-follow', evidence: 'logs' });
  });

  it('follows every where over one worst-first order: loudest first, the quiet in API order, counts below zero last', async () => {
    const ready = (o: KubeObject): KubeObject => ({
      ...o,
      status: { ...o.status, conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const pods = podsRead([
      ready(pod('a')),
      pod('b', { restarts: 2 }),
      pod('c', { phase: 'Pending' }),
      pod('d', { restarts: 5 }),
      pod('e', { restarts: -1 }),
      pod('f', { restarts: 2 }),
    ]);
    const reader = fakeReader({ objects: {} });
    const follow = (id: string, where: string, each: string, max = 10) => ({
      id,
      kind: 'logs',
      evidence: 'logs',
      forEach: { read: 'pods', where, each, max },
    });
    await executeRound(
      round(
        follow('all', 'all', 'object'),
        follow('not-running', 'not-running', 'object'),
        follow('not-ready', 'not-ready', 'object'),
        follow('restarting', 'restarting', 'container', 3),
      ),
      ctx(reader, { pods: [pods] }),
    );
    const followed = reader.calls.map((c) => {
      const q = c.query as LogQuery;
      return q.container === undefined ? q.pod : `${q.pod}/${q.container}`;
    });
    expect(followed).toEqual([
      ...['d', 'b', 'f', 'a', 'c', 'e'],
      'c',
      ...['d', 'b', 'f', 'c', 'e'],
      ...['d/app', 'b/app', 'f/app'],
    ]);
  });

  it('reads the first running replica of each workload, and separately the second, never a third', async () => {
    const of = (name: string, owner: string, phase?: string): KubeObject => {
      const p = pod(name, phase ? { phase } : {});
      return { ...p, metadata: { ...p.metadata, ownerReferences: [{ kind: 'ReplicaSet', name: owner }] } };
    };
    const pods = podsRead([
      of('api-1', 'api-rs'),
      of('api-2', 'api-rs'),
      of('api-3', 'api-rs'),
      of('web-1', 'web-rs', 'Pending'),
      of('web-2', 'web-rs'),
      of('db-0', 'db'),
    ]);
    const reader = fakeReader({ objects: {} });
    const follow = (id: string, where: string) => ({
      id,
      kind: 'logs',
      evidence: 'logs',
      forEach: { read: 'pods', where, each: 'object', max: 10 },
    });
    await executeRound(
      round(follow('first', 'one-per-workload'), follow('second', 'second-of-workload')),
      ctx(reader, { pods: [pods] }),
    );
    expect(reader.calls.map((c) => (c.query as LogQuery).pod)).toEqual(['api-1', 'web-2', 'db-0', 'api-2']);
  });

  it('records a log the kubelet does not have (400, 404) as read and empty, but a refused log as a gap', async () => {
    const pods = podsRead([
      pod('web-1', { restarts: 3 }),
      pod('web-2', { restarts: 2 }),
      pod('web-3', { restarts: 1 }),
    ]);
    const answers: Record<string, () => never> = {
      'web-1': () => {
        throw new ClusterReadError('previous terminated container "app" in pod "web-1" not found', 'invalid', 400);
      },
      'web-2': () => {
        throw new ClusterReadError('pods "web-2" not found', 'not-found', 404);
      },
      'web-3': () => {
        throw new ClusterReadError('pods "web-3" is forbidden', 'forbidden', 403);
      },
    };
    const reader = { ...fakeReader({ objects: {} }), logs: async (q: LogQuery) => answers[q.pod]!() };
    const outcomes = await executeRound(
      round({
        id: 'logs',
        kind: 'logs',
        previous: true,
        evidence: 'logs',
        forEach: { read: 'pods', where: 'restarting', each: 'container' },
      }),
      ctx(reader as unknown as ReturnType<typeof fakeReader>, { pods: [pods] }),
    );
    expect(outcomes.map((o) => [o.label, o.status, o.status === 'ok' && o.kind === 'logs' ? o.log.text : ''])).toEqual([
      ['logs web-1/app (previous)', 'ok', ''],
      ['logs web-2/app (previous)', 'ok', ''],
      ['logs web-3/app (previous)', 'failed', ''],
    ]);
    expect(outcomes[2]).toMatchObject({ reason: 'forbidden' });
  });

  it('classifies reader failures by reason', async () => {
    const reader = fakeReader({ objects: {}, fail: { nodes: 'unauthorized', events: 'crash' } });
    const outcomes = await executeRound(
      round(
        { id: 'nodes', kind: 'nodes', scope: 'cluster', evidence: 'nodes' },
        { id: 'events', kind: 'events', evidence: 'events' },
      ),
      ctx(reader),
    );
    expect(outcomes.map((o) => (o.status === 'failed' ? o.reason : o.status))).toEqual([
      'unauthorized',
      'server-error',
    ]);
    expect(reader.calls[0]?.query).toEqual({ kind: 'nodes', maxItems: 500 });
  });
});

describe('substitute', () => {
  const item = pod('web-1') as unknown as KubeObject;
  it('resolves item paths, array indexes and the bound pod and container', () => {
    const b = { namespace: 'shop', item, pod: 'web-1', container: 'app' };
    expect(substitute('{{namespace}}/{{pod}}/{{container}}', b)).toBe('shop/web-1/app');
    expect(substitute('{{item.spec.containers[1].name}}', b)).toBe('sidecar');
    expect(substitute('{{ item.spec.containers.0.name }}', b)).toBe('app');
    expect(substitute('x={{item.spec.nodeName}}', b)).toBeUndefined();
  });
  it('reads an aborted deadline as a timeout', () => {
    const c = new AbortController();
    c.abort();
    expect(reasonOf(new Error('x'), c.signal)).toBe('timeout');
    expect(reasonOf(Object.assign(new Error('x'), { reason: 'forbidden' }))).toBe('forbidden');
  });
});
