import { describe, expect, it } from 'vitest';
import { DEMO_IDS } from '../../../local/slack/index.js';
import { defaultLocalPolicy } from '../../../local/stack.js';
import { createStore } from '../../../src/store/index.js';
import { useSlackOnStack } from '../../support/slack-local-stack.js';
import { renderMessage } from '../../support/slack-messages.js';
import { fixture, waitFor } from '../../support/workflow-harness.js';

/**
 * Reads asked for in a session's thread stay inside the session's scope: its namespace, the cluster-scoped kinds and
 * the namespaces the channel policy adds. Everything goes the real way: signed Slack requests to the Slack function,
 * the real state machines on the local Step Functions endpoint, the cluster reader against the snapshot API server,
 * whose request log shows what reached the cluster.
 */

const { requester } = DEMO_IDS;
const channel = DEMO_IDS.incidents;

describe('read scope in a session thread', () => {
  const base = defaultLocalPolicy() as { defaults: Record<string, unknown> };
  const { stack, slack, kube, command, latestRootTs, say } = useSlackOnStack(
    {
      snapshot: fixture('pvc-binding--no-default-storageclass'),
      policy: { ...base, channels: { [channel]: { allowedNamespaces: ['student03', 'monitoring'] } } },
    },
    { label: 'scope', startTimeoutMs: 120_000 },
  );

  const thread = (threadTs: string) =>
    slack()
      .messages(channel)
      .filter((m) => m.thread_ts === threadTs)
      .map(renderMessage);
  const waitForText = (threadTs: string, pattern: RegExp) =>
    waitFor(`a thread message matching ${pattern}`, async () => thread(threadTs).find((t) => pattern.test(t)), 60_000);

  it('refuses reads outside the session’s namespace and runs the ones inside it', async () => {
    const reply = await command('pvc stuck pending in student03');
    const sessionId = /session `([^`]+)`/.exec(reply.text)?.[1] ?? '';
    expect(sessionId).not.toBe('');
    const threadTs = latestRootTs();
    await waitForText(threadTs, /similar incident/i);
    kube().resetRequests();

    // Outside the scope: nothing is sent to the cluster, and the thread says why and what is allowed.
    await say(threadTs, 'kubectl logs coredns-7db6d8ff4d-abcde -n kube-system');
    const logs = await waitForText(threadTs, /did not run.*kubectl logs coredns/);
    expect(logs).toMatch(/namespace `kube-system` is outside this session/);
    expect(logs).toMatch(/`student03`, `monitoring`/);
    expect(logs).toMatch(/nodes/);
    expect(logs).toMatch(/allowedNamespaces/);
    await say(threadTs, 'kubectl get configmaps -n kube-system');
    await waitForText(threadTs, /did not run.*kubectl get configmaps -n kube-system/);
    await say(threadTs, 'kubectl get pods -A');
    await waitForText(threadTs, /did not run.*kubectl get pods -A.*across all namespaces/);

    // Inside the scope: the session's namespace, a namespace the policy adds, and cluster-scoped kinds.
    await say(threadTs, 'kubectl get configmaps -n monitoring');
    await waitForText(threadTs, /`kubectl get configmaps -n monitoring`: /);
    await say(threadTs, 'kubectl get nodes');
    await waitForText(threadTs, /`kubectl get nodes`: /);
    await say(threadTs, 'kubectl get configmaps');
    await waitForText(threadTs, /`kubectl get configmaps`: /);

    const requests = kube().requests();
    expect(requests.filter((r) => r.namespace === 'kube-system')).toEqual([]);
    expect(requests.filter((r) => r.resource === 'pods' && r.namespace === undefined)).toEqual([]);
    const seen = requests.map((r) => `${r.resource}@${r.namespace ?? '(cluster)'}`);
    expect(seen).toEqual(expect.arrayContaining(['configmaps@monitoring', 'nodes@(cluster)', 'configmaps@student03']));

    // Each refusal is on the session's timeline, with what was asked for.
    const store = createStore({ client: stack().docClient, tableName: stack().env['CALMOPS_TABLE'] ?? 'calmops' });
    const refused = (await store.timeline.list(sessionId)).filter((e) => e.type === 'read.refused');
    expect(refused.map((e) => [e.actor, e.data?.['code'], e.data?.['namespace']])).toEqual([
      [requester, 'namespace-not-allowed', 'kube-system'],
      [requester, 'namespace-not-allowed', 'kube-system'],
      [requester, 'all-namespaces', 'student03'],
    ]);
  }, 180_000);
});
