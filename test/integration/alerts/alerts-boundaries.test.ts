import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalHttpServer, startLocalHttpServer } from '../../../local/http-server.js';
import { DEMO_IDS } from '../../../local/slack/index.js';
import { createSlackFunction } from '../../../src/app/slack-runtime.js';
import { type AlertInput, alertmanagerBody, crashLooping } from '../../support/alertmanager.js';
import { type AlertOutcome, alertChecks, ONCALL, ORDERS_POD, useAlertsStack } from '../../support/alerts-stack.js';

/**
 * What an alert may not do, through Alertmanager's webhook on the whole local stack: open a session in a namespace
 * outside its channel's, name a cluster calmops is not configured for, post its sender's credentials, or have a
 * namespace the cluster does not have triaged as if it were healthy.
 */

const TOKEN = 'alerts-boundaries-test-token-8e2b7d1c0f9a';

describe('alert boundaries', () => {
  const alerts = useAlertsStack(TOKEN, {
    policy: {
      defaults: { cluster: 'default', approverGroup: DEMO_IDS.approvers, seniorGroup: DEMO_IDS.seniors },
      channels: { [ONCALL]: { allowedNamespaces: ['orders', 'ghost-*'] } },
      alerts: { channel: ONCALL },
    },
  });
  let http: LocalHttpServer;

  beforeAll(async () => {
    const handle = createSlackFunction(alerts.stack.env, { logger: new Logger({ logLevel: 'SILENT' }) });
    http = await startLocalHttpServer({ slack: (r) => handle(r), health: async () => ({ ok: true, services: {} }) });
  });
  afterAll(async () => {
    await http?.close();
  });

  async function post(body: unknown) {
    const response = await fetch(`${http.origin}/alerts/alertmanager`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as AlertOutcome & Record<string, unknown> };
  }

  const { roots, waitForThread } = alertChecks(alerts);
  const sessions = async () => (await alerts.store.sessions.listOpenByChannel(ONCALL)).map((s) => s.namespace);

  it('opens no session in a namespace outside the channel, and says so in the channel without reading it', async () => {
    alerts.stack.kube?.resetRequests();
    const { status, json } = await post(alertmanagerBody({ alerts: [crashLooping('payments', 'ledger-0')] }));
    expect(status).toBe(200);
    expect(json).toMatchObject({ outcome: 'refused', notified: true });
    expect(String(json['reason'])).toMatch(/`payments` is outside this channel's namespaces \(orders, ghost-\*\)/);
    const notice = alerts.slack.messages(ONCALL).find((m) => m.text.includes('payments'));
    expect(notice?.text ?? JSON.stringify(notice?.blocks)).toMatch(/outside this channel's namespaces/);
    expect(alerts.stack.kube?.requests().filter((r) => r.namespace === 'payments')).toEqual([]);
    expect(await sessions()).toEqual([]);
  });

  it('refuses a cluster label naming a cluster calmops is not configured for', async () => {
    const alert: AlertInput = crashLooping('orders', ORDERS_POD, { cluster: 'prod-eu-9' });
    const { json } = await post(alertmanagerBody({ alerts: [alert] }));
    expect(json).toMatchObject({ outcome: 'refused', notified: true });
    expect(String(json['reason'])).toMatch(
      /names `prod-eu-9`, which is not a cluster calmops is configured for \(configured: `default`\)/,
    );
    expect(await sessions()).toEqual([]);
  });

  it('posts the sender’s links without the credentials in them', async () => {
    const body = alertmanagerBody({
      alerts: [crashLooping('orders', ORDERS_POD)],
      externalURL: 'https://admin:Velvet842Hn2q@alertmanager.example.com/?token=q7Lr2mXv9TzPk4WnR8s1&silenced=false',
    });
    const { json } = await post(body);
    expect(json.outcome).toBe('opened');
    const root = roots(ONCALL, 'KubePodCrashLooping').find((m) => m.ts === json.threadTs);
    const posted = JSON.stringify(root);
    expect(posted).not.toContain('Velvet842Hn2q');
    expect(posted).not.toContain('q7Lr2mXv9TzPk4WnR8s1');
    expect(posted).toContain('https://alertmanager.example.com/?silenced=false');
  });

  it('past the cap on open alert sessions, lists further groups in one overflow thread', async () => {
    const open = (await alerts.store.sessions.listOpenByChannel(ONCALL)).length;
    const capped = createSlackFunction(
      { ...alerts.stack.env, CALMOPS_ALERT_SESSION_CAP: String(open + 1) },
      { logger: new Logger({ logLevel: 'SILENT' }) },
    );
    const server = await startLocalHttpServer({
      slack: (r) => capped(r),
      health: async () => ({ ok: true, services: {} }),
    });
    try {
      const outcomes: (AlertOutcome & Record<string, unknown>)[] = [];
      for (let i = 0; i < 4; i++) {
        const response = await fetch(`${server.origin}/alerts/alertmanager`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify(
            alertmanagerBody({
              alerts: [crashLooping('orders', `order-worker-69b7c4d8f5-s${i}`)],
              groupBy: ['namespace', 'alertname', 'pod'],
            }),
          ),
        });
        expect(response.status).toBe(200);
        outcomes.push((await response.json()) as AlertOutcome & Record<string, unknown>);
      }
      expect(outcomes.map((o) => o.outcome)).toEqual(['opened', 'overflow', 'overflow', 'overflow']);
      const threads = new Set(outcomes.slice(1).map((o) => o.threadTs));
      expect(threads.size).toBe(1);
      const overflowTs = [...threads][0] ?? '';
      expect(alerts.slack.messages(ONCALL).filter((m) => /Alert overflow/.test(JSON.stringify(m)))).toHaveLength(1);
      expect(
        alerts.slack.messages(ONCALL).filter((m) => m.thread_ts === overflowTs && m.ts !== overflowTs),
      ).toHaveLength(3);
      expect((await alerts.store.sessions.listOpenByChannel(ONCALL)).length).toBe(open + 1);
    } finally {
      await server.close();
    }
  });

  it('says a namespace the cluster does not have was not found, rather than triaging nothing', async () => {
    const { json } = await post(alertmanagerBody({ alerts: [crashLooping('ghost-town', 'web-0')] }));
    expect(json.outcome).toBe('opened');
    await waitForThread(ONCALL, json.threadTs ?? '', /Namespace "ghost-town" was not found on cluster default/);
  });
});
