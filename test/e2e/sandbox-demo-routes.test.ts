import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoClusterView } from '../../local/demo/control.js';
import { DEMO_SNAPSHOT } from '../../local/demo/index.js';
import { type LocalHttpServer, startLocalHttpServer } from '../../local/http-server.js';
import { createBotClient } from '../../local/sandbox/bot-client.js';
import { createSandbox, type SandboxState } from '../../local/sandbox/server.js';
import { buildWorkspace, sandboxChannels } from '../../local/sandbox/workspace.js';
import { type SlackStandIn, startSlackStandIn } from '../../local/slack/index.js';
import { sandboxDemoCluster } from '../../local/start.js';
import { loadSnapshotFiles } from '../../src/cluster/snapshot.js';
import type { KubeObject } from '../../src/cluster/types.js';
import { type SnapshotServer, startSnapshotServer } from '../../src/snapshot-api/server.js';

/**
 * `/_sandbox/demo`: the sandbox runs a demo namespace's fix on the served cluster (and restores the fault), and the
 * Kubernetes API the bot reads answers with the changed namespace at once. With your own cluster or snapshot the
 * routes say why there is nothing to change.
 */

let standIn: SlackStandIn;
let kube: SnapshotServer;
let demoHttp: LocalHttpServer;
let ownHttp: LocalHttpServer;

async function serve(demoCluster: ReturnType<typeof sandboxDemoCluster>): Promise<LocalHttpServer> {
  const sandbox = createSandbox({
    standIn,
    workspace: buildWorkspace({ channels: sandboxChannels() }),
    bot: createBotClient({ url: () => 'http://127.0.0.1:9/slack/events', signingSecret: 'unused' }),
    pollWaitMs: 300,
    demoCluster,
  });
  return startLocalHttpServer({
    slack: async () => ({ statusCode: 200, headers: {}, body: '' }),
    sandbox,
    standInOrigin: standIn.origin,
    health: async () => ({ ok: true, services: {} }),
  });
}

