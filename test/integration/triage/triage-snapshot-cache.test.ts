import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { type CalmopsRun, runCalmopsBin } from '../../support/calmops-bin.js';

/**
 * The parsed-snapshot cache as a user meets it: `calmops triage --snapshot` run again and again as a process, with
 * the cache under $XDG_CACHE_HOME. Whatever state the cache is in (empty, warm, stale, corrupt, unwritable), the
 * envelope is the one a fresh parse gives, and nothing is said about the cache.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = join(root, 'test/fixtures/snapshots/scheduling-failures--insufficient-cpu.yaml');
const dir = mkdtempSync(join(tmpdir(), 'calmops-snapshot-cache-cli-'));
const SECRET_VALUE = 'c3VwZXItc2VjcmV0LXBhc3N3b3Jk';
const SECRET = `apiVersion: v1
kind: Secret
metadata:
  name: payments-db
  namespace: payments
type: Opaque
data:
  password: ${SECRET_VALUE}
`;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A snapshot of its own for a test, last changed an hour ago, so the cache may trust its identity. */
function snapshotFile(name: string, text: string, folder = dir): string {
  const file = join(folder, `${name}.yaml`);
  writeFileSync(file, text);
  const anHourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(file, anHourAgo, anHourAgo);
  return file;
}

function triage(file: string, cacheHome: string): Promise<CalmopsRun> {
  return runCalmopsBin(['triage', 'pods stuck pending in payments', '--snapshot', file, '--json'], {
    cwd: dir,
    env: { ...process.env, NODE_OPTIONS: '', KUBECONFIG: '', HOME: dir, XDG_CACHE_HOME: cacheHome },
  });
}

/** The envelope without its run time, the one field that differs from run to run. */
function envelopeOf(run: CalmopsRun): string {
  expect(run.code).toBe(0);
  const envelope = JSON.parse(run.stdout) as { execution: Record<string, unknown> };
  delete envelope.execution['durationMs'];
  return JSON.stringify(envelope);
}

function entriesIn(cacheHome: string): string[] {
  const cacheDir = join(cacheHome, 'calmops', 'snapshots');
  return readdirSync(cacheDir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => join(cacheDir, name));
}

describe('calmops triage --snapshot, run again', () => {
  const original = readFileSync(fixture, 'utf8');

  it('answers from the cache as from a fresh parse, and keeps no Secret in it', async () => {
    const file = snapshotFile('with-secret', `${original}---\n${SECRET}`);
    const cacheHome = join(dir, 'cache-warm');
    const first = await triage(file, cacheHome);
    const [entry] = entriesIn(cacheHome);
    const written = readFileSync(entry as string, 'utf8');
    const second = await triage(file, cacheHome);
    expect(envelopeOf(second)).toBe(envelopeOf(first));
    expect(first.stderr).toContain('1 Secret skipped, never read');
    expect(second.stderr).toBe(first.stderr);
    // The entry was read, not written again, and holds the Secret's count only.
    expect(readFileSync(entry as string, 'utf8')).toBe(written);
    expect(written).toContain('"secretsSkipped":1');
    expect(written).not.toContain(SECRET_VALUE);
    expect(written).not.toContain('payments-db');
    expect(written).not.toMatch(/"kind":"Secret"/);
  });

  it('reads a snapshot again once it has changed', async () => {
    const file = snapshotFile('changing', original);
    const cacheHome = join(dir, 'cache-changing');
    const before = envelopeOf(await triage(file, cacheHome));
    // Rewritten with every pod pending on memory instead of CPU, as a new capture would be.
    const changed = original.replaceAll('Insufficient cpu', 'Insufficient memory');
    expect(changed).not.toBe(original);
    snapshotFile('changing', changed);
    const after = await triage(file, cacheHome);
    expect(envelopeOf(after)).not.toBe(before);
    expect(after.stdout).toContain('Insufficient memory');
    // What a first replay of the new capture, under the same name, answers.
    const elsewhere = mkdtempSync(join(dir, 'elsewhere-'));
    const fresh = await triage(snapshotFile('changing', changed, elsewhere), join(dir, 'cache-fresh'));
    expect(envelopeOf(after)).toBe(envelopeOf(fresh));
  });

  it('parses the snapshot afresh, saying nothing, when an entry is corrupt, and mends it', async () => {
    const file = snapshotFile('corrupt', original);
    const cacheHome = join(dir, 'cache-corrupt');
    const fresh = await triage(file, cacheHome);
    const [entry] = entriesIn(cacheHome);
    const written = readFileSync(entry as string);
    const damages: Array<[string, Buffer]> = [
      ['cut short', written.subarray(0, Math.floor(written.length / 2))],
      ['a text moved by one byte', Buffer.from(written.toString('utf8').replace('{"apiVersion"', ' {"apiVersion"'))],
      ['not JSON', Buffer.from('\u0000\u0001garbage')],
      ['empty', Buffer.alloc(0)],
    ];
    for (const [damage, bytes] of damages) {
      writeFileSync(entry as string, bytes);
      const run = await triage(file, cacheHome);
      expect({ damage, stderr: run.stderr }).toEqual({ damage, stderr: fresh.stderr });
      expect(envelopeOf(run)).toBe(envelopeOf(fresh));
      expect(readFileSync(entry as string).equals(written)).toBe(true);
    }
  });

  it('runs without a cache, saying nothing, where none can be written', async () => {
    const file = snapshotFile('unwritable', original);
    // The cache's home is a file: nothing can be made under it.
    const cacheHome = join(dir, 'not-a-directory');
    writeFileSync(cacheHome, '');
    const expected = await triage(file, join(dir, 'cache-writable'));
    for (let run = 0; run < 2; run++) {
      const result = await triage(file, cacheHome);
      expect(result.stderr).toBe(expected.stderr);
      expect(envelopeOf(result)).toBe(envelopeOf(expected));
    }
    expect(readFileSync(cacheHome, 'utf8')).toBe('');
  });
});
