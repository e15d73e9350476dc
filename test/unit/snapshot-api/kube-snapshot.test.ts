import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  loadSnapshotFiles,
  parseSnapshot,
  parseSnapshotText,
  SnapshotFileError,
  secretsSkippedNotice,
  siblingLogsPath,
  snapshotNow,
} from '../../../src/cluster/snapshot.js';

const fixture = join(import.meta.dirname, '..', '..', 'fixtures', 'kube', 'demo.yaml');

describe('snapshot files', () => {
  it('loads the demo snapshot, unwrapping lists, with its sibling logs', async () => {
    const loaded = await loadSnapshotFiles(fixture);
    expect(loaded.objects.filter((o) => o.kind === 'Event')).toHaveLength(5);
    expect(loaded.objects.some((o) => o.kind === 'List')).toBe(false);
    expect(loaded.logsPath).toBe(siblingLogsPath(fixture));
    expect(loaded.logs['shop/checkout-6f5b9c7d4-x2k9p/checkout:previous']).toContain('PAYMENTS_API_KEY');
  });

  it('takes the newest timestamp in the snapshot as its time', async () => {
    const { objects } = await loadSnapshotFiles(fixture);
    expect(snapshotNow(objects)?.toISOString()).toBe('2024-05-14T10:15:00.000Z');
    expect(snapshotNow([{ metadata: { name: 'x' } }])).toBeUndefined();
  });

  it('names the sibling logs file after the snapshot', () => {
    expect(siblingLogsPath('/tmp/incident.yaml')).toBe('/tmp/incident.logs.json');
    expect(siblingLogsPath('snap.YML')).toBe('snap.logs.json');
    expect(siblingLogsPath('snap')).toBe('snap.logs.json');
  });

  it('reports a missing file or logs file clearly', async () => {
    await expect(loadSnapshotFiles('/nonexistent/snap.yaml')).rejects.toThrow(
      new SnapshotFileError('cannot read snapshot file /nonexistent/snap.yaml: no such file'),
    );
    await expect(loadSnapshotFiles(fixture, '/nonexistent/logs.json')).rejects.toBeInstanceOf(SnapshotFileError);
  });

  it('works without logs when there is no sibling file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'calmops-snap-'));
    const file = join(dir, 'one.yaml');
    await writeFile(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: b\n');
    const loaded = await loadSnapshotFiles(file);
    expect(loaded).toEqual({
      stored: [expect.objectContaining({ kind: 'ConfigMap', name: 'a', namespace: 'b' })],
      served: [expect.objectContaining({ kind: 'ConfigMap', name: 'a', namespace: 'b' })],
      objects: [expect.objectContaining({ kind: 'ConfigMap' })],
      secretsSkipped: 0,
      logs: {},
    });
  });

  it('drops Secrets in any spelling, also inside lists, and keeps nothing of their data', () => {
    const dump = [
      'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: s\n  data:\n    password: aHVudGVyMg==\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n    namespace: n\n',
      'apiVersion: v1\nkind: secret\nmetadata:\n  name: lower\nstringData:\n  token: hunter2\n',
      'apiVersion: v1\nkind: SECRET\nmetadata:\n  name: upper\n',
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: n\n',
    ].join('---\n');
    const parsed = parseSnapshotText(dump, 'x.yaml');
    expect(parsed.secretsSkipped).toBe(3);
    expect(parsed.objects.map((o) => o.kind)).toEqual(['ConfigMap', 'Pod']);
    expect(JSON.stringify(parsed)).not.toMatch(/hunter2|aHVudGVyMg|lower|upper/);
    expect(secretsSkippedNotice(parsed.secretsSkipped)).toBe('3 Secrets skipped, never read');
    expect(secretsSkippedNotice(1)).toBe('1 Secret skipped, never read');
    expect(secretsSkippedNotice(0)).toBeUndefined();
  });

  it('points at the broken document', () => {
    expect(() => parseSnapshot('apiVersion: v1\nkind: Pod\nmetadata: {}\n', 's.yaml')).toThrow(
      /s.yaml: document 1 is not a Kubernetes object \(metadata.name/,
    );
    expect(() => parseSnapshot('a: [1,\n', 's.yaml')).toThrow(/document 1 is not valid YAML/);
  });
});
