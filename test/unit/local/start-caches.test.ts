import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { snapshotCacheIn } from '../../../local/snapshot-cache.js';
import { prepareDefinition } from '../../../local/stepfunctions/definition.js';
import { StateMachineDefinitionError } from '../../../local/stepfunctions/errors.js';
import { validateStateMachines } from '../../../local/stepfunctions/validate.js';
import { fileValidatedDefinitions } from '../../../local/stepfunctions/validated-file.js';
import { loadSnapshotFiles } from '../../../src/cluster/snapshot.js';

/** What `npm start` remembers between runs so that it does not validate or parse the same thing twice. */

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'calmops-caches-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const VALID = JSON.stringify({ StartAt: 'A', States: { A: { Type: 'Pass', End: true } } });
// Well-formed enough to rewrite and run, but refused by the engine's full validation.
const INVALID = JSON.stringify({ StartAt: 'Nope', States: { A: { Type: 'Pass', End: true } } });

describe('validated state machine definitions', () => {
  it('records what passed, for the next process, and nothing that failed', async () => {
    const file = join(dir, 'validated.json');
    validateStateMachines([{ name: 'ok', definition: VALID }], { validatedDefinitionsFile: file });
    expect(() =>
      validateStateMachines([{ name: 'bad', definition: INVALID }], { validatedDefinitionsFile: file }),
    ).toThrow(StateMachineDefinitionError);
    const recorded = JSON.parse(await readFile(file, 'utf8')) as { hashes: string[] };
    expect(recorded.hashes).toHaveLength(1);
    // Neither text appears in the file, only a hash.
    expect(JSON.stringify(recorded)).not.toContain('Pass');

    const later = fileValidatedDefinitions(file);
    expect(later.has(VALID)).toBe(true);
    expect(later.has(INVALID)).toBe(false);
    // A changed definition is a different text, validated again.
    expect(later.has(VALID.replace('"A"', '"B"'))).toBe(false);
  });

  it('skips validation only for a recorded text', () => {
    const file = join(dir, 'validated.json');
    expect(() => prepareDefinition(INVALID)).toThrow(StateMachineDefinitionError);
    // Recording a text stands for "this passed before": prepare then goes straight to building the machine.
    fileValidatedDefinitions(file).add(INVALID);
    expect(() => prepareDefinition(INVALID, { validated: fileValidatedDefinitions(file) })).not.toThrow();
  });

  it('treats a missing or malformed file as empty and repairs it', async () => {
    const file = join(dir, 'validated.json');
    expect(fileValidatedDefinitions(file).has(VALID)).toBe(false);
    await writeFile(file, '{"version": 1, "hashes": ');
    const cache = fileValidatedDefinitions(file);
    expect(cache.has(VALID)).toBe(false);
    cache.add(VALID);
    expect(fileValidatedDefinitions(file).has(VALID)).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(['validated.json']);
  });

  it('keeps entries that another process added in the meantime', () => {
    const file = join(dir, 'validated.json');
    const one = fileValidatedDefinitions(file);
    const other = fileValidatedDefinitions(file);
    expect(one.has(VALID)).toBe(false);
    other.add(INVALID);
    one.add(VALID);
    const after = fileValidatedDefinitions(file);
    expect(after.has(VALID)).toBe(true);
    expect(after.has(INVALID)).toBe(true);
  });
});

const SNAPSHOT = `apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: shop
status:
  phase: Running
`;

describe('parsed snapshots', () => {
  it('parses once and then reads the same objects back by content', async () => {
    const file = join(dir, 'incident.yaml');
    await writeFile(file, SNAPSHOT);
    const cacheDir = join(dir, 'parsed');
    const first = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
    const entries = await readdir(cacheDir);
    expect(entries).toHaveLength(1);
    expect((await stat(join(cacheDir, entries[0] as string))).mode & 0o077).toBe(0);
    const second = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
    expect(second.objects).toEqual(first.objects);
    expect(second.objects[0]?.metadata.name).toBe('web-1');

    // An entry is found by the text it came from: a crafted one is what the next load returns.
    const crafted = [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'from-cache', namespace: 'shop' } }];
    await writeFile(join(cacheDir, entries[0] as string), JSON.stringify({ objects: crafted, secretsSkipped: 0 }));
    const cached = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
    expect(cached.objects[0]?.metadata.name).toBe('from-cache');

    // A changed snapshot is parsed again.
    await writeFile(file, SNAPSHOT.replace('web-1', 'web-2'));
    const changed = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
    expect(changed.objects[0]?.metadata.name).toBe('web-2');
    expect(await readdir(cacheDir)).toHaveLength(2);
  });

  it('parses again when an entry is unreadable, and never caches a refused snapshot', async () => {
    const file = join(dir, 'incident.yaml');
    await writeFile(file, SNAPSHOT);
    const cacheDir = join(dir, 'parsed');
    await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
    const [entry] = await readdir(cacheDir);
    await writeFile(join(cacheDir, entry as string), '[{"broken": ');
    const again = await loadSnapshotFiles(file, undefined, snapshotCacheIn(cacheDir));
    expect(again.objects[0]?.metadata.name).toBe('web-1');

    const secret = join(dir, 'secret.yaml');
    await writeFile(
      secret,
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: shop\ndata:\n  password: aHVudGVyMg==\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: shop\n',
    );
    const first = await loadSnapshotFiles(secret, undefined, snapshotCacheIn(cacheDir));
    const cached = await loadSnapshotFiles(secret, undefined, snapshotCacheIn(cacheDir));
    expect(cached).toEqual(first);
    expect(cached.secretsSkipped).toBe(1);
    const entries = await readdir(cacheDir);
    expect(entries).toHaveLength(2);
    for (const e of entries) expect(await readFile(join(cacheDir, e), 'utf8')).not.toMatch(/creds|aHVudGVyMg/);
  });

  it('keeps the eight most recent snapshots', async () => {
    const cacheDir = join(dir, 'parsed');
    const cache = snapshotCacheIn(cacheDir);
    for (let i = 0; i < 10; i += 1) {
      const file = join(dir, `s${i}.yaml`);
      await writeFile(file, SNAPSHOT.replace('web-1', `web-${i}`));
      await loadSnapshotFiles(file, undefined, cache);
    }
    expect(await readdir(cacheDir)).toHaveLength(8);
  });
});
