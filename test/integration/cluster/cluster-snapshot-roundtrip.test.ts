import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../../../src/cli/commands/snapshot.js';
import type { CliIo } from '../../../src/cli/io.js';
import { createClusterReader } from '../../../src/cluster/reader.js';
import { RESOURCES, resourceForKind } from '../../../src/cluster/resources.js';
import { loadSnapshotFiles, parseSnapshot } from '../../../src/cluster/snapshot.js';
import { ClusterReadError, type KubeObject } from '../../../src/cluster/types.js';
import { kubeconfigYaml } from '../../../src/snapshot-api/kubeconfig.js';
import { type SnapshotServer, startSnapshotServer } from '../../../src/snapshot-api/server.js';

const fixture = join(import.meta.dirname, '..', '..', 'fixtures', 'kube', 'demo.yaml');
const dir = mkdtempSync(join(tmpdir(), 'calmops-roundtrip-'));

let server: SnapshotServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(objects: KubeObject[], logs: Record<string, string>, extra = {}): Promise<string> {
  server = await startSnapshotServer({ objects, logs, ...extra });
  const file = join(dir, `kubeconfig-${server.port}`);
  writeFileSync(file, kubeconfigYaml({ server: server.url }));
  return file;
}

function io(): CliIo & { out: string; err: string } {
  const sink = {
    out: '',
    err: '',
    env: {},
    stdout: (t: string) => {
      sink.out += t;
    },
    stderr: (t: string) => {
      sink.err += t;
    },
  };
  return sink;
}

const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** What a capture of `namespace` should hold from the original snapshot. */
function expectedFor(objects: KubeObject[], namespace: string): KubeObject[] {
  const claims = objects.filter((o) => o.kind === 'PersistentVolumeClaim' && o.metadata.namespace === namespace);
  const pending = claims.some((c) => c.status?.phase === 'Pending');
  return objects.filter((o) => {
    const info = resourceForKind(o.kind ?? '');
    if (!info) return false;
    if (info.plural === 'namespaces') return o.metadata.name === namespace;
    if (info.namespaced) return o.metadata.namespace === namespace;
    if (info.plural === 'persistentvolumes') {
      return (
        o.spec?.claimRef?.namespace === namespace ||
        claims.some((c) => c.spec?.volumeName === o.metadata.name) ||
        (pending && o.status?.phase === 'Available')
      );
    }
    return ['nodes', 'storageclasses', 'ingressclasses'].includes(info.plural);
  });
}

describe('calmops snapshot against the snapshot API server', () => {
  for (const namespace of ['shop', 'payments']) {
    it(`captures namespace ${namespace} and its logs, and the capture round-trips`, async () => {
      const original = await loadSnapshotFiles(fixture);
      const kubeconfig = await serve(original.objects, original.logs);
      const out = join(dir, `${namespace}.yaml`);
      const first = io();
      expect(await run(['-n', namespace, '-o', out, '--kubeconfig', kubeconfig], first)).toBe(0);

      const captured = await loadSnapshotFiles(out);
      const expected = expectedFor(original.objects, namespace);
      expect(captured.objects.map(key).sort()).toEqual(expected.map(key).sort());
      const byKey = new Map(captured.objects.map((o) => [key(o), o]));
      for (const object of expected) expect(byKey.get(key(object)), key(object)).toEqual(object);

      // Logs of the pods that are not ready or restarting, exactly as served.
      for (const [logKey, text] of Object.entries(captured.logs)) {
        expect(logKey.startsWith(`${namespace}/`)).toBe(true);
        expect(text, logKey).toBe(original.logs[logKey]);
      }
      if (namespace === 'shop') {
        expect(captured.logs['shop/checkout-6f5b9c7d4-x2k9p/checkout:previous']).toContain('PAYMENTS_API_KEY');
      }

      const requests = server?.requests() ?? [];
      expect(requests.length).toBeGreaterThan(10);
      expect(requests.every((r) => r.method === 'GET')).toBe(true);
      // Core Secrets in any spelling of the path; ExternalSecrets and SecretStores hold only references.
      expect(requests.some((r) => r.resource === 'secrets' || /\/secrets(?:[/?]|$)/i.test(r.path))).toBe(false);

      // Serving the capture and capturing again gives the same bytes.
      await server?.close();
      const again = await serve(captured.objects, captured.logs);
      const out2 = join(dir, `${namespace}-again.yaml`);
      expect(await run(['-n', namespace, '-o', out2, '--kubeconfig', again], io())).toBe(0);
      expect(readFileSync(out2, 'utf8')).toBe(readFileSync(out, 'utf8'));
      expect(readFileSync(join(dir, `${namespace}-again.logs.json`), 'utf8')).toBe(
        readFileSync(join(dir, `${namespace}.logs.json`), 'utf8'),
      );
    });
  }

  it('warns and continues when the server forbids one kind', async () => {
    const original = await loadSnapshotFiles(fixture);
    const kubeconfig = await serve(original.objects, original.logs, {
      faults: [
        { match: { resource: 'configmaps' }, effect: { type: 'status', status: 403, message: 'no configmaps' } },
      ],
    });
    const sink = io();
    expect(await run(['-n', 'shop', '--kubeconfig', kubeconfig], sink)).toBe(0);
    expect(sink.err).toMatch(/warning: could not list configmaps in namespace shop: forbidden/);
    const kinds = parseSnapshot(sink.out).map((o) => o.kind);
    expect(kinds).toContain('Route');
    expect(kinds).not.toContain('ConfigMap');
  });
});

