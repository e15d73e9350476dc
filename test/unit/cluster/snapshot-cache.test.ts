import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSnapshotInput } from '../../../src/cli/input-files.js';
import { loadSnapshotFiles, type ParsedSnapshotCache } from '../../../src/cluster/snapshot.js';
import { defaultSnapshotCacheDir, snapshotCacheIn } from '../../../src/cluster/snapshot-cache.js';

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
});
