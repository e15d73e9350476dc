import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../../src/cli/io.js';
import { checkNamespace, describeMissing, witnessNamespaces } from '../../../src/cli/namespace-check.js';
import { startProgress } from '../../../src/cli/progress.js';
import { CLEAR_LINE } from '../../../src/cli/text.js';
import {
  ClusterReadError,
  type ClusterReader,
  type KubeObject,
  type ReadFailureReason,
  type ResourceKind,
} from '../../../src/cluster/types.js';

/** A cluster of objects by kind, where some kinds answer with a failure instead. */
function cluster(objects: KubeObject[], failing: Partial<Record<ResourceKind, ReadFailureReason>> = {}) {
  const reads: string[] = [];
  const fail = (kind: ResourceKind) => {
    const reason = failing[kind];
    if (reason) throw new ClusterReadError(`${kind}: ${reason}`, reason);
  };
  const ofKind = (kind: ResourceKind) => objects.filter((o) => `${(o.kind ?? '').toLowerCase()}s` === kind);
  const reader: ClusterReader = {
    list: async ({ kind }) => {
      reads.push(`list ${kind}`);
      fail(kind);
      return ofKind(kind);
    },
    get: async ({ kind, name }) => {
      reads.push(`get ${kind}/${name}`);
      fail(kind);
      const found = ofKind(kind).find((o) => o.metadata.name === name);
      if (!found) throw new ClusterReadError(`${kind} ${name} not found`, 'not-found', 404);
      return found;
    },
    logs: async () => '',
  };
  return { reader, reads };
}

const ns = (name: string): KubeObject => ({ kind: 'Namespace', metadata: { name } });
const pod = (namespace: string): KubeObject => ({ kind: 'Pod', metadata: { name: 'p', namespace } });

describe('does the namespace exist', () => {
  it('is found with no read of its own when the triage read objects in it', async () => {
    const { reader, reads } = cluster([pod('payments'), pod('orders')]);
    const witnessed = witnessNamespaces(reader);
    await witnessed.reader.list({ kind: 'pods' });
    reads.length = 0;
    expect(await checkNamespace(reader, 'payments', { snapshot: true, seen: witnessed.seen })).toEqual({
      status: 'found',
    });
    expect(reads).toEqual([]);
  });

  it('still reads when the triage saw no object of that namespace', async () => {
    const { reader, reads } = cluster([pod('orders')]);
    const witnessed = witnessNamespaces(reader);
    await witnessed.reader.list({ kind: 'pods' });
    await expect(witnessed.reader.get({ kind: 'pods', name: 'p' })).resolves.toMatchObject({ kind: 'Pod' });
    expect([...witnessed.seen]).toEqual(['orders']);
    reads.length = 0;
    expect(await checkNamespace(reader, 'paymnts', { snapshot: true, seen: witnessed.seen })).toEqual({
      status: 'missing',
      present: ['orders'],
    });
    expect(reads[0]).toBe('get namespaces/paymnts');
  });

  it('is found by its Namespace object, with one read', async () => {
    const { reader, reads } = cluster([ns('payments'), ns('default')]);
    expect(await checkNamespace(reader, 'payments')).toEqual({ status: 'found' });
    expect(reads).toEqual(['get namespaces/payments']);
  });

  it('is missing when the permitted read answers 404, with the namespaces the list shows', async () => {
    const { reader } = cluster([ns('payments'), ns('default'), ns('kube-system')]);
    expect(await checkNamespace(reader, 'paymnts')).toEqual({
      status: 'missing',
      present: ['default', 'kube-system', 'payments'],
    });
  });

  it('is missing without a list when only the list is forbidden', async () => {
    const { reader } = cluster([ns('payments')]);
    const get404ListForbidden: ClusterReader = {
      ...reader,
      list: async () => {
        throw new ClusterReadError('forbidden', 'forbidden', 403);
      },
    };
    expect(await checkNamespace(get404ListForbidden, 'nosuch')).toEqual({ status: 'missing', present: undefined });
  });

  it('cannot be confirmed when the identity may not read namespaces at all, or the cluster does not answer', async () => {
    const denied = cluster([ns('payments')], { namespaces: 'forbidden' });
    expect(await checkNamespace(denied.reader, 'payments')).toMatchObject({
      status: 'unconfirmed',
      reason: expect.stringMatching(/may not read namespaces/),
    });
    const down = cluster([ns('payments')], { namespaces: 'unreachable' });
    expect(await checkNamespace(down.reader, 'payments')).toMatchObject({ status: 'unconfirmed' });
  });

  it('is listed, when forbidden to get, by a list that is permitted', async () => {
    const { reader } = cluster([ns('payments')]);
    const getForbidden: ClusterReader = {
      ...reader,
      get: async () => {
        throw new ClusterReadError('forbidden', 'forbidden', 403);
      },
    };
    expect(await checkNamespace(getForbidden, 'payments')).toEqual({ status: 'found' });
    expect(await checkNamespace(getForbidden, 'shop')).toEqual({ status: 'missing', present: ['payments'] });
  });

  it('in a snapshot without Namespace objects, is judged by where its objects live', async () => {
    const { reader } = cluster([pod('payments'), pod('shop')]);
    expect(await checkNamespace(reader, 'shop')).toEqual({ status: 'found' });
    expect(await checkNamespace(reader, 'billing')).toEqual({ status: 'missing', present: ['payments', 'shop'] });
    // A replayed snapshot may hold some Namespace objects and not others.
    const partial = cluster([ns('payments'), pod('payments'), pod('shop')]);
    expect(await checkNamespace(partial.reader, 'shop', { snapshot: true })).toEqual({ status: 'found' });
    expect(await checkNamespace(partial.reader, 'shop')).toEqual({ status: 'missing', present: ['payments'] });
  });

  it('says so plainly, the likely meant namespace first', () => {
    expect(describeMissing('paymnts', ['default', 'kube-system', 'payments'], 'cluster lab')).toBe(
      'namespace "paymnts" not found in cluster lab (did you mean "payments"?); namespaces present: payments, default, kube-system',
    );
    const many = Array.from({ length: 12 }, (_, i) => `team-${String(i).padStart(2, '0')}`);
    expect(describeMissing('x', many, 'cluster lab')).toBe(
      'namespace "x" not found in cluster lab; namespaces present: team-00, team-01, team-02, team-03, team-04, team-05, team-06, team-07, … (12 in all)',
    );
    expect(describeMissing('x', undefined, 'cluster lab')).toMatch(/may not list namespaces/);
  });
});

