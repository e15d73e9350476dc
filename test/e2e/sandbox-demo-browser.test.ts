import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SNAPSHOT } from '../../local/demo/index.js';
import { type LocalHttpServer, startLocalHttpServer } from '../../local/http-server.js';
import { createBotClient } from '../../local/sandbox/bot-client.js';
import { createSandbox } from '../../local/sandbox/server.js';
import { buildWorkspace, sandboxChannels } from '../../local/sandbox/workspace.js';
import { type SlackStandIn, startSlackStandIn } from '../../local/slack/index.js';
import { sandboxDemoCluster } from '../../local/start.js';
import { loadSnapshotFiles } from '../../src/cluster/snapshot.js';
import type { KubeObject } from '../../src/cluster/types.js';
import { type SnapshotServer, startSnapshotServer } from '../../src/snapshot-api/server.js';
import { launchChromium } from '../support/chromium.js';

/**
 * The sidebar's "Demo cluster" panel in a real browser: it lists the demo namespaces, runs a fix on the served
 * cluster and restores the fault; with your own snapshot it says why it has nothing to offer.
 */

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts');
const WAIT = 30_000;

let standIn: SlackStandIn;
let kube: SnapshotServer;
let demoHttp: LocalHttpServer;
let ownHttp: LocalHttpServer;
let browser: Browser;
let page: Page;

async function serve(demoCluster: ReturnType<typeof sandboxDemoCluster>): Promise<LocalHttpServer> {
  return startLocalHttpServer({
    slack: async () => ({ statusCode: 200, headers: {}, body: '' }),
    sandbox: createSandbox({
      standIn,
      workspace: buildWorkspace({ channels: sandboxChannels() }),
      bot: createBotClient({ url: () => 'http://127.0.0.1:9/slack/events', signingSecret: 'unused' }),
      pollWaitMs: 500,
      demoCluster,
    }),
    standInOrigin: standIn.origin,
    health: async () => ({ ok: true, services: {} }),
  });
}

beforeAll(async () => {
  standIn = await startSlackStandIn({ channels: sandboxChannels() });
  const snapshot = await loadSnapshotFiles(DEMO_SNAPSHOT);
  kube = await startSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs, port: 0 });
  demoHttp = await serve(sandboxDemoCluster({ kind: 'demo', file: DEMO_SNAPSHOT }, { snapshot, kube }));
  ownHttp = await serve(sandboxDemoCluster({ kind: 'snapshot', file: '/srv/incident.yaml' }, {}));
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
});

afterAll(async () => {
  await browser?.close();
  await demoHttp?.close();
  await ownHttp?.close();
  await kube?.close();
  await standIn?.close();
});

const row = (namespace: string) => page.locator(`#sidebar-demo [data-demo-namespace="${namespace}"]`);

async function payments(): Promise<KubeObject[]> {
  const response = await fetch(`${kube.url}/api/v1/namespaces/payments/pods`);
  return ((await response.json()) as { items: KubeObject[] }).items;
}

describe('the demo cluster panel', () => {
  it('runs a namespace’s fix on the served cluster and restores the fault', async () => {
    await page.goto(`${demoHttp.origin}/sandbox/?user=UREQUESTER`);
    await page.waitForSelector('body[data-ready="true"]');
    await expect.poll(() => page.locator('#sidebar-demo .demo-ns').count(), { timeout: WAIT }).toBe(5);
    expect(await row('wiki').locator('.demo-status').textContent()).toBe('healthy');
    expect(await row('wiki').getByRole('button').count()).toBe(0);
    expect(await row('payments').locator('.demo-status').textContent()).toBe('broken');

    await row('payments').getByRole('button', { name: 'Run the fix' }).click();
    await expect.poll(() => row('payments').locator('.demo-status').textContent(), { timeout: WAIT }).toBe('fixed');
    await expect.poll(() => page.locator('#toast').textContent()).toContain('Ran the fix in payments');
    expect(await row('payments').textContent()).toContain('1500m');
    expect((await payments()).every((p) => p.status.phase === 'Running')).toBe(true);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'sandbox-demo-panel.png') });

    await row('payments').getByRole('button', { name: 'Restore the fault' }).click();
    await expect.poll(() => row('payments').locator('.demo-status').textContent(), { timeout: WAIT }).toBe('broken');
    expect((await payments()).some((p) => p.status.phase === 'Pending')).toBe(true);
  });

  it('shows a change made elsewhere (another page, a harness) without a reload', async () => {
    await page.goto(`${demoHttp.origin}/sandbox/?user=UREQUESTER`);
    await page.waitForSelector('body[data-ready="true"]');
    await fetch(`${demoHttp.origin}/_sandbox/demo/inventory/fix`, { method: 'POST' });
    await expect.poll(() => row('inventory').locator('.demo-status').textContent(), { timeout: WAIT }).toBe('fixed');
    await fetch(`${demoHttp.origin}/_sandbox/demo/inventory/restore`, { method: 'POST' });
    await expect.poll(() => row('inventory').locator('.demo-status').textContent(), { timeout: WAIT }).toBe('broken');
  });

  it('says why there is nothing to fix with your own snapshot', async () => {
    await page.goto(`${ownHttp.origin}/sandbox/?user=UREQUESTER`);
    await page.waitForSelector('body[data-ready="true"]');
    const note = page.locator('#sidebar-demo [data-demo-unavailable]');
    await expect.poll(() => note.textContent(), { timeout: WAIT }).toContain('your snapshot (/srv/incident.yaml)');
    expect(await page.locator('#sidebar-demo button').count()).toBe(0);
  });
});