describe('reader against the snapshot API server', () => {
  async function reader(extra = {}, pageSize = 1, requestTimeoutMs = 5_000) {
    const original = await loadSnapshotFiles(fixture);
    const kubeconfig = await serve(original.objects, original.logs, extra);
    return { original, reader: createClusterReader({ kubeconfig: { file: kubeconfig }, pageSize, requestTimeoutMs }) };
  }

  it('pages one object at a time through continue tokens', async () => {
    const { original, reader: r } = await reader();
    const pods = await r.list({ kind: 'pods' });
    expect(pods.map(key).sort()).toEqual(
      original.objects
        .filter((o) => o.kind === 'Pod')
        .map(key)
        .sort(),
    );
    const lists = (server?.requests() ?? []).filter((q) => q.verb === 'list');
    expect(lists.length).toBe(pods.length);
    expect(lists.filter((q) => q.query.continue !== undefined).length).toBe(pods.length - 1);
  });

  it('restarts a list once after 410 Expired and fails on the second', async () => {
    const once = await reader({
      faults: [{ match: { withContinue: true }, effect: { type: 'status', status: 410 }, times: 1 }],
    });
    const pods = await once.reader.list({ kind: 'pods' });
    expect(pods.length).toBe(once.original.objects.filter((o) => o.kind === 'Pod').length);
    await server?.close();

    const always = await reader({
      faults: [{ match: { withContinue: true }, effect: { type: 'status', status: 410 } }],
    });
    const error = await always.reader.list({ kind: 'pods' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClusterReadError);
    expect((error as ClusterReadError).status).toBe(410);
  });

  it('times out on a hung request, and classifies 403 and 500', async () => {
    const { reader: r } = await reader(
      {
        faults: [
          { match: { resource: 'nodes' }, effect: { type: 'hang' } },
          { match: { resource: 'services' }, effect: { type: 'status', status: 403 } },
          { match: { resource: 'endpoints' }, effect: { type: 'status', status: 500 } },
        ],
      },
      500,
      300,
    );
    const reasons = await Promise.all(
      (['nodes', 'services', 'endpoints'] as const).map((kind) =>
        r.list({ kind, namespace: 'shop' }).then(
          () => 'ok',
          (e: ClusterReadError) => e.reason,
        ),
      ),
    );
    expect(reasons).toEqual(['timeout', 'forbidden', 'server-error']);
  });

  it('serves every readable kind the reader asks for', async () => {
    const { reader: r } = await reader({}, 500);
    for (const info of Object.values(RESOURCES)) {
      await expect(r.list({ kind: info.plural, namespace: 'shop' }), info.plural).resolves.toBeInstanceOf(Array);
    }
  });
});
