import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MemoryRepository } from '../src/store/memory.js';
import { corpus, FAMILIES, startMemoryTable, variant } from './support/memory-corpus.js';
import { prng } from './support/prng.js';
import { percentile } from './support/stats.js';

/**
 * Similar-incident search latency on dynalite with 10,000 stored incidents: p50/p99 of findSimilar over held-out
 * variants, the DynamoDB requests each search sends, and the ranking quality at that size.
 */

const STORED = 10_000;
const SEARCHES = 300;
const WARMUP = 20;

const round = (n: number) => Math.round(n * 100) / 100;

export default async function memoryBench() {
  // Seeding 10,000 incidents is CPU-bound on both ends; a worker thread gives dynalite the second core.
  const table = await startMemoryTable('calmops-memory-bench', { worker: true });
  try {
    const memory = new MemoryRepository(table.client, table.tableName);
    const incidents = corpus(STORED / FAMILIES.length, 2025);
    const seedStarted = performance.now();
    const imported = await memory.importIncidents(incidents, { concurrency: 24 });
    const seedMs = performance.now() - seedStarted;

    const random = prng(77);
    const queries = Array.from({ length: WARMUP + SEARCHES }, (_, i) => {
      const family = FAMILIES[i % FAMILIES.length] as (typeof FAMILIES)[number];
      return { family, source: variant(family, random, 1_000_000 + i) };
    });
    const latencies: number[] = [];
    const requests: number[] = [];
    let top1 = 0;
    let top5 = 0;
    for (const [i, { family, source }] of queries.entries()) {
      const started = performance.now();
      const { matches, stats } = await memory.search(source, { limit: 5 });
      const elapsed = performance.now() - started;
      if (i < WARMUP) continue;
      latencies.push(elapsed);
      requests.push(stats.requests);
      const ids = matches.map((m) => m.incident.rootCause.summary);
      if (ids[0] === family.id) top1++;
      if (ids.includes(family.id)) top5++;
    }
    latencies.sort((a, b) => a - b);
    const result = {
      benchmark: 'memory',
      backend: 'dynalite 4 (in memory, loopback, worker thread)',
      storedIncidents: imported.stored,
      seed: { ms: Math.round(seedMs), incidentsPerSecond: Math.round(imported.stored / (seedMs / 1000)) },
      search: {
        count: latencies.length,
        p50Ms: round(percentile(latencies, 50)),
        p99Ms: round(percentile(latencies, 99)),
        meanMs: round(latencies.reduce((a, b) => a + b, 0) / latencies.length),
        maxRequestsPerSearch: Math.max(...requests),
        meanRequestsPerSearch: round(requests.reduce((a, b) => a + b, 0) / requests.length),
      },
      ranking: { precisionAt1: round(top1 / latencies.length), top5Rate: round(top5 / latencies.length) },
      node: process.version,
      at: new Date().toISOString(),
    };
    process.stdout.write(
      `memory search over ${result.storedIncidents} incidents: p50 ${result.search.p50Ms} ms, p99 ${result.search.p99Ms} ms, ` +
        `≤${result.search.maxRequestsPerSearch} requests/search, precision@1 ${result.ranking.precisionAt1}, top-5 ${result.ranking.top5Rate} ` +
        `(seeded in ${(result.seed.ms / 1000).toFixed(1)} s)\n`,
    );
    const dir = join(fileURLToPath(new URL('.', import.meta.url)), 'results');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'memory.json'), `${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    await table.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await memoryBench();
}
