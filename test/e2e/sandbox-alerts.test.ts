import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SNAPSHOT } from '../../local/demo/index.js';
import { type LocalHttpServer, startLocalHttpServer } from '../../local/http-server.js';
import { createBotClient } from '../../local/sandbox/bot-client.js';
import { SAMPLE_ALERTS, type SampleAlertsView, sampleNotification } from '../../local/sandbox/sample-alerts.js';
import { createSandbox, type SandboxOptions, type SandboxState } from '../../local/sandbox/server.js';
import { buildWorkspace, sandboxChannels } from '../../local/sandbox/workspace.js';
import type { StandInMessage } from '../../local/slack/server.js';
import { type RunningCalmops, startCalmops } from '../../local/start.js';
import { AlertmanagerWebhookSchema, fromAlertmanager } from '../../src/alerts/alertmanager.js';
import { mapAlertGroup } from '../../src/alerts/map.js';
import { loadSnapshotFiles } from '../../src/cluster/snapshot.js';
import { loadTemplates } from '../../src/triage/templates/template-registry.js';
import { renderMessage } from '../support/slack-messages.js';
import { waitFor as waitUntil } from '../support/workflow-harness.js';

/**
 * The sandbox's "Alerts" panel: `POST /_sandbox/alerts/sample` sends the Alertmanager notification a demo
 * namespace's fault would raise through calmops' own `/alerts/alertmanager` route, with the token only the server
 * holds; the incident thread opens in the policy's alerts channel, and resolving the alert validates the fix there.
 */

const WAIT = 30_000;

let running: RunningCalmops;
let dataDir: string | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'calmops-sandbox-alerts-'));
  running = await startCalmops({
    env: { CALMOPS_MIN_TIME_IN_STATE_SECONDS: '0' },
    dataDir,
    port: 0,
    logLevel: 'SILENT',
  });
});

