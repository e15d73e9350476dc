import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createSlackLambdaHandler, isEventBridgeEvent } from '../../../functions/slack.js';
import {
  type AlarmReading,
  CONTAINER_INSIGHTS_ALERTS,
  DIMENSION_LABELS,
  parseAlarmStateChange,
} from '../../../src/alerts/cloudwatch.js';
import { type AlertGroup, alertGroupId } from '../../../src/alerts/group.js';
import { alertIntents, mapAlertGroup } from '../../../src/alerts/map.js';
import type { AlarmEventFunction, SlackFunction } from '../../../src/app/slack-runtime.js';
import { SWEEP_INTENT } from '../../../src/triage/route/routing.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';
import { alarmEvent, awsGuideExample, crashLoopAlarm } from '../../support/cloudwatch-events.js';

const templates = loadTemplates();

function reading(event: unknown): AlarmReading {
  const parsed = parseAlarmStateChange(event);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.reading;
}

function group(event: unknown): AlertGroup {
  const read = reading(event);
  if ('ignored' in read) throw new Error(`ignored: ${read.ignored}`);
  return read.group;
}

function issuesOf(event: unknown) {
  const parsed = parseAlarmStateChange(event);
  if (parsed.ok) throw new Error('the event was accepted');
  return parsed.issues;
}

