import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSlackLambdaHandler, type SlackLambdaHandler } from '../../../functions/slack.js';
import { DEMO_IDS } from '../../../local/slack/index.js';
import { alertGroupId } from '../../../src/alerts/group.js';
import { createAlarmEventFunction, createSlackFunction } from '../../../src/app/slack-runtime.js';
import { SWEEP_INTENT } from '../../../src/triage/route/routing.js';
import { type AlertOutcome, alertChecks, ONCALL, ORDERS_POD, useAlertsStack } from '../../support/alerts-stack.js';
import { alarmEvent, awsGuideExample, crashLoopAlarm } from '../../support/cloudwatch-events.js';

/**
 * CloudWatch alarms through EventBridge against the whole local stack: the Slack function's Lambda entry, given the
 * events EventBridge would deliver, with the workflow on the local Step Functions endpoint and the crash-looping
 * `orders` namespace as the cluster.
 */

describe('CloudWatch alarms open calmops sessions', () => {
  const alerts = useAlertsStack();
  let handler: SlackLambdaHandler;

  beforeAll(() => {
    const options = { logger: new Logger({ logLevel: 'SILENT' }) };
    handler = createSlackLambdaHandler({
      http: createSlackFunction(alerts.stack.env, options),
      alarms: createAlarmEventFunction(alerts.stack.env, options),
    });
  });

  const deliver = async (event: Record<string, unknown>) => (await handler(event as never)) as AlertOutcome;

  const { roots, waitForThread, waitForFixValidation } = alertChecks(alerts);

  const firing = () => crashLoopAlarm('orders', ORDERS_POD, { at: '2030-03-04T02:10:07.412Z' });
  let opened: { sessionId: string; threadTs: string };

  it('opens one session for an alarm, named after the kube-prometheus alert, in the routed channel', async () => {
    const outcome = await deliver(firing());
    expect(outcome).toMatchObject({
      outcome: 'opened',
      channelId: ONCALL,
      intent: 'crashloop-analysis',
      namespace: 'orders',
      cluster: 'default',
    });
    opened = { sessionId: outcome.sessionId ?? '', threadTs: outcome.threadTs ?? '' };
    const [root, ...others] = roots(ONCALL, 'KubePodCrashLooping');
    expect(others).toEqual([]);
    expect(root?.ts).toBe(opened.threadTs);
    const blocks = JSON.stringify(root?.blocks);
    expect(blocks).toContain(ORDERS_POD);
    expect(blocks).toContain('calmops-orders-crashloop');
    expect(blocks).toContain('console.aws.amazon.com/cloudwatch');
    expect(await alerts.store.sessions.getRequired(opened.sessionId)).toMatchObject({
      intent: 'crashloop-analysis',
      namespace: 'orders',
      cluster: 'default',
      channelId: ONCALL,
      threadTs: opened.threadTs,
      requester: DEMO_IDS.botUser,
    });
    const group = await alerts.store.alertGroups.get(
      alertGroupId({
        source: 'cloudwatch',
        key: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:calmops-orders-crashloop',
        commonLabels: { cluster: 'default' },
      }),
    );
    expect(group).toMatchObject({ phase: 'bound', sessionId: opened.sessionId });
    await waitForThread(ONCALL, opened.threadTs, /Triage: crashloop-analysis in orders/);
  });

  it('handles an event EventBridge delivers twice once', async () => {
    expect(await deliver(firing())).toEqual({ outcome: 'duplicate' });
    expect(roots(ONCALL, 'KubePodCrashLooping')).toHaveLength(1);
  });

  it('ignores INSUFFICIENT_DATA and events that are not alarm state changes, without a word in Slack', async () => {
    const before = alerts.slack.messages(ONCALL).length + alerts.slack.messages(DEMO_IDS.incidents).length;
    const gap = await deliver(crashLoopAlarm('orders', ORDERS_POD, { state: 'INSUFFICIENT_DATA' }));
    expect(gap).toMatchObject({ outcome: 'ignored' });
    const scheduled = await deliver({ ...awsGuideExample(), 'detail-type': 'Scheduled Event', source: 'aws.events' });
    expect(scheduled).toMatchObject({ outcome: 'invalid' });
    expect(alerts.slack.messages(ONCALL).length + alerts.slack.messages(DEMO_IDS.incidents).length).toBe(before);
  });

  it('validates the fix with a fresh triage when the alarm returns to OK', async () => {
    const outcome = await deliver(
      crashLoopAlarm('orders', ORDERS_POD, { state: 'OK', at: '2030-03-04T03:10:07.412Z' }),
    );
    expect(outcome).toMatchObject({ outcome: 'validating', sessionId: opened.sessionId, threadTs: opened.threadTs });
    await waitForThread(ONCALL, opened.threadTs, /The alert resolved/);
    const validated = await waitForFixValidation(opened.sessionId);
    // The container still crashes in the served cluster: the alarm's word alone does not close the incident.
    expect(validated.data?.['passed']).toBe(false);
    expect(roots(ONCALL, 'KubePodCrashLooping')).toHaveLength(1);
  });

  it('sweeps for an alarm no template explains, in the default alerts channel', async () => {
    const outcome = await deliver(
      alarmEvent({
        alarmName: 'calmops-billing-queue-depth',
        description: 'Invoices wait in the queue',
        state: 'ALARM',
        metrics: [{ name: 'QueueDepth', namespace: 'Billing', dimensions: {} }],
        tags: { namespace: 'billing' },
      }),
    );
    expect(outcome).toMatchObject({ outcome: 'opened', intent: SWEEP_INTENT, channelId: DEMO_IDS.incidents });
    const [root] = roots(DEMO_IDS.incidents, 'calmops-billing-queue-depth');
    expect(JSON.stringify(root?.blocks)).toContain('no triage template lists this alert');
    expect((await alerts.store.sessions.getRequired(outcome.sessionId ?? '')).namespace).toBe('billing');
  });

  it('still answers API Gateway requests on the HTTP paths', async () => {
    const request = (rawPath: string, headers: Record<string, string>) =>
      ({
        rawPath,
        headers,
        body: '{}',
        isBase64Encoded: false,
        requestContext: { http: { method: 'POST' } },
      }) as unknown as APIGatewayProxyEventV2;
    const slackAnswer = (await handler(request('/slack/events', {}))) as APIGatewayProxyStructuredResultV2;
    expect(slackAnswer.statusCode).toBe(401);
    // The alert route still wants its bearer token; EventBridge's path needs none because IAM invokes it.
    const alertAnswer = (await handler(
      request('/alerts/alertmanager', { 'content-type': 'application/json' }),
    )) as APIGatewayProxyStructuredResultV2;
    expect(alertAnswer.statusCode).toBe(401);
  });
});
