import { describe, expect, it } from 'vitest';
import type { ClusterReader, KubeObject, ListQuery } from '../../../src/cluster/types.js';
import { judgeRead, type NamespaceScope, scopedReader } from '../../../src/mcp/scope.js';

/** A reader that answers every list with one pod per namespace asked for, and records what was asked. */
function recordingReader(): { reader: ClusterReader; asked: ListQuery[] } {
  const asked: ListQuery[] = [];
  const pod = (namespace: string, name: string): KubeObject => ({ kind: 'Pod', metadata: { namespace, name } });
  return {
    asked,
    reader: {
      list: async (query) => {
        asked.push(query);
        if (query.kind === 'nodes') return [{ kind: 'Node', metadata: { name: 'n1' } }];
        const namespaces = query.namespace === undefined ? ['shop', 'payments', 'kube-system'] : [query.namespace];
        return namespaces.flatMap((ns) => [pod(ns, `${ns}-a`), pod(ns, `${ns}-b`)]);
      },
      get: async (query) => pod(query.namespace ?? '', query.name),
      logs: async () => 'log',
    },
  };
}

const shopAndPayments: NamespaceScope = { kind: 'list', namespaces: ['shop', 'payments'] };

describe("the MCP server's namespace scope", () => {
  it('turns a list across namespaces into one list per namespace of the scope, as a channel does', async () => {
    const { reader, asked } = recordingReader();
    const scoped = scopedReader(reader, shopAndPayments);
    const pods = await scoped.list({ kind: 'pods', labelSelector: 'k8s-app=kube-dns' });
    expect(asked).toEqual([
      { kind: 'pods', labelSelector: 'k8s-app=kube-dns', namespace: 'shop' },
      { kind: 'pods', labelSelector: 'k8s-app=kube-dns', namespace: 'payments' },
    ]);
    expect(pods.some((p) => p.metadata.namespace === 'kube-system')).toBe(false);
    expect(await scoped.list({ kind: 'pods', namespace: 'shop' })).toHaveLength(2);
  });

  it('refuses a read in another namespace before it is sent, as a policy refusal', async () => {
    const { reader, asked } = recordingReader();
    const scoped = scopedReader(reader, shopAndPayments);
    const refused = scoped.get({ kind: 'configmaps', namespace: 'kube-system', name: 'coredns' });
    await expect(refused).rejects.toMatchObject({ reason: 'refused-by-policy' });
    await expect(scoped.logs({ namespace: 'kube-system', pod: 'coredns-1' })).rejects.toMatchObject({
      reason: 'refused-by-policy',
    });
    await expect(scoped.list({ kind: 'pods', namespace: 'kube-system' })).rejects.toThrow(
      /would have read pods in namespace kube-system, but namespace kube-system .* is outside .* \(shop, payments\); it was not read/,
    );
    expect(asked).toEqual([]);
  });

  it('reads cluster-scoped kinds, and every namespace one at a time under "*"', async () => {
    const { reader } = recordingReader();
    expect(await scopedReader(reader, shopAndPayments).list({ kind: 'nodes' })).toHaveLength(1);
    const all = scopedReader(reader, { kind: 'all' });
    expect(await all.list({ kind: 'pods', namespace: 'kube-system' })).toHaveLength(2);
    expect(judgeRead({ verb: 'list', kind: 'pods', namespace: 'kube-system' }, { kind: 'all' })).toEqual({
      allowed: true,
    });
    expect(
      judgeRead({ verb: 'list', kind: 'pods', namespace: 'shop' }, { kind: 'all' }, { allNamespaces: true }),
    ).toMatchObject({
      allowed: false,
    });
    expect(judgeRead({ verb: 'list', kind: 'nodes' }, shopAndPayments, { allNamespaces: true })).toEqual({
      allowed: true,
    });
  });
});
