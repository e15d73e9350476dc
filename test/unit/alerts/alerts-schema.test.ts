import { describe, expect, it } from 'vitest';
import { parseAlertmanagerBody } from '../../../src/alerts/alertmanager.js';
import { alertGroupId } from '../../../src/alerts/group.js';
import { alertmanagerBody, crashLooping, nodeNotReady } from '../../support/alertmanager.js';

function parse(body: unknown) {
  return parseAlertmanagerBody(JSON.stringify(body));
}

function issuesOf(body: unknown) {
  const parsed = parse(body);
  if (parsed.ok) throw new Error('the body was accepted');
  return parsed.issues;
}

describe('the Alertmanager webhook schema (version 4)', () => {
  it('reads a firing notification into a normalized group', () => {
    const body = alertmanagerBody({
      alerts: [
        crashLooping('payments', 'checkout-7f9c6d8b5-x2x9z'),
        crashLooping('payments', 'checkout-7f9c6d8b5-q8w4n'),
      ],
    });
    const parsed = parse(body);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const group = parsed.group;
    expect(group.source).toBe('alertmanager');
    expect(group.key).toBe('{}/{severity=~"warning|critical"}:{namespace="payments", alertname="KubePodCrashLooping"}');
    expect(group.status).toBe('firing');
    expect(group.truncated).toBe(0);
    expect(group.link).toBe('http://alertmanager-main-0:9093');
    expect(group.commonLabels['namespace']).toBe('payments');
    expect(group.alerts).toHaveLength(2);
    const [first] = group.alerts;
    expect(first?.name).toBe('KubePodCrashLooping');
    expect(first?.labels['pod']).toBe('checkout-7f9c6d8b5-x2x9z');
    expect(first?.annotations['summary']).toBe('Pod is crash looping.');
    expect(first?.startsAt).toBe('2030-03-04T02:10:07.412Z');
    // Go's zero time means "no end yet": a firing alert carries no endsAt.
    expect(first && 'endsAt' in first).toBe(false);
    expect(first?.url).toMatch(/^http:\/\/prometheus-k8s-0:9090\/graph\?/);
  });

  it('keeps the end of a resolved alert, and Go timestamps with nanoseconds or an offset', () => {
    const body = alertmanagerBody({ alerts: [nodeNotReady('worker-2')], status: 'resolved' });
    const alert = body.alerts[0] as Record<string, unknown>;
    alert['startsAt'] = '2030-03-04T03:10:07.412345678+01:00';
    alert['endsAt'] = '2030-03-04T03:40:07.000000001Z';
    const parsed = parse(body);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    expect(parsed.group.status).toBe('resolved');
    expect(parsed.group.alerts[0]?.endsAt).toBe('2030-03-04T03:40:07.000000001Z');
    expect(parsed.group.alerts[0]?.name).toBe('KubeNodeNotReady');
  });

  it('ignores fields a newer Alertmanager adds', () => {
    const body = { ...alertmanagerBody({ alerts: [nodeNotReady('worker-2')] }), groupID: 'abc', extra: { x: 1 } };
    expect(parse(body).ok).toBe(true);
  });

  it('names the path of every problem', () => {
    const good = alertmanagerBody({ alerts: [crashLooping('payments', 'checkout-1')] });
    expect(issuesOf({ ...good, version: '3' }).map((i) => i.path)).toEqual(['version']);
    expect(issuesOf({ ...good, status: 'pending' }).map((i) => i.path)).toEqual(['status']);
    expect(issuesOf({ ...good, alerts: [] }).map((i) => i.path)).toEqual(['alerts']);
    const { startsAt: _s, ...noStart } = good.alerts[0] as Record<string, unknown>;
    expect(issuesOf({ ...good, alerts: [noStart] }).map((i) => i.path)).toEqual(['alerts.0.startsAt']);
    const badLabel = { ...good.alerts[0], labels: { alertname: 'KubePodCrashLooping', replicas: 3 } };
    expect(issuesOf({ ...good, alerts: [badLabel] }).map((i) => i.path)).toEqual(['alerts.0.labels.replicas']);
    const { groupKey: _g, ...noKey } = good;
    expect(issuesOf(noKey).map((i) => i.path)).toEqual(['groupKey']);
    expect(parseAlertmanagerBody('{"version": "4",')).toEqual({
      ok: false,
      issues: [{ path: '(body)', message: 'not JSON' }],
    });
  });

  it('drops links that are not http(s)', () => {
    const body = alertmanagerBody({
      alerts: [crashLooping('payments', 'checkout-1')],
      externalURL: 'javascript:alert(1)',
    });
    (body.alerts[0] as Record<string, unknown>)['generatorURL'] = '';
    const parsed = parse(body);
    if (!parsed.ok) throw new Error('refused');
    expect(parsed.group.link).toBeUndefined();
    expect(parsed.group.alerts[0]?.url).toBeUndefined();
  });

  it('identifies a group by sender, cluster and group key', () => {
    const base = { source: 'alertmanager', key: '{}:{alertname="KubeNodeNotReady"}' };
    const prod = alertGroupId({ ...base, commonLabels: { cluster: 'prod-eu' } });
    expect(prod).toMatch(/^[0-9a-f]{64}$/);
    expect(alertGroupId({ ...base, commonLabels: { cluster: 'prod-eu', severity: 'warning' } })).toBe(prod);
    expect(alertGroupId({ ...base, commonLabels: { cluster: 'prod-us' } })).not.toBe(prod);
    expect(
      alertGroupId({ ...base, key: '{}:{alertname="KubePodCrashLooping"}', commonLabels: { cluster: 'prod-eu' } }),
    ).not.toBe(prod);
  });
});