afterAll(async () => {
  await running?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

async function call(
  origin: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const fire = (body: unknown, headers: Record<string, string> = {}) =>
  call(running.origin, 'POST', '/_sandbox/alerts/sample', body, headers);

async function state(origin = running.origin): Promise<SandboxState> {
  return (await (await fetch(`${origin}/sandbox/api/state`)).json()) as SandboxState;
}

/** Waits for a probe to find something, polling as the product's asynchronous steps land. */
const waitFor = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => waitUntil(what, probe, WAIT, 200);

async function roots(alertname: string): Promise<StandInMessage[]> {
  return (await state()).messages.filter(
    (m) => m.channel === running.alerts.channel && m.thread_ts === undefined && m.text.includes(alertname),
  );
}

const waitInThread = (rootTs: string, pattern: RegExp) =>
  waitFor(`a thread message matching ${pattern}`, async () =>
    (await state()).messages.find((m) => m.thread_ts === rootTs && m.ts !== rootTs && pattern.test(renderMessage(m))),
  );

function sampleOf(view: SampleAlertsView, namespace: string) {
  if (!view.available) throw new Error(`no sample alerts: ${view.reason}`);
  return view.samples.find((s) => s.namespace === namespace);
}

describe('sample alerts in the sandbox', () => {
  let threadTs: string;

  it('shows the Alerts panel, whose script posts to the route, and the token reaches neither page nor state', async () => {
    const page = await (await fetch(`${running.sandboxUrl}`)).text();
    expect(page).toContain('id="sidebar-alerts"');
    const script = await (await fetch(`${running.origin}/sandbox/app.js`)).text();
    expect(script).toContain('/_sandbox/alerts/sample');
    const current = await state();
    expect(sampleOf(current.alerts, 'orders')).toEqual({
      namespace: 'orders',
      alertname: 'KubePodCrashLooping',
      firing: false,
    });
    expect(running.alerts.token).toMatch(/^[0-9a-f]{48}$/);
    for (const text of [page, script, JSON.stringify(current)]) expect(text).not.toContain(running.alerts.token);
  });

  it('fires the orders sample: calmops opens the incident thread in the alerts channel, with the envelope', async () => {
    const before = (await state()).version;
    const { status, body } = await fire({ namespace: 'orders' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      namespace: 'orders',
      alertname: 'KubePodCrashLooping',
      status: 'firing',
      answer: {
        outcome: 'opened',
        channelId: running.alerts.channel,
        intent: 'crashloop-analysis',
        namespace: 'orders',
      },
    });
    threadTs = String((body['answer'] as { threadTs: string }).threadTs);
    const [root, ...others] = await roots('KubePodCrashLooping');
    expect(others).toEqual([]);
    expect(root?.ts).toBe(threadTs);
    expect(renderMessage(root as StandInMessage)).toContain('order-worker-69b7c4d8f5-fk2lp');
    await waitInThread(threadTs, /Triage: crashloop-analysis in orders/);
    const after = await state();
    expect(after.version).not.toBe(before);
    expect(sampleOf(after.alerts, 'orders')).toMatchObject({ firing: true, startsAt: expect.any(String) });
  });

  it('firing it again is the same notification, handled once: no second thread', async () => {
    const { status, body } = await fire({ namespace: 'orders', status: 'firing' });
    expect(status).toBe(200);
    expect(body['answer']).toEqual({ outcome: 'duplicate' });
    expect(await roots('KubePodCrashLooping')).toHaveLength(1);
  });

  it('resolving it after the fix was run validates the fix in the same thread', async () => {
    const fixed = await call(running.origin, 'POST', '/_sandbox/demo/orders/fix', {});
    expect(fixed.status).toBe(200);
    const { status, body } = await fire({ namespace: 'orders', status: 'resolved' });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body['answer']).toMatchObject({ outcome: 'validating', threadTs, channelId: running.alerts.channel });
    await waitInThread(threadTs, /The alert resolved/);
    await waitInThread(threadTs, /Fix validated/);
    expect(sampleOf((await state()).alerts, 'orders')?.firing).toBe(false);
    expect(await roots('KubePodCrashLooping')).toHaveLength(1);
  });

  it('refuses a resolution with nothing firing, unknown samples, bad requests and other origins', async () => {
    const nothing = await fire({ namespace: 'orders', status: 'resolved' });
    expect(nothing.status).toBe(409);
    expect(nothing.body['error']).toMatch(/no sample alert fires in orders/);
    const healthy = await fire({ namespace: 'wiki' });
    expect(healthy.status).toBe(404);
    expect(healthy.body['error']).toMatch(/no sample alert for wiki/);
    expect((await fire({ namespace: 'orders', status: 'pending' })).status).toBe(400);
    expect((await fire({ namespace: 'Not_A_Namespace' })).status).toBe(400);
    expect((await fire('not json')).status).toBe(400);
    expect((await call(running.origin, 'GET', '/_sandbox/alerts/sample')).status).toBe(405);
    const plain = await fire(JSON.stringify({ namespace: 'payments' }), { 'content-type': 'text/plain' });
    expect(plain.status).toBe(415);
    const foreign = await fire({ namespace: 'payments' }, { origin: 'https://example.com' });
    expect(foreign.status).toBe(403);
    expect(sampleOf((await state()).alerts, 'payments')?.firing).toBe(false);
    expect(await roots('KubePodNotReady')).toEqual([]);
  });

  it('names pods and services the demo cluster really has', async () => {
    const { objects } = await loadSnapshotFiles(DEMO_SNAPSHOT);
    for (const sample of SAMPLE_ALERTS) {
      const pod = sample.labels['pod'];
      const subject =
        pod === undefined ? { kind: 'Service', name: sample.labels['service'] } : { kind: 'Pod', name: pod };
      const found = objects.find(
        (o) => o.kind === subject.kind && o.metadata.name === subject.name && o.metadata.namespace === sample.namespace,
      );
      expect(found, `${sample.alertname} names ${subject.kind} ${sample.namespace}/${subject.name}`).toBeDefined();
    }
  });

  it('sends valid notifications whose triage is the one docs/alerts.md lists', async () => {
    const templates = loadTemplates();
    const doc = await readFile(new URL('../../docs/alerts.md', import.meta.url), 'utf8');
    for (const sample of SAMPLE_ALERTS) {
      const body = sampleNotification(sample, { status: 'firing', startsAt: '2030-01-01T00:00:00.000Z' });
      const { intent } = mapAlertGroup(fromAlertmanager(AlertmanagerWebhookSchema.parse(body)), templates);
      const row = new RegExp(
        `^\\| \`${sample.namespace}\`\\s*\\| \`${sample.alertname}\`[^|]*\\| \`${intent}\`\\s*\\|$`,
        'm',
      );
      expect(doc, `${sample.namespace}: ${sample.alertname} → ${intent}`).toMatch(row);
    }
  });
});

describe('sample alerts elsewhere', () => {
  const servers: LocalHttpServer[] = [];

  async function serve(options: Pick<SandboxOptions, 'alerts' | 'demoCluster'>): Promise<LocalHttpServer> {
    const standIn = running.standIn;
    if (standIn === undefined) throw new Error('the sandbox runs with the Slack stand-in');
    const sandbox = createSandbox({
      standIn,
      workspace: buildWorkspace({ channels: sandboxChannels() }),
      bot: createBotClient({ url: () => 'http://127.0.0.1:9/slack/events', signingSecret: 'unused' }),
      pollWaitMs: 300,
      ...options,
    });
    const http = await startLocalHttpServer({
      slack: async () => ({ statusCode: 404, headers: {}, body: '' }),
      sandbox,
      health: async () => ({ ok: true, services: {} }),
    });
    servers.push(http);
    return http;
  }

  afterAll(async () => {
    for (const http of servers) await http.close();
  });

  it('with your own cluster: says the samples are for the demo cluster, and sends nothing', async () => {
    const http = await serve({
      alerts: { url: () => running.alerts.url, token: running.alerts.token },
      demoCluster: { unavailable: 'calmops is serving your snapshot.' },
    });
    const { alerts } = await state(http.origin);
    expect(alerts).toEqual({ available: false, reason: expect.stringMatching(/for the demo cluster/) });
    const refused = await call(http.origin, 'POST', '/_sandbox/alerts/sample', { namespace: 'orders' });
    expect(refused.status).toBe(409);
    expect(refused.body['error']).toBe((alerts as { reason: string }).reason);
  });

  it('passes calmops’ refusal on: a wrong token is answered 401 and nothing opens', async () => {
    const control = running.demoCluster;
    if (control === undefined) throw new Error('npm start serves the demo cluster');
    const http = await serve({
      alerts: { url: () => running.alerts.url, token: `${running.alerts.token}0` },
      demoCluster: { control },
    });
    const refused = await call(http.origin, 'POST', '/_sandbox/alerts/sample', { namespace: 'payments' });
    expect(refused.status).toBe(502);
    expect(refused.body['error']).toMatch(/calmops answered 401: missing or wrong bearer token/);
    expect(sampleOf((await state(http.origin)).alerts, 'payments')?.firing).toBe(false);
    expect(await roots('KubePodNotReady')).toEqual([]);
  });
});
