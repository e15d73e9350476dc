import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureTable, localClientOptions, startLocalDynamo } from '../local/dynamodb/index.js';
import { createDocumentClient, createDynamoClient, createStore } from '../src/store/index.js';
import { MemoryRepository } from '../src/store/memory.js';
import { corpus, FAMILIES, variant } from './support/memory-corpus.js';
import { prng } from './support/prng.js';
import { percentile } from './support/stats.js';

export interface LatencySummary {
  n: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
}

export interface StoreBenchResults {
  name: 'store';
  backend: string;
  node: string;
  generatedAt: string;
  metrics: Record<string, LatencySummary>;
  memorySearch: { storedIncidents: number; maxRequestsPerSearch: number; top5Rate: number };
}

/** Incidents stored before the memory search is timed: the ranking test's corpus size. */
const MEMORY_INCIDENTS = 500;

/** The samples' p50 and p99 (nearest rank), mean and largest, in milliseconds to the microsecond. */
export function latencySummary(samples: number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  return {
    n: sorted.length,
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    meanMs: round(sorted.reduce((sum, v) => sum + v, 0) / Math.max(sorted.length, 1)),
    maxMs: round(sorted.at(-1) ?? 0),
  };
}

async function timed<T>(samples: number[], run: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const value = await run();
  samples.push(performance.now() - start);
  return value;
}

export const RESULTS_FILE = join(dirname(fileURLToPath(import.meta.url)), 'results', 'store.json');

/** Store latencies on in-memory dynalite, one operation at a time (what a Lambda invocation sees). */
export default async function storeBench(
  options: { iterations?: number; warmup?: number } = {},
): Promise<StoreBenchResults> {
  const iterations = options.iterations ?? 500;
  const warmup = options.warmup ?? 50;
  const dynamo = await startLocalDynamo();
  const base = createDynamoClient(localClientOptions(dynamo.endpoint));
  try {
    await ensureTable(base, 'calmops-bench');
    const store = createStore({ client: createDocumentClient(base), tableName: 'calmops-bench' });

    const update: number[] = [];
    let session = await store.sessions.create({
      intent: 'pods-pending',
      namespace: 'payments',
      channelId: 'CBENCH',
      requester: 'UBENCH',
    });
    for (let i = 0; i < warmup + iterations; i++) {
      const samples = i < warmup ? [] : update;
      const patch = { resumeCount: session.resumeCount + 1, state: i % 2 === 0 ? 'ANALYZING' : 'GATHERING' } as const;
      session = await timed(samples, () => store.sessions.update(session.id, session.version, patch));
    }

    const append: number[] = [];
    const claim: number[] = [];
    const roundTrip: number[] = [];
    for (let i = 0; i < warmup + iterations; i++) {
      const measured = i >= warmup;
      const start = performance.now();
      await timed(measured ? append : [], () =>
        store.inbox.append(session.id, { kind: 'message', userId: 'UBENCH', text: `message ${i}` }),
      );
      const message = await timed(measured ? claim : [], () => store.inbox.claimOldest(session.id));
      if (message === undefined) throw new Error('bench: appended message was not consumed');
      if (measured) roundTrip.push(performance.now() - start);
    }

    // Similar-incident search, as the workflow runs it when a session opens: one held-out envelope at a time.
    const memory = new MemoryRepository(createDocumentClient(base), 'calmops-bench');
    const imported = await memory.importIncidents(corpus(MEMORY_INCIDENTS / FAMILIES.length, 11));
    const random = prng(4242);
    const search: number[] = [];
    let maxRequests = 0;
    let top5 = 0;
    for (let i = 0; i < warmup + iterations; i++) {
      const family = FAMILIES[i % FAMILIES.length] as (typeof FAMILIES)[number];
      const query = variant(family, random, 500_000 + i);
      const { matches, stats } = await timed(i < warmup ? [] : search, () => memory.search(query, { limit: 5 }));
      if (i < warmup) continue;
      maxRequests = Math.max(maxRequests, stats.requests);
      if (matches.some((m) => m.incident.rootCause.summary === family.id)) top5++;
    }

    const results: StoreBenchResults = {
      name: 'store',
      backend: 'dynalite 4 (in memory, same process)',
      node: process.version,
      generatedAt: new Date().toISOString(),
      metrics: {
        sessionUpdate: latencySummary(update),
        inboxAppend: latencySummary(append),
        inboxClaim: latencySummary(claim),
        inboxAppendConsume: latencySummary(roundTrip),
        memorySearch: latencySummary(search),
      },
      memorySearch: {
        storedIncidents: imported.stored,
        maxRequestsPerSearch: maxRequests,
        top5Rate: Math.round((top5 / search.length) * 1000) / 1000,
      },
    };
    for (const [name, m] of Object.entries(results.metrics)) {
      process.stdout.write(
        `${name.padEnd(20)} p50 ${m.p50Ms.toFixed(1)} ms  p99 ${m.p99Ms.toFixed(1)} ms  (n=${m.n})\n`,
      );
    }
    process.stdout.write(
      `memory search over ${imported.stored} incidents: ≤${maxRequests} requests/search, family in top 5 for ${results.memorySearch.top5Rate * 100}%\n`,
    );
    await mkdir(dirname(RESULTS_FILE), { recursive: true });
    await writeFile(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
    return results;
  } finally {
    base.destroy();
    await dynamo.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await storeBench(), null, 2));
}
