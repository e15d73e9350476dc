import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMemoryTable } from '../../../bench/support/memory-corpus.js';
import { MalformedRecordError, StoreValidationError } from '../../../src/store/errors.js';
import {
  incidentFromResolution,
  MemoryAlreadyStoredError,
  MemoryNotFoundError,
  MemoryRepository,
} from '../../../src/store/memory.js';
import { fingerprintEnvelope } from '../../../src/store/memory-fingerprint.js';
import { envelope } from '../../support/diagnosis-fixtures.js';

describe('MemoryRepository on dynalite', () => {
  let table: Awaited<ReturnType<typeof startMemoryTable>>;
  let memory: MemoryRepository;

  beforeAll(async () => {
    table = await startMemoryTable();
    memory = new MemoryRepository(table.client, table.tableName);
  });
  afterAll(async () => {
    await table?.close();
  });

  const resolved = (sessionId: string, minutes = 42) =>
    incidentFromResolution({
      envelope: envelope(),
      rootCause: { code: 'PVC_PENDING', summary: 'StorageClass fast-ssd was deleted' },
      resolutionSteps: [{ command: 'kubectl apply -f sc-fast-ssd.yaml', rollback: 'kubectl delete sc fast-ssd' }],
      resolvedBy: 'U222',
      startedAt: new Date('2025-08-10T04:00:00.000Z'),
      resolvedAt: new Date(Date.parse('2025-08-10T04:00:00.000Z') + minutes * 60_000),
      sessionId,
    });

  it('stores a resolved incident with its fingerprint, resolution, resolver and time to resolve', async () => {
    const stored = await memory.save(resolved('sess-1'));
    expect(stored).toMatchObject({
      id: 'sess-1',
      sessionId: 'sess-1',
      resolvedBy: 'U222',
      timeToResolveMs: 42 * 60_000,
    });
    expect(stored.tokens).toContain('root:PVC_PENDING');
    const read = await memory.get('sess-1');
    expect(read).toEqual(stored);
    expect(read.symptoms[0]).toMatch(/^PVC_PENDING: /);
  });

  it('refuses to store the same incident twice and leaves the first intact', async () => {
    await expect(memory.save({ ...resolved('sess-1'), resolvedBy: 'U999' })).rejects.toBeInstanceOf(
      MemoryAlreadyStoredError,
    );
    expect((await memory.get('sess-1')).resolvedBy).toBe('U222');
  });

  it('finds it again from a new envelope, with a one-line explanation and the resolution', async () => {
    const matches = await memory.findSimilar(envelope());
    expect(matches[0]?.incident.id).toBe('sess-1');
    expect(matches[0]?.explanation).toMatch(/^same intent, same root cause PVC_PENDING, 3 of 3 finding codes/);
    expect(matches[0]?.incident.resolutionSteps[0]?.command).toBe('kubectl apply -f sc-fast-ssd.yaml');
    expect(await memory.findSimilar(envelope(), { excludeId: 'sess-1' })).toEqual([]);
  });

  it('never shows an incident whose save stopped before the commit', async () => {
    // Token items written, incident item never: what a crash between the two steps leaves behind.
    const fingerprint = fingerprintEnvelope(envelope());
    await table.client.send(
      new BatchWriteCommand({
        RequestItems: {
          [table.tableName]: [
            {
              PutRequest: {
                Item: {
                  PK: 'TOKEN#root:PVC_PENDING',
                  SK: 'MEMORY#ghost',
                  memoryId: 'ghost',
                  resolvedAt: '2030-01-01T00:00:00.000Z',
                  fingerprint,
                },
              },
            },
          ],
        },
      }),
    );
    const ids = (await memory.findSimilar(envelope())).map((m) => m.incident.id);
    expect(ids).toEqual(['sess-1']);
    // A retry of the interrupted save completes it.
    await memory.save({ ...resolved('ghost'), sessionId: 'ghost' });
    expect((await memory.findSimilar(envelope())).map((m) => m.incident.id).sort()).toEqual(['ghost', 'sess-1']);
  });

  it('rejects bad input before writing anything', async () => {
    const bad = { ...resolved('bad-1'), resolutionSteps: [] };
    await expect(memory.save(bad)).rejects.toBeInstanceOf(StoreValidationError);
    await expect(memory.get('bad-1')).rejects.toBeInstanceOf(MemoryNotFoundError);
    await expect(memory.get('has#hash')).rejects.toBeInstanceOf(StoreValidationError);
  });

  it('reports a malformed stored record with its key', async () => {
    await table.client.send(
      new PutCommand({ TableName: table.tableName, Item: { PK: 'MEMORY#broken', SK: 'META', id: 'broken', title: 3 } }),
    );
    await expect(memory.get('broken')).rejects.toThrow(MalformedRecordError);
    await expect(memory.get('broken')).rejects.toThrow(/MEMORY#broken \/ META/);
  });

  it('lists recent incidents newest first and imports history without overwriting', async () => {
    const result = await memory.importIncidents([resolved('imp-1', 60), resolved('sess-1', 5), resolved('imp-2', 90)]);
    expect(result).toEqual({ stored: 2, skipped: ['sess-1'] });
    const recent = await memory.listRecent(3);
    expect(recent.map((i) => i.id)).toEqual(['imp-2', 'imp-1', 'sess-1']);
  });
});
