import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StandInMessage } from '../../local/slack/server.js';
import { type RunningCalmops, startCalmops } from '../../local/start.js';
import {
  type PostableAlert,
  type RunningAlertmanager,
  requireAlertmanagerBinary,
  startAlertmanager,
  webhookConfig,
} from '../support/alertmanager-process.js';
import { renderMessage } from '../support/slack-messages.js';
import { waitFor as waitUntil } from '../support/workflow-harness.js';

/**
 * A real Prometheus Alertmanager delivering to `npm start`'s `/alerts/alertmanager` with its bearer token: the
 * crash-looping `orders` demo namespace fires KubePodCrashLooping, the group opens one incident thread, a second pod
 * joining the group lands in that thread, and the group's resolution is validated by a fresh triage there.
 */

const TOKEN = 'alertmanager-e2e-token-7c1f0b9a2d4e6f8a0b1c';
const WAIT = 30_000;
const POD = 'order-worker-69b7c4d8f5-fk2lp';
const OTHER_POD = 'order-worker-69b7c4d8f5-w8mzs';

let running: RunningCalmops;
let alertmanager: RunningAlertmanager | undefined;
let dataDir: string | undefined;
let channel: string;
// A little in the past, so that the resolution's end (just before now) comes after it.
const startsAt = new Date(Date.now() - 60_000).toISOString();

beforeAll(async () => {
  await requireAlertmanagerBinary();
  dataDir = await mkdtemp(join(tmpdir(), 'calmops-alertmanager-e2e-'));
  running = await startCalmops({
    env: { CALMOPS_MIN_TIME_IN_STATE_SECONDS: '0', ALERTS_TOKEN: TOKEN },
    dataDir,
    port: 0,
    logLevel: 'SILENT',
  });
  expect(running.alerts.token).toBe(TOKEN);
  channel = running.alerts.channel ?? '';
  expect(channel).not.toBe('');
  alertmanager = await startAlertmanager({
    config: webhookConfig({
      url: running.alerts.url,
      bearerToken: TOKEN,
      groupBy: ['alertname', 'namespace'],
      groupWait: '1s',
      groupInterval: '2s',
      repeatInterval: '1h',
    }),
  });
});

afterAll(async () => {
  await alertmanager?.stop();
  await running?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

function crashLooping(pod: string, endsAt?: string): PostableAlert {
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
    startsAt,
    ...(endsAt === undefined ? {} : { endsAt }),
    generatorURL: 'http://prometheus.invalid/graph?g0.expr=kube_pod_container_status_waiting_reason',
  };
}

async function messages(): Promise<StandInMessage[]> {
  const response = await fetch(`${running.origin}/sandbox/api/state`);
  return ((await response.json()) as { messages: StandInMessage[] }).messages;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  try {
    return await waitUntil(what, probe, WAIT, 200);
  } catch (error) {
    throw new Error(`${(error as Error).message}; Alertmanager said:\n${alertmanager?.output() ?? ''}`, {
      cause: error,
    });
  }
}

async function alertRoots(): Promise<StandInMessage[]> {
  return (await messages()).filter(
    (m) => m.channel === channel && m.thread_ts === undefined && m.text.includes('KubePodCrashLooping'),
  );
}

async function thread(rootTs: string): Promise<StandInMessage[]> {
  return (await messages()).filter((m) => m.channel === channel && m.thread_ts === rootTs && m.ts !== rootTs);
}

const waitInThread = (rootTs: string, pattern: RegExp) =>
  waitFor(`a thread message matching ${pattern}`, async () =>
    (await thread(rootTs)).find((m) => pattern.test(renderMessage(m))),
  );

describe('Alertmanager delivers to calmops', () => {
  let rootTs: string;

  it('opens an incident thread in the alerts channel, with the triage envelope', async () => {
    await alertmanager?.push([crashLooping(POD)]);
    const root = await waitFor('the alert thread root', async () => (await alertRoots())[0]);
    rootTs = root.ts;
    expect(root.text).toContain('firing in orders');
    expect(renderMessage(root)).toContain(POD);
    // The link Alertmanager put in the notification: it came through Alertmanager, not a hand-made body.
    expect(renderMessage(root)).toContain(`<${alertmanager?.url}|Alertmanager>`);
    await waitInThread(rootTs, /Triage: crashloop-analysis in orders/);
    expect(await alertRoots()).toHaveLength(1);
  });

  it('keeps repeats and a second pod of the group in the same thread', async () => {
    await alertmanager?.push([crashLooping(POD)]);
    await alertmanager?.push([crashLooping(POD), crashLooping(OTHER_POD)]);
    const update = await waitInThread(rootTs, /Alert update.*2 firing/s);
    expect(renderMessage(update)).toContain(OTHER_POD);
    expect(await alertRoots()).toHaveLength(1);
  });

  it('reports the resolved group into the thread, where a fresh triage judges the fix', async () => {
    const ended = new Date(Date.now() - 1000).toISOString();
    await alertmanager?.push([crashLooping(POD, ended), crashLooping(OTHER_POD, ended)]);
    await waitInThread(rootTs, /The alert resolved/);
    await waitInThread(rootTs, /Validating the fix/);
    // The demo cluster still crash-loops: the alert's word alone does not close the incident.
    await waitInThread(rootTs, /Fix not validated/);
    expect(await alertRoots()).toHaveLength(1);
  });
});
