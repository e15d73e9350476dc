import { Logger } from '@aws-lambda-powertools/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalHttpServer, startLocalHttpServer } from '../../../local/http-server.js';
import { DEMO_IDS } from '../../../local/slack/index.js';
import { alertGroupId } from '../../../src/alerts/group.js';
import { createSlackFunction } from '../../../src/app/slack-runtime.js';
import { SWEEP_INTENT } from '../../../src/triage/route/routing.js';
import {
  type AlertInput,
  alertmanagerBody,
  crashLooping,
  customAlert,
  targetDown,
} from '../../support/alertmanager.js';
import { type AlertOutcome, alertChecks, ONCALL, ORDERS_POD, useAlertsStack } from '../../support/alerts-stack.js';
import { signedSlack, slashCommand } from '../../support/signed-slack.js';

/**
 * Alertmanager's webhook against the whole local stack: the Slack function's own handler behind the local HTTP
 * server, the workflow on the local Step Functions endpoint, the crash-looping `orders` namespace as the cluster.
 */

const TOKEN = 'alerts-intake-test-token-4f1d9c0b2a7e6d5c';

describe('alerts open calmops sessions', () => {
  const alerts = useAlertsStack(TOKEN);
  let http: LocalHttpServer;

  beforeAll(async () => {
    const handle = createSlackFunction(alerts.stack.env, { logger: new Logger({ logLevel: 'SILENT' }) });
    http = await startLocalHttpServer({ slack: (r) => handle(r), health: async () => ({ ok: true, services: {} }) });
  });
  afterAll(async () => {
    await http?.close();
  });

  async function post(body: unknown, authorization: string | null = `Bearer ${TOKEN}`) {
    const response = await fetch(`${http.origin}/alerts/alertmanager`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(authorization === null ? {} : { authorization }),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as AlertOutcome & Record<string, unknown> };
  }

  const { roots, thread, waitForThread, waitForFixValidation } = alertChecks(alerts);

  const crash = (alerts: AlertInput[] = [crashLooping('orders', ORDERS_POD)], status?: 'resolved') =>
    alertmanagerBody({ alerts, ...(status === undefined ? {} : { status }) });

  let opened: Required<Pick<AlertOutcome, 'sessionId' | 'channelId' | 'threadTs'>>;

  it('opens one session for a firing group, in the channel the policy routes it to, and posts the envelope there', async () => {
    const { status, json } = await post(crash());
    expect(status).toBe(200);
    expect(json).toMatchObject({
      outcome: 'opened',
      channelId: ONCALL,
      intent: 'crashloop-analysis',
      namespace: 'orders',
      cluster: 'default',
    });
    opened = { sessionId: json.sessionId ?? '', channelId: ONCALL, threadTs: json.threadTs ?? '' };
    const [root, ...others] = roots(ONCALL, 'KubePodCrashLooping');
    expect(others).toEqual([]);
    expect(root?.ts).toBe(opened.threadTs);
    expect(JSON.stringify(root?.blocks)).toContain(ORDERS_POD);
    expect(roots(DEMO_IDS.incidents, 'KubePodCrashLooping')).toEqual([]);

    const session = await alerts.store.sessions.getRequired(opened.sessionId);
    expect(session).toMatchObject({
      intent: 'crashloop-analysis',
      namespace: 'orders',
      cluster: 'default',
      channelId: ONCALL,
      threadTs: opened.threadTs,
      requester: DEMO_IDS.botUser,
    });
    expect(await alerts.store.threads.sessionFor(ONCALL, opened.threadTs)).toBe(opened.sessionId);
    await waitForThread(ONCALL, opened.threadTs, /Triage: crashloop-analysis in orders/);
  });

  it('posts repeats and updates of the group into its thread, and an identical redelivery once', async () => {
    const update = crash([crashLooping('orders', ORDERS_POD), crashLooping('orders', 'order-worker-69b7c4d8f5-w8mzs')]);
    const first = await post(update);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ outcome: 'updated', ...opened });
    await waitForThread(ONCALL, opened.threadTs, /Alert update.*2 firing/s);
    const again = await post(update);
    expect(again.json).toEqual({ outcome: 'duplicate' });
    expect(thread(ONCALL, opened.threadTs).filter((t) => t.startsWith('Alert update'))).toHaveLength(1);
    expect(roots(ONCALL, 'KubePodCrashLooping')).toHaveLength(1);
  });

  it('opens one session when the same group arrives twice at once', async () => {
    const mismatch = (deployment: string): AlertInput => ({
      labels: {
        alertname: 'KubeDeploymentReplicasMismatch',
        deployment,
        job: 'kube-state-metrics',
        namespace: 'orders',
        severity: 'warning',
      },
      annotations: { summary: 'Deployment has not matched the expected number of replicas.' },
    });
    const body = alertmanagerBody({ alerts: [mismatch('order-worker')] });
    const both = await Promise.all([post(body), post(body)]);
    // The second arrives while the first is still being handled: it is asked to come again, never called a
    // duplicate of a delivery that might not finish; once the first has, the repeat is a duplicate.
    expect(both.map((r) => r.status).sort()).toEqual([200, 503]);
    expect(both.map((r) => r.json.outcome).sort()).toEqual(['opened', 'retry']);
    expect((await post(body)).json.outcome).toBe('duplicate');
    expect(roots(ONCALL, 'KubeDeploymentReplicasMismatch')).toHaveLength(1);

    // Two different notifications of one group racing: the conditional claim lets one open the session.
    const one = alertmanagerBody({ alerts: [targetDown('orders', 'order-api')] });
    const two = alertmanagerBody({ alerts: [targetDown('orders', 'order-api'), targetDown('orders', 'order-worker')] });
    expect(one.groupKey).toBe(two.groupKey);
    const raced = await Promise.all([post(one), post(two)]);
    expect(raced.filter((r) => r.json.outcome === 'opened')).toHaveLength(1);
    for (const r of raced) expect(['opened', 'updated', 'retry']).toContain(r.json.outcome);
    expect(roots(ONCALL, 'TargetDown')).toHaveLength(1);
    const group = await alerts.store.alertGroups.get(
      alertGroupId({ source: 'alertmanager', key: one.groupKey, commonLabels: one.commonLabels }),
    );
    expect(group?.phase).toBe('bound');
    expect(group?.sessionId).toBe(raced.find((r) => r.json.outcome === 'opened')?.json.sessionId);
  });

  it('reports the resolved group to its session, which validates the fix with a fresh triage', async () => {
    const { status, json } = await post(crash([crashLooping('orders', ORDERS_POD)], 'resolved'));
    expect(status).toBe(200);
    expect(json).toMatchObject({ outcome: 'validating', ...opened });
    await waitForThread(ONCALL, opened.threadTs, /The alert resolved/);
    await waitForThread(ONCALL, opened.threadTs, /Validating the fix/);
    const validated = await waitForFixValidation(opened.sessionId);
    // The container still crashes in the served cluster: the alert's word alone does not close the incident.
    expect(validated.data?.['passed']).toBe(false);
    expect(roots(ONCALL, 'KubePodCrashLooping')).toHaveLength(1);
    // A resolution for a group calmops never opened has nothing to validate.
    const stray = await post(alertmanagerBody({ alerts: [crashLooping('billing', 'invoice-1')], status: 'resolved' }));
    expect(stray.json).toEqual({ outcome: 'ignored', reason: 'no open session for this alert group' });
  });

  it('asks for a resolution to be sent again while its group is still being opened, so the session hears it', async () => {
    const body = alertmanagerBody({ alerts: [crashLooping('billing', 'invoice-2')], status: 'resolved' });
    const groupId = alertGroupId({ source: 'alertmanager', key: body.groupKey, commonLabels: body.commonLabels });
    // Another delivery holds a live claim and has not bound its session yet.
    await alerts.store.alertGroups.claim(
      { groupId, source: 'alertmanager', groupKey: body.groupKey, channelId: DEMO_IDS.incidents },
      { leaseSeconds: 60 },
    );
    const { status, json } = await post(body);
    expect(status).toBe(503);
    expect(json).toMatchObject({ outcome: 'retry', reason: 'the session of this alert group is still being opened' });
  });

  it('sweeps the namespace for an alert no template lists', async () => {
    const { status, json } = await post(alertmanagerBody({ alerts: [customAlert('billing')] }));
    expect(status).toBe(200);
    expect(json).toMatchObject({ outcome: 'opened', intent: SWEEP_INTENT, namespace: 'billing' });
    // No route names billing: the default alerts channel.
    expect(json.channelId).toBe(DEMO_IDS.incidents);
    const [root] = roots(DEMO_IDS.incidents, 'PaymentsQueueBacklogHigh');
    expect(JSON.stringify(root?.blocks)).toContain('no triage template lists this alert');
    expect((await alerts.store.sessions.getRequired(json.sessionId ?? '')).intent).toBe(SWEEP_INTENT);
  });

  it('refuses a missing or wrong token with 401 and a bad body with 400 naming the field', async () => {
    const body = crash();
    const missing = await post(body, null);
    expect(missing.status).toBe(401);
    const wrong = await post(body, `Bearer ${TOKEN.slice(0, -1)}x`);
    expect(wrong.status).toBe(401);
    const basic = await post(body, `Basic ${Buffer.from(`calmops:${TOKEN}`).toString('base64')}`);
    expect(basic.status).toBe(401);
    const bad = await post({ ...body, alerts: [{ ...body.alerts[0], status: 'pending' }] });
    expect(bad.status).toBe(400);
    expect((bad.json['issues'] as { path: string }[]).map((i) => i.path)).toEqual(['alerts.0.status']);
    const notJson = await post('status=firing');
    expect(notJson.status).toBe(400);
    expect(roots(ONCALL, 'KubePodCrashLooping')).toHaveLength(1);
  });

  it('leaves the Slack endpoint as it was: unsigned requests refused, signed ones answered', async () => {
    const unsigned = await fetch(`${http.origin}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'command=%2Ftriage&text=help',
    });
    expect(unsigned.status).toBe(401);
    const send = signedSlack({ url: http.origin, signingSecret: alerts.stack.env['SLACK_SIGNING_SECRET'] ?? '' });
    const help = await send(slashCommand('help'));
    expect(help.status).toBe(200);
    expect(help.body).toContain('/triage');
    // The alert token is no Slack signature.
    const bearer = await fetch(`${http.origin}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(crash()),
    });
    expect(bearer.status).toBe(401);
  });
});
