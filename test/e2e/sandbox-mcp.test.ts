import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_NAMESPACES, DEMO_SNAPSHOT } from '../../local/demo/index.js';
import { type LocalHttpServer, startLocalHttpServer } from '../../local/http-server.js';
import { createBotClient } from '../../local/sandbox/bot-client.js';
import { createMcpPanel } from '../../local/sandbox/mcp-panel.js';
import { createSandbox } from '../../local/sandbox/server.js';
import { buildWorkspace, sandboxChannels } from '../../local/sandbox/workspace.js';
import { type SlackStandIn, startSlackStandIn } from '../../local/slack/index.js';
import { sandboxMcpOptions } from '../../local/start.js';
import { loadSnapshotFiles } from '../../src/cluster/snapshot.js';
import { writeKubeconfig } from '../../src/snapshot-api/kubeconfig.js';
import { type SnapshotServer, startSnapshotServer } from '../../src/snapshot-api/server.js';
import { TriageEnvelopeSchema } from '../../src/triage/envelope/envelope.js';
import { launchChromium } from '../support/chromium.js';

/**
 * The sandbox's "MCP tools" pane: the sandbox starts `calmops mcp` with the served cluster's kubeconfig and the demo
 * namespaces, and drives it with the SDK's client, over its routes and in a real browser.
 */

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts');
const WAIT = 30_000;

let standIn: SlackStandIn;
let kube: SnapshotServer;
let http: LocalHttpServer;
let dir: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  standIn = await startSlackStandIn({ channels: sandboxChannels() });
  const snapshot = await loadSnapshotFiles(DEMO_SNAPSHOT);
  kube = await startSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs, port: 0 });
  dir = await mkdtemp(join(tmpdir(), 'calmops-sandbox-mcp-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeKubeconfig(kubeconfig, { server: kube.url });
  await mkdir(join(dir, 'snapshots'));
  const mcp = createMcpPanel(
    sandboxMcpOptions(
      kubeconfig,
      DEMO_NAMESPACES.map((d) => d.namespace),
      join(dir, 'snapshots'),
    ),
  );
  http = await startLocalHttpServer({
    slack: async () => ({ statusCode: 200, headers: {}, body: '' }),
    sandbox: createSandbox({
      standIn,
      workspace: buildWorkspace({ channels: sandboxChannels() }),
      bot: createBotClient({ url: () => 'http://127.0.0.1:9/slack/events', signingSecret: 'unused' }),
      pollWaitMs: 500,
      mcp,
    }),
    standInOrigin: standIn.origin,
    health: async () => ({ ok: true, services: {} }),
  });
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1440, height: 1000 } })).newPage();
});

afterAll(async () => {
  await browser?.close();
  // Closing the sandbox's server stops the MCP server it started.
  await http?.close();
  await kube?.close();
  await standIn?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${http.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('the sandbox MCP routes', () => {
  it('list the tools calmops mcp serves, with their annotations and the command line', async () => {
    const response = await fetch(`${http.origin}/sandbox/api/mcp`);
    expect(response.status).toBe(200);
    const view = (await response.json()) as {
      available: boolean;
      command: string;
      tools: Array<{ name: string; annotations: Record<string, boolean> }>;
    };
    expect(view.available).toBe(true);
    expect(view.command).toMatch(/^calmops mcp --kubeconfig \S+ --namespaces ml-team,payments,orders,inventory,wiki /);
    expect(view.tools.map((t) => t.name).sort()).toEqual(['intents', 'read', 'snapshot', 'triage']);
    expect(view.tools.every((t) => t.annotations['readOnlyHint'] === true)).toBe(true);
  });

  it('call triage through the client and answer with the JSON-RPC request and response', async () => {
    const { status, body } = await post('/sandbox/api/mcp/call', {
      tool: 'triage',
      arguments: { text: 'pods stuck pending in payments' },
    });
    expect(status).toBe(200);
    expect(body['request']).toMatchObject({
      jsonrpc: '2.0',
      method: 'tools/call',
      params: { name: 'triage', arguments: { text: 'pods stuck pending in payments' } },
    });
    const response = body['response'] as { id: unknown; result: { structuredContent: unknown; isError?: boolean } };
    expect(response.id).toBe((body['request'] as { id: unknown }).id);
    expect(response.result.isError).toBeFalsy();
    const envelope = TriageEnvelopeSchema.parse(response.result.structuredContent);
    expect(envelope.routing).toMatchObject({ namespace: 'payments', intent: 'scheduling-failures' });
  });

  it('refuse a call from another origin, and a body that is not a call', async () => {
    const foreign = await post('/sandbox/api/mcp/call', { tool: 'intents' }, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const bad = await post('/sandbox/api/mcp/call', { arguments: {} });
    expect(bad.status).toBe(400);
    expect(bad.body['error']).toMatch(/^not a tool call/);
  });
});

describe('the MCP tools pane', () => {
  it('lists the tools and calls read and triage against the demo cluster', async () => {
    await page.goto(`${http.origin}/sandbox/?user=UREQUESTER`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.locator('[data-mcp]').click();
    await expect.poll(() => page.locator('[data-mcp-tool]').count(), { timeout: WAIT }).toBe(4);
    expect(await page.locator('[data-mcp-tool="triage"] [data-hint="read-only"]').textContent()).toBe('read-only: yes');

    await page.selectOption('#mcp-tool', 'read');
    await page.fill('#mcp-args', JSON.stringify({ command: 'kubectl get pvc -n ml-team' }));
    await page.click('#mcp-call');
    const result = page.locator('[data-mcp-result]');
    await expect
      .poll(() => result.locator('.mcp-text').textContent(), { timeout: WAIT })
      .toMatch(
        /^kubectl get pvc -n ml-team: 3 line\(s\)\nNAME +STATUS +VOLUME .*\nnotebooks +Bound .*\ntraining-cache +Pending /,
      );

    await page.selectOption('#mcp-tool', 'triage');
    expect(await page.inputValue('#mcp-args')).toContain('the order worker keeps crashing in orders');
    await page.click('#mcp-call');
    await expect
      .poll(() => result.locator('.mcp-text').textContent(), { timeout: WAIT })
      .toContain('Root cause: CONTAINER_CRASHLOOP_CONFIG_ERROR on Deployment/order-worker in orders');
    expect(await result.getAttribute('data-is-error')).toBe('false');
    expect(await result.locator('[data-mcp-request]').textContent()).toContain('"method": "tools/call"');
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'sandbox-mcp-pane.png') });

    await page.selectOption('#mcp-tool', 'read');
    await page.fill('#mcp-args', JSON.stringify({ command: 'kubectl delete pod x -n orders' }));
    await page.click('#mcp-call');
    await expect.poll(() => result.getAttribute('data-is-error'), { timeout: WAIT }).toBe('true');
    expect(await result.locator('.mcp-text').textContent()).toMatch(/^calmops runs reads only/);
  });
});