describe('CloudWatch alarm state changes (EventBridge)', () => {
  it('read the user guide’s example into a firing group keyed by the alarm ARN', () => {
    const g = group(awsGuideExample());
    expect(g).toMatchObject({
      source: 'cloudwatch',
      key: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:ServerCpuTooHigh',
      status: 'firing',
      truncated: 0,
      link: 'https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1#alarmsV2:alarm/ServerCpuTooHigh',
    });
    expect(g.alerts).toHaveLength(1);
    const [alert] = g.alerts;
    // Not a Container Insights metric: the alarm keeps its own name, and no template lists it.
    expect(alert).toMatchObject({
      name: 'ServerCpuTooHigh',
      status: 'firing',
      labels: { alertname: 'ServerCpuTooHigh', instance: 'i-12345678901234567' },
      annotations: {
        summary: 'Goes into alarm when server CPU utilization is too high!',
        description: expect.stringMatching(/^Threshold Crossed: 1 out of the last 1 datapoints \[99\.5/),
      },
      // CloudWatch's `+0000` offset, read as UTC.
      startsAt: '2019-10-02T17:04:40.989Z',
    });
    expect(alert && 'endsAt' in alert).toBe(false);
    expect(alert?.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(mapAlertGroup(g, templates)).toMatchObject({ intent: SWEEP_INTENT, via: 'sweep' });
  });

  it('name a Container Insights alarm after the kube-prometheus alert, so its template triages it', () => {
    const g = group(crashLoopAlarm('orders', 'order-worker-69b7c4d8f5-fk2lp', { cluster: 'prod-eu' }));
    const [alert] = g.alerts;
    expect(alert?.name).toBe('KubePodCrashLooping');
    expect(alert?.labels).toEqual({
      alertname: 'KubePodCrashLooping',
      cluster: 'prod-eu',
      namespace: 'orders',
      // FullPodName is the pod kubectl knows; PodName drops the ReplicaSet's hash.
      pod: 'order-worker-69b7c4d8f5-fk2lp',
    });
    // The alarm's own name stays in sight, so the on-call can find it in CloudWatch.
    expect(alert?.annotations['summary']).toBe(
      'calmops-orders-crashloop: Containers in orders are in CrashLoopBackOff',
    );
    expect(g.commonLabels).toEqual(alert?.labels);
    expect(mapAlertGroup(g, templates)).toMatchObject({
      intent: 'crashloop-analysis',
      via: 'template',
      namespace: 'orders',
      cluster: 'prod-eu',
    });
  });

  it('name node, pending-pod and restart alarms after the kube-prometheus alerts for the same conditions', () => {
    const nameOf = (metric: string, dimensions: Record<string, string>) =>
      group(alarmEvent({ alarmName: `calmops-${metric}`, state: 'ALARM', metrics: [{ name: metric, dimensions }] }))
        .alerts[0]?.name;
    const node = { ClusterName: 'prod', NodeName: 'ip-10-0-1-23.ec2.internal', InstanceId: 'i-0abc' };
    expect(nameOf('node_status_condition_ready', node)).toBe('KubeNodeNotReady');
    expect(nameOf('cluster_failed_node_count', { ClusterName: 'prod' })).toBe('KubeNodeNotReady');
    expect(nameOf('pod_status_pending', { ClusterName: 'prod', Namespace: 'payments', PodName: 'api' })).toBe(
      'KubePodNotReady',
    );
    expect(nameOf('pod_number_of_container_restarts', { ClusterName: 'prod', Namespace: 'a', PodName: 'b' })).toBe(
      'KubePodCrashLooping',
    );
    const g = group(
      alarmEvent({
        alarmName: 'calmops-node',
        state: 'ALARM',
        metrics: [{ name: 'node_status_condition_ready', dimensions: node }],
      }),
    );
    expect(g.alerts[0]?.labels).toMatchObject({
      cluster: 'prod',
      node: 'ip-10-0-1-23.ec2.internal',
      instance: 'i-0abc',
    });
    expect(mapAlertGroup(g, templates)).toMatchObject({ intent: 'node-not-ready' });
    // The same metric name outside Container Insights is someone else's: the alarm keeps its name.
    expect(
      group(
        alarmEvent({
          alarmName: 'calmops-custom',
          state: 'ALARM',
          metrics: [{ name: 'pod_status_pending', namespace: 'MyApp', dimensions: {} }],
        }),
      ).alerts[0]?.name,
    ).toBe('calmops-custom');
  });

  it('map every Container Insights metric to an alert a template lists, and every dimension to a label', () => {
    const listed = alertIntents(templates);
    for (const [metric, alert] of Object.entries(CONTAINER_INSIGHTS_ALERTS)) {
      expect(listed.has(alert), `${metric} → ${alert} is in a template's alerts: list`).toBe(true);
    }
    expect(new Set(Object.values(DIMENSION_LABELS))).toEqual(
      new Set(['cluster', 'namespace', 'pod', 'container', 'service', 'node', 'instance']),
    );
  });

  it('are documented in docs/alerts.md exactly as mapped', () => {
    const doc = readFileSync(new URL('../../../docs/alerts.md', import.meta.url), 'utf8');
    const table = doc.slice(
      doc.indexOf('<!-- container-insights-mapping:start'),
      doc.indexOf('<!-- container-insights-mapping:end -->'),
    );
    const documented: Record<string, string> = {};
    for (const line of table.split('\n').filter((l) => l.startsWith('| `'))) {
      const [metrics = '', alert = ''] = line.split('|').slice(1, 3);
      const name = /`([^`]+)`/.exec(alert)?.[1] ?? '';
      for (const m of metrics.matchAll(/`([^`]+)`/g)) documented[m[1] ?? ''] = name;
    }
    expect(documented).toEqual(CONTAINER_INSIGHTS_ALERTS);
  });

  it('resolve on OK: the same group, started when the alarm went into ALARM, ended now', () => {
    const firing = group(crashLoopAlarm('orders', 'order-worker-69b7c4d8f5-fk2lp', { at: '2030-03-04T02:10:07.412Z' }));
    const resolved = group(
      crashLoopAlarm('orders', 'order-worker-69b7c4d8f5-fk2lp', { state: 'OK', at: '2030-03-04T03:10:07.412Z' }),
    );
    expect(resolved.status).toBe('resolved');
    expect(resolved.key).toBe(firing.key);
    expect(alertGroupId(resolved)).toBe(alertGroupId(firing));
    expect(resolved.alerts[0]).toMatchObject({
      status: 'resolved',
      fingerprint: firing.alerts[0]?.fingerprint,
      startsAt: '2030-03-04T02:10:07.412Z',
      endsAt: '2030-03-04T03:10:07.412Z',
    });
    // OK after INSUFFICIENT_DATA: when the alarm fired is not in the event, so the alert starts and ends now.
    const afterGap = group(
      crashLoopAlarm('orders', 'order-worker-69b7c4d8f5-fk2lp', {
        state: 'OK',
        previous: 'INSUFFICIENT_DATA',
        at: '2030-03-04T03:10:07.412Z',
      }),
    );
    expect(afterGap.alerts[0]).toMatchObject({
      startsAt: '2030-03-04T03:10:07.412Z',
      endsAt: '2030-03-04T03:10:07.412Z',
    });
  });

  it('ignore INSUFFICIENT_DATA: it says nothing about the cluster', () => {
    const read = reading(crashLoopAlarm('orders', 'order-worker-69b7c4d8f5-fk2lp', { state: 'INSUFFICIENT_DATA' }));
    expect(read).toEqual({ ignored: expect.stringContaining('insufficient data') });
  });

  it('take the alert name and labels the alarm’s tags give, over what the dimensions suggest', () => {
    const g = group(
      crashLoopAlarm('orders', 'order-worker-69b7c4d8f5-fk2lp', {
        cluster: 'eks-prod-eu-west-1',
        tags: { alertname: 'KubeDeploymentReplicasMismatch', cluster: 'prod', severity: 'critical', team: 'orders' },
      }),
    );
    expect(g.alerts[0]?.name).toBe('KubeDeploymentReplicasMismatch');
    expect(g.commonLabels).toMatchObject({
      cluster: 'prod',
      severity: 'critical',
      team: 'orders',
      namespace: 'orders',
    });
    expect(mapAlertGroup(g, templates)).toMatchObject({
      intent: 'workload-rollout',
      cluster: 'prod',
      severity: 'critical',
    });
  });

  it('keep only what every metric of a math alarm agrees on, and composite alarms by their own name', () => {
    const pods = ['order-worker-69b7c4d8f5-fk2lp', 'order-worker-69b7c4d8f5-w8mzs'].map((pod) => ({
      name: 'pod_number_of_container_restarts',
      dimensions: { ClusterName: 'prod', Namespace: 'orders', FullPodName: pod },
    }));
    const math = group(alarmEvent({ alarmName: 'calmops-orders-restarts', state: 'ALARM', metrics: pods }));
    expect(math.alerts[0]?.name).toBe('KubePodCrashLooping');
    expect(math.commonLabels).toEqual({ alertname: 'KubePodCrashLooping', cluster: 'prod', namespace: 'orders' });
    const mixed = group(
      alarmEvent({
        alarmName: 'calmops-orders-mixed',
        state: 'ALARM',
        metrics: [pods[0]!, { name: 'pod_status_pending', dimensions: { Namespace: 'orders' } }],
      }),
    );
    expect(mixed.alerts[0]?.name).toBe('calmops-orders-mixed');
    const composite = awsGuideExample() as { detail: Record<string, unknown> };
    composite.detail['configuration'] = { alarmRule: 'ALARM(a) AND ALARM(b)' };
    const g = group(composite);
    expect(g.alerts[0]?.name).toBe('ServerCpuTooHigh');
    expect(g.commonLabels).toEqual({ alertname: 'ServerCpuTooHigh' });
  });

  it('refuse other events, naming the field', () => {
    const scheduled = { ...awsGuideExample(), 'detail-type': 'Scheduled Event', source: 'aws.events' };
    expect(issuesOf(scheduled).map((i) => i.path)).toEqual(expect.arrayContaining(['detail-type', 'source']));
    const noName = awsGuideExample() as { detail: Record<string, unknown> };
    delete noName.detail['alarmName'];
    expect(issuesOf(noName).map((i) => i.path)).toEqual(['detail.alarmName']);
    const notAnAlarm = { ...awsGuideExample(), resources: ['arn:aws:sns:us-east-1:123456789012:topic'] };
    expect(issuesOf(notAnAlarm)[0]).toMatchObject({ path: 'resources.0', message: 'must be a CloudWatch alarm ARN' });
    const badTime = awsGuideExample() as { detail: { state: Record<string, unknown> } };
    badTime.detail.state['timestamp'] = 'yesterday';
    expect(issuesOf(badTime).map((i) => i.path)).toEqual(['detail.state.timestamp']);
    expect(issuesOf('{}')[0]?.path).toBe('(root)');
  });
});

