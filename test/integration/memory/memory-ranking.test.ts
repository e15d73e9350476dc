import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpus, FAMILIES, startMemoryTable, variant } from '../../../bench/support/memory-corpus.js';
import { prng } from '../../../bench/support/prng.js';
import { MemoryRepository } from '../../../src/store/memory.js';

describe('similar-incident ranking on 500 stored incidents', () => {
  let table: Awaited<ReturnType<typeof startMemoryTable>>;
  let memory: MemoryRepository;

  beforeAll(async () => {
    table = await startMemoryTable();
    memory = new MemoryRepository(table.client, table.tableName);
    const incidents = corpus(10, 7);
    expect(incidents).toHaveLength(500);
    const result = await memory.importIncidents(incidents);
    expect(result).toEqual({ stored: 500, skipped: [] });
  });

  afterAll(async () => {
    await table?.close();
  });

  it('finds the family of held-out variants in the top 5, mostly at rank 1', async () => {
    const random = prng(99_001);
    let top1 = 0;
    let top5 = 0;
    let queries = 0;
    let maxRequests = 0;
    const misses: string[] = [];
    for (const family of FAMILIES) {
      for (let k = 0; k < 2; k++) {
        const query = variant(family, random, 10_000 + queries);
        const { matches, stats } = await memory.search(query, { limit: 5 });
        queries++;
        maxRequests = Math.max(maxRequests, stats.requests);
        expect(stats.tokensQueried).toBeLessThanOrEqual(8);
        const families = matches.map((m) => m.incident.rootCause.summary);
        if (families[0] === family.id) top1++;
        if (families.includes(family.id)) top5++;
        else misses.push(`${family.id} -> ${families.join(', ')}`);
        expect(matches.length).toBeGreaterThan(0);
        expect(matches[0]?.explanation).toMatch(/intent/);
        expect(matches[0]?.incident.resolutionSteps.length).toBeGreaterThan(0);
      }
    }
    const precisionAt1 = top1 / queries;
    const top5Rate = top5 / queries;
    console.info(
      `memory ranking: ${queries} held-out queries over 500 incidents, precision@1 ${precisionAt1.toFixed(3)}, ` +
        `top-5 ${top5Rate.toFixed(3)}, at most ${maxRequests} DynamoDB requests per search` +
        (misses.length > 0 ? `; misses: ${misses.join(' | ')}` : ''),
    );
    expect(top5Rate).toBeGreaterThanOrEqual(0.95);
    expect(precisionAt1).toBeGreaterThanOrEqual(0.8);
  });

  it('ranks the confusable sibling (same codes, other provisioner) below the right family', async () => {
    const ebs = FAMILIES.find((f) => f.id === 'pvc-binding/ebs');
    const source = {
      routing: { intent: 'pvc-binding', domain: 'storage' as const },
      findings: [
        {
          code: 'PVC_PENDING',
          message: 'PVC data is Pending',
          evidence: ['ProvisioningFailed: provisioner ebs.csi.aws.com: context deadline exceeded'],
          resource: { kind: 'PersistentVolumeClaim', name: 'data', namespace: 'x' },
        },
        {
          code: 'PROVISIONING_FAILED',
          message: 'failed',
          evidence: [],
          resource: { kind: 'Pod', name: 'p', namespace: 'x' },
        },
      ],
      rootCause: [{ code: 'PROVISIONING_FAILED' }],
    };
    const matches = await memory.findSimilar(source, { limit: 5 });
    expect(matches.map((m) => m.incident.rootCause.summary)).toEqual(Array(5).fill(ebs?.id));
    expect(matches[0]?.explanation).toContain('same provisioner (ebs.csi.aws.com)');
  });
});
