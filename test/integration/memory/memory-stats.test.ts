import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable, type LocalDynamo, localClientOptions, startLocalDynamo } from '../../../local/dynamodb/index.js';
import { run } from '../../../src/cli/commands/stats.js';
import type { CliIo } from '../../../src/cli/io.js';
import { main } from '../../../src/cli/main.js';
import { breakGlassAudit, grantOverride, validateBreakGlassRequest } from '../../../src/diagnosis/break-glass.js';
import type { CollectedMetrics } from '../../../src/memory/collect.js';
import {
  breakGlassEvent,
  fixValidatedEvent,
  memoryMatchUsedEvent,
  panicSignalEvent,
} from '../../../src/memory/metrics.js';
import { createDocumentClient, createDynamoClient, createStore, type Store } from '../../../src/store/index.js';

const T0 = Date.parse('2025-08-10T04:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
const TABLE = 'calmops-stats-test';

function cli(env: Record<string, string | undefined>) {
  const out = { stdout: '', stderr: '' };
  const io: CliIo = {
    stdout: (t) => {
      out.stdout += t;
    },
    stderr: (t) => {
      out.stderr += t;
    },
    env,
  };
  return { io, out };
}

async function closedPort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

/** One resolved incident: opened at `open`, resolved at `close` (minutes after T0), with its timeline. */
async function resolvedSession(
  store: Store,
  open: number,
  close: number,
  extra: { memoryMatch?: boolean; completeness?: number; events?: (id: string) => Promise<void> } = {},
) {
  const s = await store.sessions.create(
    { intent: 'pvc-binding', namespace: 'payments', channelId: 'C0STATS', requester: 'U0ONCALL' },
    at(open),
  );
  await extra.events?.(s.id);
  if (extra.memoryMatch) {
    await store.timeline.append(s.id, memoryMatchUsedEvent('01MEMORY', 0.91, 'U0ONCALL'), at(open + 1));
  }
  await store.sessions.update(
    s.id,
    1,
    { status: 'resolved', evidence: { completeness: extra.completeness ?? 0.8, items: [], findingCodes: [] } },
    at(close),
  );
  return s.id;
}

describe('calmops stats on dynalite', () => {
  let dynamo: LocalDynamo;
  let env: Record<string, string>;

  beforeAll(async () => {
    dynamo = await startLocalDynamo();
    const base = createDynamoClient(localClientOptions(dynamo.endpoint));
    await ensureTable(base, TABLE);
    const store = createStore({ client: createDocumentClient(base), tableName: TABLE });

    // Resolved in 30 minutes, used a past incident, one blocked panic signal and one warning.
    await resolvedSession(store, 0, 30, {
      memoryMatch: true,
      completeness: 0.9,
      events: async (id) => {
        const signal = (
          type: 'bypassing_diagnostics' | 'jumping_between_domains',
          severity: 'critical' | 'medium',
        ) => ({
          type,
          severity,
          at: at(2).toISOString(),
          description: type,
          evidence: {},
        });
        await store.timeline.append(id, panicSignalEvent(signal('bypassing_diagnostics', 'critical'), true), at(2));
        await store.timeline.append(id, panicSignalEvent(signal('jumping_between_domains', 'medium'), false), at(3));
        await store.timeline.append(id, fixValidatedEvent(true, 'Validation passed'), at(29));
      },
    });
    // Resolved in 90 minutes under a break-glass override whose review was done on time.
    await resolvedSession(store, 60, 150, {
      completeness: 0.5,
      events: async (id) => {
        const request = validateBreakGlassRequest(
          {
            sessionId: id,
            requester: 'U0ONCALL',
            justification: 'Payments are down for every customer and the database is refusing writes',
            seniorApprover: 'U0SENIOR',
            timeLimitMinutes: '30',
            skipToState: 'RESOLVING',
          },
          { session: { id, state: 'GATHERING' } },
        );
        const override = grantOverride(request, { id: 'OVR1', approvedBy: 'U0SENIOR', now: at(65) });
        const granted = breakGlassAudit('granted', override, { at: at(65), actor: 'U0SENIOR' });
        await store.timeline.append(id, breakGlassEvent(granted), at(65));
        const review = breakGlassAudit('review-completed', override, { at: at(2000), actor: 'U0SENIOR' });
        await store.timeline.append(id, breakGlassEvent(review), at(2000));
        await store.timeline.append(id, fixValidatedEvent(false, 'Validation failed'), at(120));
        await store.timeline.append(id, fixValidatedEvent(true, 'Validation passed'), at(149));
      },
    });
    // Resolved a day later in 10 minutes.
    await resolvedSession(store, 1440, 1450, { memoryMatch: true });
    // Still open: not part of the resolved window.
    await store.sessions.create(
      { intent: 'pvc-binding', namespace: 'payments', channelId: 'C0STATS', requester: 'U0ONCALL' },
      at(10),
    );
    base.destroy();
    env = { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, CALMOPS_TABLE: TABLE };
  });

  afterAll(async () => {
    await dynamo?.close();
  });

  it('prints the ADR-005 metrics as a readable table', async () => {
    const { io, out } = cli(env);
    expect(await main(['stats'], io)).toBe(0);
    expect(out.stderr).toBe('');
    const text = out.stdout;
    expect(text).toContain(`calmops stats: table ${TABLE} at ${dynamo.endpoint}`);
    expect(text).toContain('Window: 3 most recently resolved sessions (limit 100)');
    expect(text).toMatch(/Time to resolution\s+p50 30m 00s, p90 1h 30m, mean 43m 20s \(3 sessions\)/);
    expect(text).toMatch(/Evidence at resolution\s+mean 73%, lowest 50% \(3 sessions\)/);
    expect(text).toMatch(/Knowledge reuse\s+2 of 3 resolved sessions used a similar past incident \(67%\)/);
    expect(text).toMatch(/First-time fix\s+1 of 2 validated fixes held the first time \(50%\)/);
    expect(text).toMatch(/Interventions\s+2 panic signals: 1 blocked, 1 warned/);
    expect(text).toMatch(/Break-glass\s+1 override granted/);
    expect(text).toMatch(/Postmortem compliance\s+1 of 1 reviews due were done on time, 0 overdue \(100%\)/);
    expect(text).toMatch(/bypassing_diagnostics\s+1\s+1\s+0\s+0\s+0\s+1/);
    expect(text).toMatch(/jumping_between_domains\s+1\s+0\s+0\s+1\s+0\s+0/);
  });

  it('prints JSON with --json, and narrows the window with --since and --limit', async () => {
    const all = cli(env);
    expect(await run(['--json'], all.io)).toBe(0);
    const everything = JSON.parse(all.out.stdout) as CollectedMetrics & { tableName: string };
    expect(everything.tableName).toBe(TABLE);
    expect(everything.metrics.sessions).toEqual({ total: 3, open: 0, resolved: 3 });
    expect(everything.metrics.breakGlass).toMatchObject({ granted: 1, reviewsDue: 1, postmortemCompliance: 1 });
    expect(everything.timelineQueries).toBe(3);

    const recent = cli(env);
    expect(await run(['--json', '--since', at(151).toISOString()], recent.io)).toBe(0);
    const narrowed = JSON.parse(recent.out.stdout) as CollectedMetrics;
    expect(narrowed.window).toMatchObject({ resolvedSessions: 1, since: at(151).toISOString() });
    expect(narrowed.metrics.timeToResolution.p50Ms).toBe(10 * 60_000);

    const limited = cli(env);
    expect(await run(['--json', '--limit', '2'], limited.io)).toBe(0);
    const two = JSON.parse(limited.out.stdout) as CollectedMetrics;
    expect(two.window.resolvedSessions).toBe(2);
    expect(two.window.newestResolvedAt).toBe(at(1450).toISOString());

    const none = cli(env);
    expect(await run(['--since', '2030-01-01'], none.io)).toBe(0);
    expect(none.out.stdout).toContain('No resolved sessions in this window yet.');
  });

  it('answers bad input with exit code 2 and says what is wrong', async () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['--since', 'yesterday'], env, /--since: not an ISO date or time: "yesterday"/],
      [['--since', '2025-08-01T10:00'], env, /--since: not an ISO date or time/],
      [['--limit', '0'], env, /--limit: expected a whole number from 1 to 1000, got "0"/],
      [['--limit', '5000'], env, /--limit/],
      [['--limit', '2.5'], env, /--limit/],
      [['--verbose'], env, /unknown flag "--verbose"/],
      [['extra'], env, /positional argument/],
      [[], { ...env, CALMOPS_TABLE: 'x' }, /CALMOPS_TABLE: "x" is not a DynamoDB table name/],
      [[], { ...env, AWS_ENDPOINT_URL_DYNAMODB: 'not a url' }, /AWS_ENDPOINT_URL_DYNAMODB is not a URL/],
    ];
    for (const [args, environment, message] of cases) {
      const { io, out } = cli(environment);
      expect(await run(args, io), args.join(' ')).toBe(2);
      expect(out.stderr).toMatch(message);
      expect(out.stderr).toContain('Usage: calmops stats');
      expect(out.stdout).toBe('');
    }
  });

  it('exits 1 with a clear message when the table is missing or unreachable', async () => {
    const missing = cli({ ...env, CALMOPS_TABLE: 'calmops-nowhere' });
    expect(await run([], missing.io)).toBe(1);
    expect(missing.out.stderr).toBe(`calmops stats: table calmops-nowhere does not exist at ${dynamo.endpoint}\n`);

    const port = await closedPort();
    const down = cli({ ...env, AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${port}` });
    expect(await run([], down.io)).toBe(1);
    expect(down.out.stderr).toMatch(
      new RegExp(`^calmops stats: cannot reach table ${TABLE} at http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`),
    );
    expect(down.out.stdout).toBe('');
  });
});