describe('the Slack function’s entry', () => {
  const apiEvent = {
    rawPath: '/slack/events',
    headers: { 'content-type': 'application/json' },
    body: '{}',
    isBase64Encoded: false,
    requestContext: { http: { method: 'POST' } },
  } as unknown as APIGatewayProxyEventV2;

  it('sends EventBridge events to the alarm path and never to the Slack request path', async () => {
    const calls: string[] = [];
    const http: SlackFunction = async (request) => {
      calls.push(`http ${request.path}`);
      return { statusCode: 200, headers: {}, body: 'ok' };
    };
    const alarms: AlarmEventFunction = async (event) => {
      calls.push(`alarm ${event['detail-type']}`);
      return { outcome: 'ignored', reason: 'test' };
    };
    const handler = createSlackLambdaHandler({ http, alarms });
    const alarm = awsGuideExample() as never;
    expect(await handler(alarm)).toEqual({ outcome: 'ignored', reason: 'test' });
    // Any EventBridge event, even one that is not an alarm's, stays off the Slack path.
    await handler({ ...awsGuideExample(), 'detail-type': 'Scheduled Event' } as never);
    expect(await handler(apiEvent)).toEqual({ statusCode: 200, headers: {}, body: 'ok' });
    expect(calls).toEqual(['alarm CloudWatch Alarm State Change', 'alarm Scheduled Event', 'http /slack/events']);
    expect(isEventBridgeEvent(apiEvent)).toBe(false);
    expect(isEventBridgeEvent(null)).toBe(false);
  });
});