function terminal(tty: CliIo['tty'], env: CliIo['env'] = {}) {
  const out = { stdout: '', stderr: '' };
  const io: CliIo = {
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
    env,
    ...(tty ? { tty } : {}),
  };
  return { io, out };
}

describe('the progress line', () => {
  const reads = async (progressReader: ClusterReader) => {
    await Promise.all([
      progressReader.list({ kind: 'pods', namespace: 'shop' }),
      progressReader.get({ kind: 'namespaces', name: 'shop' }),
    ]);
  };

  it('counts the reads on stderr of a terminal, rewritten in place, and is erased at the end', async () => {
    const { io, out } = terminal({ stderr: true, columns: 100 });
    const progress = startProgress(io, 'calmops triage: reading shop');
    await reads(progress.reader(cluster([ns('shop')]).reader));
    progress.end();
    expect(out.stderr.startsWith(`${CLEAR_LINE}calmops triage: reading shop… 0 reads done, 1 in flight`)).toBe(true);
    expect(out.stderr.endsWith(CLEAR_LINE)).toBe(true);
    expect(out.stderr).not.toContain('\n');
    expect(out.stdout).toBe('');
  });

  it('erases itself before anything else is written, and is cut to the width of the terminal', async () => {
    const { io, out } = terminal({ stderr: true, columns: 30 });
    const progress = startProgress(io, 'calmops triage: reading a-namespace-with-a-long-name');
    await progress.reader(cluster([]).reader).list({ kind: 'pods' });
    progress.io.stderr('warning: x\n');
    progress.end();
    const lines = out.stderr.split(CLEAR_LINE).filter(Boolean);
    for (const line of lines.filter((l) => !l.startsWith('warning'))) expect(line.length).toBeLessThanOrEqual(29);
    expect(out.stderr).toContain(`${CLEAR_LINE}warning: x\n`);
  });

  it('writes nothing where stderr is not a terminal, or the terminal is dumb', async () => {
    for (const { io, out } of [
      terminal(undefined),
      terminal({ stdout: true }),
      terminal({ stderr: true }, { TERM: 'dumb' }),
    ]) {
      const progress = startProgress(io, 'calmops triage: reading shop');
      await reads(progress.reader(cluster([ns('shop')]).reader));
      progress.end();
      expect(out.stderr).toBe('');
    }
  });
});
