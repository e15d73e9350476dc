import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CalmopsProcess, spawnCalmops } from '../../local/calmops-process.js';
import { localClientOptions } from '../../local/dynamodb/index.js';
import { freePort } from '../../local/free-port.js';
import { DEMO_IDS } from '../../local/slack/index.js';
import { alertGroupId } from '../../src/alerts/group.js';
import { createDocumentClient, createDynamoClient, createStore, type Store } from '../../src/store/index.js';
import {
  type PostableAlert,
  type RunningAlertmanager,
  requireAlertmanagerBinary,
  startAlertmanager,
  webhookConfig,
} from '../support/alertmanager-process.js';
import { waitFor } from '../support/workflow-harness.js';

/**
 * A real Alertmanager delivers a burst of alert groups to `npm start`, whose whole process group is killed with
 * `kill -9` while the groups are being opened, then started again on the same data directory and port. Alertmanager
 * keeps sending what was not acknowledged. Every group must end with exactly one open session, bound to it, with
 * one thread and a workflow run: none lost, none doubled, no session that belongs to no group.
 */

const TOKEN = 'alertmanager-crash-token-2d9e4f7a1b3c5d6e';
const GROUPS = 30;
const SECRET = 'alertmanager-crash-signing-secret-8f2a';

function crashLooping(index: number): PostableAlert {
  const pod = `order-worker-69b7c4d8f5-c${String(index).padStart(4, '0')}`;
  return {
    labels: {
      alertname: 'KubePodCrashLooping',
      namespace: 'orders',
      pod,
      container: 'order-worker',
      job: 'kube-state-metrics',
      reason: 'CrashLoopBackOff',
      severity: 'warning',
    },
    annotations: {
      summary: 'Pod is crash looping.',
      description: `Pod orders/${pod} (order-worker) is in waiting state (reason: "CrashLoopBackOff").`,
    },
    startsAt: new Date(Date.now() - 60_000).toISOString(),
    generatorURL: 'http://prometheus.invalid/graph?g0.expr=kube_pod_container_status_waiting_reason',
  };
}

async function storeOf(proc: CalmopsProcess): Promise<Store> {
  const endpoint = proc.services['dynamodb']?.url ?? '';
  return createStore({
    client: createDocumentClient(createDynamoClient(localClientOptions(endpoint))),
    tableName: 'calmops',
  });
}

describe('an alert burst across kill -9 of npm start', () => {
  let dataDir: string;
  let port: number;
  let proc: CalmopsProcess | undefined;
  let alertmanager: RunningAlertmanager | undefined;

  const start = () =>
    spawnCalmops({
      dataDir,
      port,
      signingSecret: SECRET,
      env: { ALERTS_TOKEN: TOKEN, CALMOPS_RECONCILE_SECONDS: '2', CALMOPS_MIN_TIME_IN_STATE_SECONDS: '0' },
      readyTimeoutMs: 120_000,
    });

  beforeAll(async () => {
    await requireAlertmanagerBinary();
    dataDir = await mkdtemp(join(tmpdir(), 'calmops-alert-crash-'));
    port = await freePort();
    proc = await start();
    alertmanager = await startAlertmanager({
      config: webhookConfig({
        url: `${proc.origin}/alerts/alertmanager`,
        bearerToken: TOKEN,
        groupBy: ['alertname', 'namespace', 'pod'],
        groupWait: '1s',
        groupInterval: '2s',
        repeatInterval: '1h',
      }),
    });
  }, 180_000);

  afterAll(async () => {
    await alertmanager?.stop();
    await proc?.killHard();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('opens every group exactly once', async () => {
    const alerts = Array.from({ length: GROUPS }, (_, i) => crashLooping(i));
    await alertmanager?.push(alerts);
    let store = await storeOf(proc as CalmopsProcess);
    const channel = DEMO_IDS.incidents;
    // Killed once some groups are open and others are still on their way.
    await waitFor(
      'the first sessions of the burst',
      async () => ((await store.sessions.listOpenByChannel(channel)).length >= 3 ? true : undefined),
      60_000,
      20,
    );
    await proc?.killHard();
    proc = await start();
    store = await storeOf(proc);

    const groupIds = alerts.map((a) =>
      alertGroupId({
        source: 'alertmanager',
        key: `{}:{alertname="KubePodCrashLooping", namespace="orders", pod="${a.labels['pod']}"}`,
        commonLabels: {},
      }),
    );
    const bound = await waitFor(
      'every group bound to a session',
      async () => {
        const records = await Promise.all(groupIds.map((id) => store.alertGroups.get(id)));
        return records.every((r) => r?.phase === 'bound') ? records : undefined;
      },
      180_000,
      500,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; Alertmanager said:\n${alertmanager?.output() ?? ''}`);
    });
    const open = await store.sessions.listOpenByChannel(channel, { limit: 1000 });
    const sessionIds = bound.map((r) => r?.sessionId);
    // Exactly one session per group, and no session that belongs to none.
    expect(new Set(sessionIds).size).toBe(GROUPS);
    // Listed by the channel's index, where a `kill -9` mid-write may leave an entry twice: the sessions are the ids.
    const openIds = [...new Set(open.map((s) => s.id))].sort();
    expect(openIds).toEqual([...sessionIds].sort());
    // One thread each, and each session's workflow runs or has run.
    const sessions = await Promise.all(openIds.map((id) => store.sessions.getRequired(id)));
    expect(new Set(sessions.map((s) => s.threadTs)).size).toBe(GROUPS);
    for (const session of sessions) expect(session.executionArn, session.id).toBeDefined();
  }, 420_000);
});
