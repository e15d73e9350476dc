import { describe, expect, it } from 'vitest';
import { DEMO_IDS } from '../../../local/slack/index.js';
import { defaultLocalPolicy } from '../../../local/stack.js';
import { RESOURCES } from '../../../src/cluster/resources.js';
import type { KubeObject } from '../../../src/cluster/types.js';
import { createStore } from '../../../src/store/index.js';
import { useSlackOnStack } from '../../support/slack-local-stack.js';
import { buttonsOf, renderMessage } from '../../support/slack-messages.js';
import { fixture, waitFor } from '../../support/workflow-harness.js';

/**
 * A channel's namespaces are a boundary. The incident channel here covers `orders` only; a pod there fails to reach
 * a database named in its log in another tenant's namespace, `payments`, which holds a ConfigMap and a pod with a
 * log of its own. Everything goes the real way (signed Slack requests, the state machines, the cluster reader
 * against the snapshot API server), and the snapshot API server's request log shows what reached the cluster:
 * nothing in `payments`, and no list across all namespaces.
 */

const channel = DEMO_IDS.incidents;

function crossTenantSnapshot() {
  const base = fixture('crashloop-analysis--missing-env');
  const failing =
    '2025-11-20T14:00:57.402Z INFO  order-worker 3.4.1 starting\n' +
    '2025-11-20T14:00:58.120Z ERROR failed to connect to postgres.payments.svc.cluster.local:5432: ' +
    'dial tcp 10.96.41.7:5432: connect: connection refused\n';
  const logs = Object.fromEntries(
    Object.entries(base.logs ?? {}).map(([key, text]) => [key, key.endsWith(':previous') ? failing : text]),
  );
  const payments: KubeObject[] = [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'payments', uid: 'a1b2c3d4-0000-4000-8000-000000000001' },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'postgres', namespace: 'payments', uid: 'a1b2c3d4-0000-4000-8000-000000000002' },
      spec: { clusterIP: '10.96.41.7', selector: { app: 'postgres' }, ports: [{ port: 5432, targetPort: 5432 }] },
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'payments-ledger', namespace: 'payments', uid: 'a1b2c3d4-0000-4000-8000-000000000003' },
      data: { 'ledger.conf': 'merchant_accounts=acme,globex' },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'postgres-0',
        namespace: 'payments',
        uid: 'a1b2c3d4-0000-4000-8000-000000000004',
        labels: { app: 'postgres' },
      },
      spec: { nodeName: 'ip-10-23-1-30.ec2.internal', containers: [{ name: 'postgres', image: 'postgres:16.4' }] },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'False' }],
        containerStatuses: [{ name: 'postgres', ready: false, restartCount: 3, state: { running: {} } }],
      },
    },
  ];
  return {
    objects: [...base.objects, ...payments],
    logs: { ...logs, 'payments/postgres-0/postgres': 'LOG: ledger of merchant acme reconciled\n' },
  };
}

describe('a channel’s namespaces bound everything its sessions read', () => {
  const base = defaultLocalPolicy() as { defaults: Record<string, unknown> };
  const { stack, slack, kube, command, triage, say, click } = useSlackOnStack(
    {
      snapshot: crossTenantSnapshot(),
      policy: { ...base, channels: { [channel]: { allowedNamespaces: ['orders'] } } },
    },
    { label: 'tenancy', startTimeoutMs: 120_000 },
  );

  const thread = (threadTs: string) =>
    slack()
      .messages(channel)
      .filter((m) => m.thread_ts === threadTs);
  const waitForText = (threadTs: string, pattern: RegExp) =>
    waitFor(
      `a thread message matching ${pattern}`,
      async () =>
        thread(threadTs)
          .map(renderMessage)
          .find((t) => pattern.test(t)),
      60_000,
    );
  const outsideReads = () =>
    kube()
      .requests()
      .filter((r) => r.namespace !== undefined && r.namespace !== 'orders')
      .map((r) => `${r.resource}@${r.namespace}`);
  // Lists of objects that belong to no namespace are no tenant's: nodes, classes, webhooks, cluster RBAC, node metrics.
  const CLUSTER_SCOPED = new Set([
    ...Object.values(RESOURCES)
      .filter((r) => !r.namespaced)
      .map((r) => r.plural),
    'nodes.metrics.k8s.io',
  ]);
  const allNamespaceLists = () =>
    kube()
      .requests()
      .filter((r) => r.namespace === undefined && !CLUSTER_SCOPED.has(r.resource ?? ''))
      .map((r) => String(r.resource));

  it('starts no session in a namespace outside the channel, and says so to the person who asked', async () => {
    const reply = await command('crashloop in payments');
    expect(reply.text).toMatch(/Namespace `payments` is outside this channel's namespaces \(orders\)/);
    expect(reply.text).toMatch(/nothing was started and nothing was read/);
    const platform = await command('dns failing in kube-system');
    expect(platform.text).toMatch(/`kube-system`, a platform namespace, is outside this channel's namespaces/);
    expect(outsideReads()).toEqual([]);
    const store = createStore({ client: stack().docClient, tableName: stack().env['CALMOPS_TABLE'] ?? 'calmops' });
    expect(await store.sessions.listOpenByChannel(channel)).toEqual([]);
  });

  it('follows nothing into another tenant: triage, thread reads and hypothesis tests stay in the channel', async () => {
    kube().resetRequests();
    const { threadTs } = await triage('order-worker crashloop in orders');
    await waitForText(threadTs, /similar incident/i);

    await say(threadTs, 'kubectl get configmaps -n payments');
    await waitForText(threadTs, /did not run.*kubectl get configmaps -n payments/);
    await say(threadTs, 'kubectl logs postgres-0 -n payments');
    await waitForText(threadTs, /did not run.*kubectl logs postgres-0 -n payments/);

    const offer = thread(threadTs).find((m) => buttonsOf(m).some((b) => b.action_id.startsWith('hypothesis_choose')));
    const test = offer && buttonsOf(offer).find((b) => b.action_id.startsWith('hypothesis_choose'));
    if (offer !== undefined && test !== undefined) {
      const before = thread(threadTs).length;
      await click(DEMO_IDS.requester, offer, test);
      await waitFor('the hypothesis test’s answer', async () => thread(threadTs).length > before || undefined, 60_000);
    }

    expect(outsideReads()).toEqual([]);
    expect(allNamespaceLists()).toEqual([]);
    const posted = thread(threadTs).map(renderMessage).join('\n');
    expect(posted).not.toMatch(/merchant|payments-ledger|ledger of/);
  }, 180_000);
});
