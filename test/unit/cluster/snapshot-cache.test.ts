import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSnapshotInput } from '../../../src/cli/input-files.js';
import { loadSnapshotFiles, type ParsedSnapshotCache, parseSnapshotText } from '../../../src/cluster/snapshot.js';
import { defaultSnapshotCacheDir, snapshotCacheIn } from '../../../src/cluster/snapshot-cache.js';
import type { KubeObject } from '../../../src/cluster/types.js';
import { startSnapshotServer } from '../../../src/snapshot-api/server.js';

/** The parsed-snapshot cache as the command line uses it: where it lives, and what an entry carries. */

const SNAPSHOT = `apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: shop
  creationTimestamp: "2025-03-01T08:00:00Z"
status:
  phase: Running
`;

let dir: string;
const savedXdg = process.env['XDG_CACHE_HOME'];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'calmops-snapshot-cache-'));
});

afterEach(async () => {
  if (savedXdg === undefined) delete process.env['XDG_CACHE_HOME'];
  else process.env['XDG_CACHE_HOME'] = savedXdg;
  await rm(dir, { recursive: true, force: true });
});

describe('the parsed-snapshot cache', () => {
  it('lives under $XDG_CACHE_HOME when that is an absolute path, else beside the packages', () => {
    expect(defaultSnapshotCacheDir({ XDG_CACHE_HOME: '/var/cache/me' })).toBe('/var/cache/me/calmops/snapshots');
    const beside = fileURLToPath(new URL('../../../node_modules/.cache/calmops/snapshots', import.meta.url));
    expect(defaultSnapshotCacheDir({ XDG_CACHE_HOME: 'relative/cache' }).replace(/\/$/, '')).toBe(beside);
    expect(defaultSnapshotCacheDir({}).replace(/\/$/, '')).toBe(beside);
  });

  it('keeps the moment a snapshot was taken, and finds it again for an entry that lacks it', async () => {
    const file = join(dir, 'incident.yaml');
    await writeFile(file, SNAPSHOT);
    const cacheDir = join(dir, 'parsed');
    const first = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
    expect(first.taken?.toISOString()).toBe('2025-03-01T08:00:00.000Z');
    const [entry] = await readdir(cacheDir);
    const path = join(cacheDir, entry as string);
    const written = JSON.parse(await readFile(path, 'utf8')) as { taken: unknown; objects: unknown[] };
    expect(written.taken).toBe('2025-03-01T08:00:00.000Z');

    // The entry is what the next load believes, its time included.
    await writeFile(path, JSON.stringify({ ...written, taken: '2025-03-02T00:00:00.000Z' }));
    expect((await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir))).taken?.toISOString()).toBe(
      '2025-03-02T00:00:00.000Z',
    );
    await writeFile(path, JSON.stringify({ objects: written.objects, secretsSkipped: 0 }));
    expect((await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir))).taken).toEqual(first.taken);
    await writeFile(path, JSON.stringify({ ...written, taken: 'yesterday' }));
    const reparsed = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
    expect(reparsed.taken).toEqual(first.taken);
  });

  it('is what a replay on the command line reads from, readable by its owner only', async () => {
    process.env['XDG_CACHE_HOME'] = join(dir, 'xdg');
    const file = join(dir, 'incident.yaml');
    await writeFile(file, SNAPSHOT);
    const first = await loadSnapshotInput(file, undefined, 1024 * 1024);
    expect(first.objects[0]?.metadata.name).toBe('web-1');
    const cacheDir = join(dir, 'xdg', 'calmops', 'snapshots');
    const entries = await readdir(cacheDir);
    expect(entries).toHaveLength(1);
    const path = join(cacheDir, entries[0] as string);
    expect((await stat(path)).mode & 0o077).toBe(0);
    expect((await stat(cacheDir)).mode & 0o077).toBe(0);

    const crafted = [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'from-cache', namespace: 'shop' } }];
    await writeFile(path, JSON.stringify({ objects: crafted, secretsSkipped: 0, taken: null }));
    const second = await loadSnapshotInput(file, undefined, 1024 * 1024);
    expect(second.objects[0]?.metadata.name).toBe('from-cache');
    expect(second.taken).toBeUndefined();
  });

  describe('a file replayed again', () => {
    /** The cache, with the lookups by text counted: a lookup by text means the file was read and hashed. */
    function counted(cacheDir: string) {
      const cache = snapshotCacheIn(cacheDir);
      const counts = { byText: 0 };
      const wrapped: ParsedSnapshotCache = {
        ...cache,
        get: (text) => {
          counts.byText++;
          return cache.get(text);
        },
      };
      return { cache: wrapped, counts };
    }
    const anHourAgo = () => new Date(Date.now() - 3_600_000);

    it('is not read again while its identity is unchanged', async () => {
      const file = join(dir, 'incident.yaml');
      await writeFile(file, SNAPSHOT);
      await utimes(file, anHourAgo(), anHourAgo());
      const { cache, counts } = counted(join(dir, 'cache'));
      const first = await loadSnapshotFiles(file, undefined, cache);
      expect(counts.byText).toBe(1);
      const second = await loadSnapshotFiles(file, undefined, cache);
      expect(counts.byText).toBe(1);
      expect(second.objects).toEqual(first.objects);
      expect(second.taken).toEqual(first.taken);
    });

    it('is read again when rewritten, even to the same size and modification time', async () => {
      const file = join(dir, 'incident.yaml');
      const then = anHourAgo();
      await writeFile(file, SNAPSHOT);
      await utimes(file, then, then);
      const { cache, counts } = counted(join(dir, 'cache'));
      await loadSnapshotFiles(file, undefined, cache);
      const renamed = SNAPSHOT.replace('web-1', 'web-2');
      expect(renamed.length).toBe(SNAPSHOT.length);
      await writeFile(file, renamed);
      await utimes(file, then, then);
      const second = await loadSnapshotFiles(file, undefined, cache);
      expect(counts.byText).toBe(2);
      expect(second.objects[0]?.metadata.name).toBe('web-2');
    });

    it('is read again when it changed just before it was read (its clock tick may hide a rewrite)', async () => {
      const file = join(dir, 'incident.yaml');
      await writeFile(file, SNAPSHOT);
      const { cache, counts } = counted(join(dir, 'cache'));
      await loadSnapshotFiles(file, undefined, cache);
      await loadSnapshotFiles(file, undefined, cache);
      expect(counts.byText).toBe(2);
    });

    it('is parsed again when its entry is gone', async () => {
      const file = join(dir, 'incident.yaml');
      await writeFile(file, SNAPSHOT);
      await utimes(file, anHourAgo(), anHourAgo());
      const cacheDir = join(dir, 'cache');
      const { cache } = counted(cacheDir);
      await loadSnapshotFiles(file, undefined, cache);
      for (const name of await readdir(cacheDir)) if (name.endsWith('.json')) await rm(join(cacheDir, name));
      const again = await loadSnapshotFiles(file, undefined, cache);
      expect(again.objects[0]?.metadata.name).toBe('web-1');
    });
  });

  describe('an entry read back', () => {
    const DUMP = [
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\n  namespace: shop\n  resourceVersion: "7"\n  labels: {app: web}\nspec:\n  nodeName: worker-1\n  containers: [{name: web, image: web:1}]\nstatus:\n  phase: Running\n',
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-2\n  namespace: shop\n  labels: {app: web, tier: canary}\nspec:\n  nodeName: worker-2\n  containers: [{name: web, image: web:2}]\nstatus:\n  phase: Pending\n',
      'apiVersion: events.k8s.io/v1\nkind: Event\nmetadata:\n  name: web-2.1\n  namespace: shop\nregarding: {kind: Pod, name: web-2, namespace: shop}\nreason: FailedScheduling\nnote: 0/3 nodes are available\ntype: Warning\neventTime: "2025-03-01T08:00:00.000000Z"\n',
      'apiVersion: v1\nkind: Event\nmetadata:\n  name: worker-1.1\n  namespace: default\ninvolvedObject: {kind: Node, name: worker-1}\nreason: NodeNotReady\ntype: Warning\ncount: 2\nlastTimestamp: "2025-03-01T08:00:00Z"\n',
      'apiVersion: v1\nkind: Node\nmetadata:\n  name: worker-1\n  namespace: stray\n',
    ].join('---\n');
    const QUERIES = [
      '/api/v1/namespaces/shop/pods',
      '/api/v1/pods?labelSelector=tier%3Dcanary',
      '/api/v1/pods?fieldSelector=spec.nodeName%3Dworker-2',
      '/api/v1/pods?fieldSelector=status.phase!%3DRunning,metadata.namespace%3Dshop',
      '/api/v1/events?fieldSelector=involvedObject.kind%3DNode',
      '/api/v1/namespaces/shop/events?fieldSelector=involvedObject.name%3Dweb-2,type%3DWarning',
      '/api/v1/namespaces/shop/pods/web-1',
      '/api/v1/namespaces/shop/pods/web-1/log?container=web',
      '/api/v1/nodes/worker-1',
      '/api/v1/pods?limit=1',
    ];

    type Served = Parameters<typeof startSnapshotServer>[0]['objects'];

    /** Runs `use` against a snapshot API server serving `objects`, closing it afterwards. */
    async function serving<T>(objects: Served, use: (url: string) => Promise<T>): Promise<T> {
      const server = await startSnapshotServer({ objects, port: 0, now: new Date('2025-03-01T09:00:00Z') });
      try {
        return await use(server.url);
      } finally {
        await server.close();
      }
    }

    function answers(objects: Served): Promise<string[]> {
      return serving(objects, async (url) => {
        const texts: string[] = [];
        for (const query of QUERIES) {
          const response = await fetch(`${url}${query}`);
          // A continue token carries the moment it was issued.
          texts.push(`${response.status} ${(await response.text()).replace(/"continue":"[^"]+"/, '"continue":…')}`);
        }
        const table = await fetch(`${url}/api/v1/namespaces/shop/pods`, {
          headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
        });
        texts.push(`${table.status} ${await table.text()}`);
        return texts;
      });
    }

    /** The one entry a test's cache directory holds. */
    async function entryIn(cacheDir: string): Promise<string> {
      return join(cacheDir, (await readdir(cacheDir)).find((name) => name.endsWith('.json')) as string);
    }

    it('serves lists, selectors, gets, logs and tables exactly as the parsed snapshot does', async () => {
      const file = join(dir, 'incident.yaml');
      await writeFile(file, DUMP);
      const cacheDir = join(dir, 'cache');
      const parsed = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
      const cached = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
      expect(cached.stored).not.toBe(parsed.stored);
      const fromCache = await answers(cached.stored);
      expect(fromCache).toEqual(await answers(parseSnapshotText(DUMP).objects));
      // The run that parsed it serves it from the entry it has just written, alike.
      expect(await answers(parsed.stored)).toEqual(fromCache);
      // The selectors selected something: an empty answer everywhere would also be equal.
      expect(fromCache[2]).toContain('"name":"web-2"');
      expect(fromCache[2]).not.toContain('"name":"web-1"');
      expect(fromCache[5]).toContain('FailedScheduling');
      expect(cached.objects).toEqual(parsed.objects);
    });

    it('keeps text that is not ASCII as it was written', async () => {
      const file = join(dir, 'incident.yaml');
      const message = 'Zeitüberschreitung beim Lesen — 读取超时 ☕';
      await writeFile(file, `${SNAPSHOT}  message: "${message}"\n`);
      const cacheDir = join(dir, 'cache');
      await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
      const cached = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
      expect(cached.objects[0]?.status?.['message']).toBe(message);
      expect(cached.stored[0]?.text).toContain(message);
      // Cut out where its length in bytes says, not read whole from the objects: the entry records bytes.
      const first = (await readFile(await entryIn(cacheDir), 'utf8')).split('\n')[0] as string;
      const lengths = (JSON.parse(`${first}]}`) as { lengths: number[] }).lengths;
      expect(lengths[0]).toBe(Buffer.byteLength(cached.stored[0]?.text ?? '', 'utf8'));
      expect(lengths[0]).toBeGreaterThan((cached.stored[0]?.text ?? '').length);
      // Served as the bytes it was kept as.
      const list = await serving(
        cached.stored,
        async (url) => (await (await fetch(`${url}/api/v1/pods`)).json()) as { items: KubeObject[] },
      );
      expect(list.items[0]?.status?.['message']).toBe(message);
    });

    it('is a miss, parsed again and written again, when the texts are not where their lengths say', async () => {
      const file = join(dir, 'incident.yaml');
      await writeFile(file, DUMP);
      const cacheDir = join(dir, 'cache');
      const parsed = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
      const path = await entryIn(cacheDir);
      const text = await readFile(path, 'utf8');
      const shifted = text.replace(/"lengths":\[(\d+)/, (_match, first: string) => `"lengths":[${Number(first) + 1}`);
      expect(shifted).not.toBe(text);
      await writeFile(path, shifted);
      const again = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
      expect(again.objects).toEqual(parsed.objects);
      expect(again.stored.map((o) => o.text)).toEqual(parsed.stored.map((o) => o.text));
      expect(await readFile(path, 'utf8')).toBe(text);
    });

    /** Writes the entry of DUMP, and returns its path, its text, and the objects as parsed. */
    async function written() {
      const file = join(dir, 'incident.yaml');
      await writeFile(file, DUMP);
      const cacheDir = join(dir, 'cache');
      const parsed = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
      const path = await entryIn(cacheDir);
      return { file, cacheDir, path, text: await readFile(path, 'utf8'), parsed };
    }

    /** The entry's lines: the first (summary and who the objects are), the columns, and the rest. */
    function linesOf(text: string): string[] {
      return text.split('\n');
    }

    /** `text` with its digest made to vouch for it again, as a writer of a wrong entry would. */
    function redigested(text: string): string {
      const objects = text.indexOf('\n],"objects":[\n') + '\n],"objects":[\n'.length;
      const bytes = Buffer.from(text, 'utf8');
      const end = Buffer.byteLength(text.slice(0, objects), 'utf8');
      const digest = createHash('sha256').update(bytes.subarray(75, end)).digest('hex');
      return `{"digest":"${digest}${text.slice(75)}`;
    }

    it('is a miss, parsed again, when a column is not what was written', async () => {
      const { file, cacheDir, path, text, parsed } = await written();
      const column = linesOf(text).find((line) => line.startsWith('["worker-1","worker-2"]'));
      expect(column).toBeDefined();
      await writeFile(path, text.replace(column as string, '["worker-2","worker-2"],'));
      const again = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
      expect(again.stored.map((o) => o.name)).toEqual(['web-1', 'web-2', 'web-2.1', 'worker-1.1', 'worker-1']);
      expect(again.stored.map((o) => o.fields[0])).toEqual(parsed.stored.map((o) => o.fields[0]));
      expect(again.objects[0]?.spec?.['nodeName']).toBe('worker-1');
      expect(await readFile(path, 'utf8')).toBe(text);
    });

    it('is a miss when a name, a namespace or the order of its objects is changed, or it is cut short', async () => {
      const { file, cacheDir, path, text, parsed } = await written();
      const [first = ''] = linesOf(text);
      const changes = [
        text.replace('"names":["worker-1.1"', '"names":["worker-1.2"'),
        text.replace('"namespaces":[["default",1]', '"namespaces":[["dflt",1]'),
        text.replace(/"order":\[(\d+),(\d+)/, '"order":[$2,$1'),
        text.slice(0, first.length + 40),
        text.slice(0, -3),
      ];
      for (const changed of changes) {
        expect(changed).not.toBe(text);
        await writeFile(path, changed);
        const again = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
        expect(again.stored.map((o) => `${o.namespace}/${o.name}`)).toEqual(
          parsed.stored.map((o) => `${o.namespace}/${o.name}`),
        );
        expect(await answers(again.served)).toEqual(await answers(parseSnapshotText(DUMP).objects));
        expect(await readFile(path, 'utf8')).toBe(text);
      }
    });

    it('lays its objects out by resource, namespace and name, and reads a column only for a selector', async () => {
      const { file, cacheDir, path, text } = await written();
      const [first = ''] = linesOf(text);
      const index = JSON.parse(`${first.slice(0, -',"columns":['.length)}}`) as {
        names: string[];
        namespaces: [string | null, number][];
        kinds: [string | null, number][];
        runs: [string, number, ...number[]][];
      };
      expect(index.names).toEqual(['worker-1.1', 'web-2.1', 'worker-1', 'web-1', 'web-2']);
      expect(index.namespaces).toEqual([
        ['default', 1],
        ['shop', 1],
        ['stray', 1],
        ['shop', 2],
      ]);
      expect(index.kinds).toEqual([
        ['Event', 2],
        ['Node', 1],
        ['Pod', 2],
      ]);
      expect(index.runs.map(([plural, count, ...columns]) => [plural, count, columns.length])).toEqual([
        ['events', 2, 12],
        ['nodes', 1, 2],
        ['pods', 2, 9],
      ]);
      // A column of labels that is not labels, vouched for by its digest: only a writer gone wrong makes one.
      const labels = linesOf(text).find((line) => line.startsWith('[{"app":"web"},'));
      expect(labels).toBeDefined();
      const line = labels as string;
      await writeFile(path, redigested(text.replace(line, `[7,8${' '.repeat(line.length - 6)}],`)));
      const cached = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
      expect(await readFile(path, 'utf8')).not.toBe(text);
      const [expected, selected, got] = await serving(cached.served, async (url) => {
        const plain = await fetch(`${url}/api/v1/namespaces/shop/pods`);
        const bySelector = await fetch(`${url}/api/v1/pods?labelSelector=app%3Dweb`);
        const one = await fetch(`${url}/api/v1/namespaces/shop/pods/web-2`);
        return [await plain.text(), bySelector.status, await one.text()];
      });
      const fresh = await serving(parseSnapshotText(DUMP).objects, async (url) =>
        (await fetch(`${url}/api/v1/namespaces/shop/pods`)).text(),
      );
      // Lists and gets that need no labels are answered without reading the column; one that does fails whole,
      // rather than answering from labels that are not there.
      expect(expected.replace(/"resourceVersion":"\d+"/, '')).toBe(fresh.replace(/"resourceVersion":"\d+"/, ''));
      expect(got).toContain('"name":"web-2"');
      expect(selected).toBe(500);
    });

    it('serves objects of several resources and namespaces, selected and one by one, as parsed', async () => {
      const many = Array.from({ length: 3 }, (_, n) =>
        [
          `apiVersion: v1\nkind: Pod\nmetadata:\n  name: api-${n}\n  namespace: ns-${2 - n}\n  labels: {app: api, shard: "${n}"}\nspec:\n  nodeName: worker-${n % 2}\nstatus:\n  phase: ${n === 1 ? 'Pending' : 'Running'}\n`,
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ns-${n}\n  labels: {app: api}\ndata: {mode: "${n}"}\n`,
          `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  namespace: ns-${n}\n  labels: {app: api}\nspec:\n  replicas: ${n}\n`,
          `apiVersion: v1\nkind: Event\nmetadata:\n  name: api-${n}.${n}\n  namespace: ns-${2 - n}\ninvolvedObject: {kind: Pod, name: api-${n}, namespace: ns-${2 - n}}\nreason: ${n === 1 ? 'FailedScheduling' : 'Started'}\ntype: ${n === 1 ? 'Warning' : 'Normal'}\n`,
        ].join('---\n'),
      ).join('---\n');
      const file = join(dir, 'many.yaml');
      await writeFile(file, many);
      const cacheDir = join(dir, 'cache');
      await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
      const cached = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
      const queries = [
        '/api/v1/pods',
        '/api/v1/namespaces/ns-1/pods',
        '/api/v1/pods?labelSelector=shard%20in%20(0,2)',
        '/api/v1/configmaps?labelSelector=app%3Dapi&limit=2',
        '/api/v1/namespaces/ns-2/configmaps/settings',
        '/apis/apps/v1/namespaces/ns-0/deployments/api',
        '/apis/apps/v1/deployments?fieldSelector=metadata.namespace!%3Dns-1',
        '/api/v1/pods?fieldSelector=status.phase%3DPending',
        '/api/v1/events?fieldSelector=reason%3DFailedScheduling,type%3DWarning',
        '/api/v1/namespaces/ns-2/events?fieldSelector=involvedObject.name%3Dapi-0',
        '/api/v1/namespaces/ns-9/pods/api-0',
      ];
      const ask = (objects: Served) =>
        serving(objects, async (url) => {
          const texts: string[] = [];
          for (const query of queries) {
            const response = await fetch(`${url}${query}`);
            texts.push(`${response.status} ${(await response.text()).replace(/"continue":"[^"]+"/, '"continue":…')}`);
          }
          return texts;
        });
      const fromCache = await ask(cached.served);
      expect(fromCache).toEqual(await ask(parseSnapshotText(many).objects));
      expect(fromCache[2]).toContain('"name":"api-2"');
      expect(fromCache[2]).not.toContain('"name":"api-1"');
      expect(fromCache[7]).toContain('"name":"api-1"');
      expect(fromCache[8]).toContain('"name":"api-1.1"');
      expect(fromCache[9]).toContain('"name":"api-0.0"');
      expect(fromCache[10]).toMatch(/^404 /);
      expect(cached.stored.map((o) => o.name)).toEqual(parseSnapshotText(many).objects.map((o) => o.metadata.name));
    });
  });
});