async function call(http: LocalHttpServer, method: string, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${http.origin}${path}`, { method, headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function state(http: LocalHttpServer): Promise<SandboxState> {
  return (await (await fetch(`${http.origin}/sandbox/api/state`)).json()) as SandboxState;
}

async function podsIn(namespace: string): Promise<KubeObject[]> {
  const response = await fetch(`${kube.url}/api/v1/namespaces/${namespace}/pods`);
  return ((await response.json()) as { items: KubeObject[] }).items;
}

const statusOf = (view: unknown, namespace: string) =>
  (view as DemoClusterView & { available: true }).namespaces.find((n) => n.namespace === namespace)?.status;

beforeAll(async () => {
  standIn = await startSlackStandIn({ channels: sandboxChannels() });
  const snapshot = await loadSnapshotFiles(DEMO_SNAPSHOT);
  kube = await startSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs, port: 0 });
  demoHttp = await serve(sandboxDemoCluster({ kind: 'demo', file: DEMO_SNAPSHOT }, { snapshot, kube }));
  ownHttp = await serve(sandboxDemoCluster({ kind: 'snapshot', file: '/srv/incident.yaml' }, {}));
});

afterAll(async () => {
  await demoHttp?.close();
  await ownHttp?.close();
  await kube?.close();
  await standIn?.close();
});

describe('sandbox demo cluster routes', () => {
  it('lists the demo namespaces with their status, in the route and in the page state', async () => {
    const listed = await call(demoHttp, 'GET', '/_sandbox/demo');
    expect(listed.status).toBe(200);
    expect(listed.body['available']).toBe(true);
    expect(statusOf(listed.body, 'orders')).toBe('broken');
    expect(statusOf(listed.body, 'wiki')).toBe('healthy');
    expect((await state(demoHttp)).demoCluster).toEqual(listed.body);
  });

  it('runs a fix on the served cluster, and restores the fault', async () => {
    const before = await state(demoHttp);
    const crashing = await podsIn('orders');
    expect(crashing.map((p) => p.status.containerStatuses[0].state.waiting?.reason)).toEqual([
      'CrashLoopBackOff',
      'CrashLoopBackOff',
    ]);

    const fixed = await call(demoHttp, 'POST', '/_sandbox/demo/orders/fix');
    expect(fixed.status).toBe(200);
    expect(fixed.body).toMatchObject({ changed: true, namespace: { namespace: 'orders', status: 'fixed' } });
    expect(statusOf(fixed.body['demoCluster'], 'orders')).toBe('fixed');
    expect(statusOf(fixed.body['demoCluster'], 'payments')).toBe('broken');
    const running = await podsIn('orders');
    expect(running).toHaveLength(2);
    expect(running.every((p) => p.status.containerStatuses[0].ready === true)).toBe(true);
    expect(running.map((p) => p.metadata.name)).not.toEqual(crashing.map((p) => p.metadata.name));
    // Other namespaces are served as before.
    expect(
      (await podsIn('payments')).every((p) => p.status.phase === 'Pending' || p.metadata.name.startsWith('ledger')),
    ).toBe(true);
    // The page's state moves on, so every open page redraws the panel.
    const after = await state(demoHttp);
    expect(after.version).not.toBe(before.version);
    expect(statusOf(after.demoCluster, 'orders')).toBe('fixed');

    const again = await call(demoHttp, 'POST', '/_sandbox/demo/orders/fix');
    expect(again.body['changed']).toBe(false);
    expect((await state(demoHttp)).version).toBe(after.version);

    const restored = await call(demoHttp, 'POST', '/_sandbox/demo/orders/restore');
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ changed: true, namespace: { status: 'broken' } });
    expect((await podsIn('orders')).map((p) => p.metadata.name)).toEqual(crashing.map((p) => p.metadata.name));
  });

  it('refuses the healthy namespace, unknown ones, wrong methods and malformed paths with a reason', async () => {
    const healthy = await call(demoHttp, 'POST', '/_sandbox/demo/wiki/fix');
    expect(healthy.status).toBe(409);
    expect(healthy.body['error']).toMatch(/wiki is healthy/);
    const unknown = await call(demoHttp, 'POST', '/_sandbox/demo/kube-system/restore');
    expect(unknown.status).toBe(404);
    expect(unknown.body['error']).toMatch(/not a demo namespace/);
    expect((await call(demoHttp, 'GET', '/_sandbox/demo/orders/fix')).status).toBe(405);
    expect((await call(demoHttp, 'POST', '/_sandbox/demo')).status).toBe(405);
    expect((await call(demoHttp, 'POST', '/_sandbox/demo/orders/delete')).status).toBe(404);
    expect((await call(demoHttp, 'POST', '/_sandbox/demo/Not_A_Namespace/fix')).status).toBe(400);
  });

  it('refuses a change requested by a page of another origin, and accepts the sandbox page’s own', async () => {
    const foreign = await call(demoHttp, 'POST', '/_sandbox/demo/payments/fix', { origin: 'https://example.com' });
    expect(foreign.status).toBe(403);
    expect(statusOf((await call(demoHttp, 'GET', '/_sandbox/demo')).body, 'payments')).toBe('broken');
    const own = await call(demoHttp, 'POST', '/_sandbox/demo/payments/fix', { origin: demoHttp.origin });
    expect(own.status).toBe(200);
    await call(demoHttp, 'POST', '/_sandbox/demo/payments/restore');
  });

  it('says why there is nothing to change with your own snapshot, and changes nothing', async () => {
    const listed = await call(ownHttp, 'GET', '/_sandbox/demo');
    expect(listed.status).toBe(200);
    expect(listed.body['available']).toBe(false);
    expect(listed.body['reason']).toMatch(/your snapshot \(\/srv\/incident\.yaml\)/);
    expect((await state(ownHttp)).demoCluster).toEqual(listed.body);
    const refused = await call(ownHttp, 'POST', '/_sandbox/demo/orders/fix');
    expect(refused.status).toBe(409);
    expect(refused.body['error']).toBe(listed.body['reason']);
  });

  it('the page has the panel and its script calls these routes', async () => {
    const page = await (await fetch(`${demoHttp.origin}/sandbox/`)).text();
    expect(page).toContain('id="sidebar-demo"');
    const script = await (await fetch(`${demoHttp.origin}/sandbox/app.js`)).text();
    expect(script).toContain('/_sandbox/demo/');
  });
});

describe('the demo cluster outside the demo', () => {
  it('explains itself for a real cluster, a snapshot, and a demo without a snapshot server', () => {
    const real = sandboxDemoCluster({ kind: 'kubeconfig', file: '/home/me/.kube/config' }, {});
    expect(real).toEqual({
      unavailable: expect.stringMatching(/your cluster \(\/home\/me\/\.kube\/config\) and never changes it/),
    });
    const own = sandboxDemoCluster({ kind: 'snapshot', file: '/srv/incident.yaml' }, {});
    expect(own).toEqual({ unavailable: expect.stringMatching(/snapshot taken after it/) });
    const unserved = sandboxDemoCluster({ kind: 'demo', file: DEMO_SNAPSHOT }, {});
    expect(unserved).toEqual({ unavailable: expect.stringMatching(/not served/) });
  });
});
