import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localClientOptions } from '../../local/dynamodb/index.js';
import {
  ApprovalAlreadyDecidedError,
  ApprovalAlreadyExistsError,
  ApprovalExpiredError,
  ApprovalNotAllowedError,
  ApprovalNotFoundError,
  createDocumentClient,
  createDynamoClient,
  createStore,
  ensureTable,
  getItem,
  type InboxMessage,
  keys,
  MalformedRecordError,
  SessionAlreadyExistsError,
  SessionNotFoundError,
  StaleVersionError,
  type Store,
  type StoreContext,
  StoreValidationError,
  ThreadAlreadyBoundError,
  type TimelineRepository,
  WaitAlreadyPendingError,
} from '../../src/store/index.js';

const T0 = new Date('2030-01-01T00:00:00.000Z');
const minutes = (n: number, from: Date = T0) => new Date(from.getTime() + n * 60_000);

/**
 * Two module instances of the timeline, as two processes whose sequences happen to begin at the same number: each
 * has its own counter, and both start where the other does.
 */
async function timelinesStartingTogether(ctx: StoreContext): Promise<[TimelineRepository, TimelineRepository]> {
  const crypto = await vi.importActual<typeof import('node:crypto')>('node:crypto');
  const randomInt = (min: number, max?: number) => (max === undefined ? 0 : crypto.randomInt(min, max));
  vi.doMock('node:crypto', () => ({ ...crypto, default: { ...crypto, randomInt }, randomInt }));
  try {
    const made: TimelineRepository[] = [];
    for (let i = 0; i < 2; i++) {
      vi.resetModules();
      const instance = await import('../../src/store/timeline.js');
      made.push(new instance.TimelineRepository(ctx));
    }
    return [made[0]!, made[1]!];
  } finally {
    vi.doUnmock('node:crypto');
    vi.resetModules();
  }
}

function newSession(overrides: Record<string, unknown> = {}) {
  return {
    intent: 'pods-pending',
    namespace: 'payments',
    cluster: 'prod-eu',
    channelId: 'C0INCIDENT',
    threadTs: `1712345678.${Math.floor(Math.random() * 1e6)}`,
    requester: 'U0REQUESTER',
    ...overrides,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Retries until the update lands, with jittered exponential backoff (what every real caller should do). The 1 s cap
 * keeps the contenders busy without long idle gaps: a 3 s cap made the same run three to four times slower.
 */
async function retryOnStale<T>(run: () => Promise<T>): Promise<{ value: T; attempts: number }> {
  for (let attempts = 1; ; attempts++) {
    try {
      return { value: await run(), attempts };
    } catch (error) {
      if (!(error instanceof StaleVersionError)) throw error;
      // Full jitter up to 2 s: with many writers on one item a lower ceiling keeps them colliding (measured: 250 ms
      // took three times as long).
      await sleep(Math.random() * Math.min(2000, 10 * 2 ** attempts));
    }
  }
}

/** The concurrency tests do thousands of requests; the shared 2-core machine can be slow, correctness is not. */
const HEAVY = { timeout: 600_000 };

/**
 * Writers racing for one item. Every landed write fails the others' conditions, so the requests grow with the square
 * of the writers: 50 collide on every round as 100 did, for a quarter of the requests.
 */
const CONTENDERS = 50;

/**
 * The store's behaviour, checked against any DynamoDB endpoint. The same suite runs on dynalite (always) and on
 * DynamoDB Local (where Java 17 exists) so the embedded stack cannot quietly diverge from the real service.
 */
export function defineStoreConformance(label: string, endpoint: () => string): void {
  describe(`store conformance on ${label}`, () => {
    let base: DynamoDBClient;
    let client: DynamoDBDocumentClient;
    let ctx: StoreContext;
    let store: Store;
    const tableName = `calmops-test-${ulid().toLowerCase()}`;

    beforeAll(async () => {
      base = createDynamoClient(localClientOptions(endpoint()));
      client = createDocumentClient(base);
      ctx = { client, tableName };
      store = createStore(ctx);
      expect(await ensureTable(base, tableName)).toEqual({ created: true });
    });

    afterAll(() => {
      base?.destroy();
    });

    describe('table', () => {
      it('ensureTable is idempotent and builds keys and GSI1 from the shared definition', async () => {
        expect(await ensureTable(base, tableName)).toEqual({ created: false });
        const out = await base.send(new DescribeTableCommand({ TableName: tableName }));
        expect(out.Table?.KeySchema).toEqual([
          { AttributeName: 'PK', KeyType: 'HASH' },
          { AttributeName: 'SK', KeyType: 'RANGE' },
        ]);
        expect(out.Table?.GlobalSecondaryIndexes?.map((g) => g.IndexName)).toEqual(['GSI1']);
      });
    });

    describe('sessions', () => {
      it('creates, reads and refuses a duplicate id', async () => {
        const created = await store.sessions.create(newSession(), T0);
        expect(created).toMatchObject({
          state: 'GATHERING',
          status: 'open',
          version: 1,
          createdAt: T0.toISOString(),
          resumeCount: 0,
          handoffCount: 0,
          hypotheses: [],
        });
        expect(await store.sessions.get(created.id)).toEqual(created);
        await expect(store.sessions.create(newSession({ id: created.id }), T0)).rejects.toBeInstanceOf(
          SessionAlreadyExistsError,
        );
        const again = await store.sessions.createIfAbsent(newSession({ id: created.id, intent: 'other' }), T0);
        expect(again).toEqual({ session: created, created: false });
        expect(await store.sessions.get('NOPE-missing')).toBeUndefined();
        await expect(store.sessions.getRequired('NOPE-missing')).rejects.toBeInstanceOf(SessionNotFoundError);
      });

      it('updates with optimistic locking and refuses a stale version without writing', async () => {
        const s = await store.sessions.create(newSession(), T0);
        const v2 = await store.sessions.update(s.id, 1, { state: 'ANALYZING', handoffCount: 1 }, minutes(1));
        expect(v2).toMatchObject({
          version: 2,
          state: 'ANALYZING',
          handoffCount: 1,
          updatedAt: minutes(1).toISOString(),
        });
        const stale = await store.sessions.update(s.id, 1, { state: 'RESOLVING' }).catch((e: unknown) => e);
        expect(stale).toBeInstanceOf(StaleVersionError);
        expect(stale).toMatchObject({ expectedVersion: 1, actualVersion: 2 });
        expect(await store.sessions.get(s.id)).toEqual(v2);
        await expect(store.sessions.update('NOPE-missing', 1, { state: 'TESTING' })).rejects.toBeInstanceOf(
          SessionNotFoundError,
        );
      });

      it('rejects bad input before writing anything', async () => {
        const s = await store.sessions.create(newSession(), T0);
        await expect(
          store.sessions.update(s.id, 1, { state: 'PANICKING' } as unknown as { state: 'TESTING' }),
        ).rejects.toBeInstanceOf(StoreValidationError);
        await expect(store.sessions.update(s.id, 1, { version: 7 } as unknown as { state: 'TESTING' })).rejects.toThrow(
          /version/,
        );
        await expect(store.sessions.create(newSession({ channelId: 'C#1' }))).rejects.toBeInstanceOf(
          StoreValidationError,
        );
        await expect(store.sessions.create(newSession({ intent: '' }))).rejects.toThrow(/intent/);
        expect(await store.sessions.get(s.id)).toEqual(s);
      });

      it('settles an empty namespace once: the first caller wins, everyone after gets the session as it is', async () => {
        const s = await store.sessions.create(newSession({ namespace: '' }), T0);
        const answers = await Promise.all(
          ['shop', 'atelier', 'shop', 'billing'].map((ns) => store.sessions.settleNamespace(s.id, ns, minutes(1))),
        );
        const winners = answers.filter((a) => a.settled);
        expect(winners).toHaveLength(1);
        const chosen = winners[0]?.session.namespace;
        expect(answers.every((a) => a.session.namespace === chosen)).toBe(true);
        expect(await store.sessions.getRequired(s.id)).toMatchObject({ namespace: chosen, version: 2 });
        // A session that has its namespace keeps it.
        const placed = await store.sessions.create(newSession(), T0);
        const late = await store.sessions.settleNamespace(placed.id, 'elsewhere');
        expect(late).toEqual({ settled: false, session: placed });
        await expect(store.sessions.settleNamespace('NOPE-missing', 'shop')).rejects.toBeInstanceOf(
          SessionNotFoundError,
        );
      });

      it('sets and clears the break-glass override', async () => {
        const s = await store.sessions.create(newSession(), T0);
        const override = { state: 'RESOLVING' as const, expiresAt: minutes(30).toISOString(), approver: 'U0SENIOR' };
        const v2 = await store.sessions.update(s.id, 1, { override });
        expect(v2.override).toEqual(override);
        const v3 = await store.sessions.update(s.id, 2, { override: null, cluster: null });
        expect(v3.override).toBeUndefined();
        expect(v3.cluster).toBeUndefined();
      });

      it('raises MalformedRecordError for a record that does not match the schema', async () => {
        const id = `bad-${ulid()}`;
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...keys.session(id), id, state: 'PANICKING', version: 'one' },
          }),
        );
        const error = await store.sessions.get(id).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MalformedRecordError);
        expect((error as Error).message).toContain(`SESSION#${id}`);
      });

      it('lists open sessions per channel and recently resolved ones', async () => {
        const channelId = `C${ulid()}`;
        const a = await store.sessions.create(newSession({ channelId }), minutes(1));
        const b = await store.sessions.create(newSession({ channelId }), minutes(2));
        await store.sessions.create(newSession({ channelId: `C${ulid()}` }), minutes(3));
        expect((await store.sessions.listOpenByChannel(channelId)).map((s) => s.id)).toEqual([b.id, a.id]);

        const resolved = await store.sessions.update(a.id, 1, { status: 'resolved' }, minutes(10));
        expect(resolved.closedAt).toBe(minutes(10).toISOString());
        expect((await store.sessions.listOpenByChannel(channelId)).map((s) => s.id)).toEqual([b.id]);
        const recent = await store.sessions.listRecent('resolved', { since: minutes(10) });
        expect(recent.map((s) => s.id)).toContain(a.id);
        expect((await store.sessions.listRecent('resolved', { since: minutes(11) })).map((s) => s.id)).not.toContain(
          a.id,
        );

        const reopened = await store.sessions.update(a.id, 2, { status: 'open' }, minutes(12));
        expect(reopened.closedAt).toBeUndefined();
        expect((await store.sessions.listOpenByChannel(channelId)).map((s) => s.id)).toEqual([b.id, a.id]);
      });

      it('lists every open session a page at a time, following their status (the reconciler worklist)', async () => {
        const a = await store.sessions.create(newSession(), minutes(1));
        const b = await store.sessions.create(newSession(), minutes(2));
        const c = await store.sessions.create(newSession(), minutes(3));
        await store.sessions.update(b.id, 1, { status: 'closed' }, minutes(4));
        const seen: string[] = [];
        let after: string | undefined;
        do {
          const page = await store.sessions.listOpen({ limit: 1, ...(after ? { after } : {}) });
          seen.push(...page.sessions.map((s) => s.id));
          after = page.next;
        } while (after !== undefined);
        expect(seen).toContain(a.id);
        expect(seen).toContain(c.id);
        expect(seen).not.toContain(b.id);
        expect(new Set(seen).size).toBe(seen.length);
        const entry = await client.send(
          new GetCommand({ TableName: tableName, Key: keys.sessionOpen(b.id), ConsistentRead: true }),
        );
        expect(entry.Item).toBeUndefined();
      });

      it("lists a person's open sessions in every channel, following their status", async () => {
        const requester = `U${ulid()}`;
        const a = await store.sessions.create(newSession({ requester, channelId: `C${ulid()}` }), minutes(1));
        const b = await store.sessions.create(newSession({ requester, channelId: `C${ulid()}` }), minutes(2));
        await store.sessions.create(newSession({ requester: `U${ulid()}` }), minutes(3));
        const mine = async () => (await store.sessions.listOpenByRequester(requester)).map((s) => s.id);
        expect(await mine()).toEqual([b.id, a.id]);

        await store.sessions.update(a.id, 1, { status: 'resolved' }, minutes(10));
        expect(await mine()).toEqual([b.id]);
        // Closing drops the index entry, not just the session from the list.
        const entry = await client.send(
          new GetCommand({ TableName: tableName, Key: keys.sessionRequester(a.id, requester), ConsistentRead: true }),
        );
        expect(entry.Item).toBeUndefined();
        await store.sessions.update(a.id, 2, { status: 'open' }, minutes(12));
        expect(await mine()).toEqual([b.id, a.id]);
        // Updates that leave the status alone keep the entry.
        await store.sessions.update(b.id, 1, { state: 'ANALYZING' }, minutes(13));
        expect(await mine()).toEqual([b.id, a.id]);

        // An entry whose session closed without removing it (a crash between the two writes) is skipped.
        await store.sessions.update(b.id, 2, { status: 'closed' }, minutes(14));
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...keys.sessionRequester(b.id, requester),
              GSI1PK: `REQUESTER#${requester}#OPEN`,
              GSI1SK: `${minutes(2).toISOString()}#${b.id}`,
              sessionId: b.id,
              userId: requester,
            },
          }),
        );
        expect(await mine()).toEqual([a.id]);

        // An entry can never put someone else's session on a person's list.
        const theirs = await store.sessions.create(newSession({ requester: `U${ulid()}` }), minutes(15));
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...keys.sessionRequester(theirs.id, requester),
              GSI1PK: `REQUESTER#${requester}#OPEN`,
              GSI1SK: `${minutes(15).toISOString()}#${theirs.id}`,
              sessionId: theirs.id,
              userId: requester,
            },
          }),
        );
        expect(await mine()).toEqual([a.id]);
        await expect(store.sessions.listOpenByRequester('not#a user')).rejects.toThrow(StoreValidationError);
      });

      it(`${CONTENDERS} concurrent updates: no lost update, versions strictly increase`, HEAVY, async () => {
        const s = await store.sessions.create(newSession(), T0);
        const results = await Promise.all(
          Array.from({ length: CONTENDERS }, () =>
            retryOnStale(async () => {
              const current = await store.sessions.getRequired(s.id);
              return store.sessions.update(s.id, current.version, { resumeCount: current.resumeCount + 1 });
            }),
          ),
        );
        const versions = results.map((r) => r.value.version).sort((x, y) => x - y);
        expect(versions).toEqual(Array.from({ length: CONTENDERS }, (_, i) => i + 2));
        for (const { value } of results) expect(value.resumeCount).toBe(value.version - 1);
        const final = await store.sessions.getRequired(s.id);
        expect(final.resumeCount).toBe(CONTENDERS);
        expect(final.version).toBe(CONTENDERS + 1);
        expect(results.some((r) => r.attempts > 1)).toBe(true);
      });

      it('mutate re-reads and retries on contention', HEAVY, async () => {
        const s = await store.sessions.create(newSession(), T0);
        await Promise.all(
          Array.from({ length: 10 }, () =>
            store.sessions.mutate(s.id, (current) => ({ handoffCount: current.handoffCount + 1 }), {
              maxAttempts: 100,
            }),
          ),
        );
        expect(await store.sessions.getRequired(s.id)).toMatchObject({ handoffCount: 10, version: 11 });
      });
    });

    describe('timeline', () => {
      it('appends in order and lists after a given event', async () => {
        const id = ulid();
        const first = await store.timeline.append(id, { type: 'session.opened', actor: 'U1' }, T0);
        const second = await store.timeline.append(id, { type: 'state.changed', data: { to: 'ANALYZING' } }, T0);
        const third = await store.timeline.append(
          id,
          { type: 'tool.requested', summary: 'kubectl get pods' },
          minutes(1),
        );
        const all = await store.timeline.list(id);
        expect(all).toEqual([first, second, third]);
        expect(all[1]).toMatchObject({ actor: 'system', data: { to: 'ANALYZING' } });
        expect(await store.timeline.list(id, { after: first })).toEqual([second, third]);
        expect(await store.timeline.list(id, { after: third })).toEqual([]);
        await expect(store.timeline.append(id, { type: 'Not A Type' })).rejects.toBeInstanceOf(StoreValidationError);
        expect(await store.timeline.list(id)).toHaveLength(3);
      });

      it('never overwrites: two processes whose sequences start together both keep every event', async () => {
        const id = ulid();
        const [one, two] = await timelinesStartingTogether(ctx);
        // The first process's events of this millisecond take the numbers the second one tries first, in order.
        for (let i = 0; i < 40; i++) await one.append(id, { type: 'tool.requested', data: { i } }, T0);
        await two.append(id, { type: 'tool.requested', data: { i: 40 } }, T0);
        const writes = Array.from({ length: 39 }, (_, i) =>
          (i % 2 === 0 ? one : two).append(id, { type: 'tool.requested', data: { i: 41 + i } }, T0),
        );
        await Promise.all(writes);
        const events = await store.timeline.list(id);
        expect(events).toHaveLength(80);
        expect(new Set(events.map((e) => e.data?.['i'])).size).toBe(80);
        const keysSeen = events.map((e) => `${e.at}#${e.seq}`);
        expect(new Set(keysSeen).size).toBe(80);
        const sortKeys = events.map((e) => keys.timelineEvent(id, e.at, e.seq).SK);
        expect([...sortKeys].sort()).toEqual(sortKeys);
      });
    });

    describe('inbox', () => {
      it('hands messages out oldest first, exactly once', async () => {
        const id = ulid();
        expect(await store.inbox.claimOldest(id)).toBeUndefined();
        const a = await store.inbox.append(id, { kind: 'message', userId: 'U1', text: 'first' }, T0);
        const b = await store.inbox.append(id, { kind: 'message', userId: 'U1', text: 'second' }, T0);
        const c = await store.inbox.append(id, { kind: 'command', userId: 'U2', text: 'third' }, T0);
        expect(a.id < b.id && b.id < c.id).toBe(true);
        expect(await store.inbox.peekOldest(id)).toEqual(a);
        expect(await store.inbox.claimOldest(id)).toEqual(a);
        expect(await store.inbox.claim(id, c.id)).toEqual(c);
        expect(await store.inbox.claim(id, c.id)).toBeUndefined();
        expect(await store.inbox.list(id)).toEqual([b]);
        expect(await store.inbox.claimOldest(id)).toEqual(b);
        expect(await store.inbox.claimOldest(id)).toBeUndefined();
        expect(await getItem(ctx, keys.inboxMessage(id, a.id))).toBeUndefined();
        await expect(store.inbox.append(id, { kind: 'message', userId: '', text: 'x' })).rejects.toBeInstanceOf(
          StoreValidationError,
        );
      });

      it(
        '1,000 messages from 20 concurrent writers, 5 concurrent consumers: each once, in order per session',
        HEAVY,
        async () => {
          const sessions = Array.from({ length: 10 }, () => ulid());
          const perWriter = 50;
          let writersDone = false;
          const writers = Array.from({ length: 20 }, async (_, w) => {
            const sessionId = sessions[w % sessions.length]!;
            for (let seq = 0; seq < perWriter; seq++) {
              await store.inbox.append(sessionId, {
                kind: 'message',
                userId: `U${w}`,
                text: `${w}:${seq}`,
                data: { w, seq },
              });
            }
          });
          // Each claim is recorded with the interval of the call that made it: the server decides the order somewhere
          // inside that interval, so only a claim that finished before an earlier message's claim began proves disorder.
          const consumed: { sessionId: string; consumer: number; message: InboxMessage; start: number; end: number }[] =
            [];
          let clock = 0;
          const consumers = Array.from({ length: 5 }, async (_, consumer) => {
            let idle = 0;
            for (let turn = consumer; ; turn++) {
              const sessionId = sessions[turn % sessions.length]!;
              const start = clock++;
              const message = await store.inbox.claimOldest(sessionId);
              if (message !== undefined) {
                consumed.push({ sessionId, consumer, message, start, end: clock++ });
                idle = 0;
              } else if (writersDone && ++idle > sessions.length * 2) {
                return;
              } else if (!writersDone) {
                await sleep(5);
              }
            }
          });
          await Promise.all(writers);
          writersDone = true;
          await Promise.all(consumers);

          expect(consumed).toHaveLength(1000);
          expect(new Set(consumed.map((c) => c.message.id)).size).toBe(1000);
          const claimOf = new Map(consumed.map((c) => [`${c.message.data?.['w']}:${c.message.data?.['seq']}`, c]));
          for (const sessionId of sessions) {
            const mine = consumed.filter((c) => c.sessionId === sessionId);
            expect(mine).toHaveLength(100);
            expect(mine.every((c) => c.message.sessionId === sessionId)).toBe(true);
            for (const writer of new Set(mine.map((c) => c.message.data?.['w']))) {
              for (let seq = 1; seq < perWriter; seq++) {
                const earlier = claimOf.get(`${writer}:${seq - 1}`)!;
                const later = claimOf.get(`${writer}:${seq}`)!;
                expect(later.end > earlier.start, `${writer}:${seq} claimed before ${writer}:${seq - 1}`).toBe(true);
                if (later.consumer === earlier.consumer) expect(later.start > earlier.end).toBe(true);
              }
            }
            expect(await store.inbox.peekOldest(sessionId)).toBeUndefined();
          }
        },
      );
    });

    describe('wait', () => {
      it('is claimed exactly once, and not after it expired', async () => {
        const id = ulid();
        const token = `token-${'x'.repeat(1500)}`;
        const wait = await store.waits.put(id, { token, expiresAt: minutes(10) }, T0);
        expect(await store.waits.get(id)).toEqual(wait);
        const claims = await Promise.all(Array.from({ length: 20 }, () => store.waits.claim(id, minutes(1))));
        const winners = claims.filter((c) => c !== undefined);
        expect(winners).toHaveLength(1);
        expect(winners[0]).toMatchObject({ token, waitId: wait.waitId, claimedAt: minutes(1).toISOString() });

        const id2 = ulid();
        await store.waits.put(id2, { token: 'tok-2', expiresAt: minutes(5) }, T0);
        expect(await store.waits.claim(id2, minutes(5))).toBeUndefined();
        expect(await store.waits.claim(id2, minutes(6))).toBeUndefined();
        expect(await store.waits.claim(ulid(), T0)).toBeUndefined();
      });

      it('never overwrites a live wait of another token', async () => {
        const id = ulid();
        const first = await store.waits.put(id, { token: 'tok-a', expiresAt: minutes(10) }, T0);
        await expect(
          store.waits.put(id, { token: 'tok-b', expiresAt: minutes(10) }, minutes(1)),
        ).rejects.toBeInstanceOf(WaitAlreadyPendingError);
        expect((await store.waits.get(id))?.token).toBe('tok-a');
        // The same token again is a retried notifier, replacing an expired or claimed one is the next wait.
        await store.waits.put(id, { token: 'tok-a', expiresAt: minutes(10) }, minutes(1));
        expect(await store.waits.claim(id, minutes(2), { waitId: first.waitId })).toBeUndefined();
        const current = await store.waits.get(id);
        expect(await store.waits.claim(id, minutes(2), { waitId: current!.waitId })).toBeDefined();
        const next = await store.waits.put(id, { token: 'tok-c', expiresAt: minutes(20) }, minutes(3));
        expect(
          await store.waits.put(ulid(), { token: 'tok-d', expiresAt: minutes(20) }, minutes(30)).catch((e) => e),
        ).toBeInstanceOf(StoreValidationError);
        expect(await store.waits.remove(id, first.waitId)).toBe(false);
        expect(await store.waits.remove(id, next.waitId)).toBe(true);
        expect(await store.waits.get(id)).toBeUndefined();
      });

      it("replaces a live wait left by another execution, never the same execution's", async () => {
        const id = ulid();
        const run = (n: number) => `arn:aws:states:us-east-1:000000000000:execution:calmops-diagnostic:${id}-${n}`;
        await store.waits.put(id, { token: 'tok-old', expiresAt: minutes(10), executionArn: run(0) }, T0);
        await expect(
          store.waits.put(id, { token: 'tok-same', expiresAt: minutes(10), executionArn: run(0) }, minutes(1)),
        ).rejects.toBeInstanceOf(WaitAlreadyPendingError);
        const next = await store.waits.put(
          id,
          { token: 'tok-new', expiresAt: minutes(10), executionArn: run(1) },
          minutes(1),
        );
        expect(await store.waits.get(id)).toEqual(next);
      });
    });

    describe('approvals', () => {
      const approval = (overrides: Record<string, unknown> = {}) => ({
        kind: 'plan',
        sessionId: ulid(),
        token: 'task-token',
        allowedDeciders: ['U0LEAD', 'U0SRE'],
        requester: 'U0REQUESTER',
        expiresAt: minutes(15),
        summary: 'Scale the consumer back to 3 replicas',
        ...overrides,
      });

      it('50 concurrent decisions: exactly one wins, the others are told it was already decided', HEAVY, async () => {
        const a = await store.approvals.create(approval(), T0);
        const outcomes = await Promise.allSettled(
          Array.from({ length: 50 }, (_, i) =>
            store.approvals.decide(
              a.id,
              i % 2 === 0 ? 'approved' : 'rejected',
              i % 3 === 0 ? 'U0LEAD' : 'U0SRE',
              minutes(1),
            ),
          ),
        );
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        expect(won).toHaveLength(1);
        const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<Store['approvals']['decide']>>>).value;
        expect(winner).toMatchObject({ token: 'task-token', decidedAt: minutes(1).toISOString() });
        for (const o of outcomes) {
          if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(ApprovalAlreadyDecidedError);
        }
        expect(await store.approvals.get(a.id)).toEqual(winner);
      });

      it('an expired approval cannot be decided, whatever TTL did', async () => {
        const a = await store.approvals.create(approval(), T0);
        const error = await store.approvals.decide(a.id, 'approved', 'U0LEAD', minutes(15)).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ApprovalExpiredError);
        expect((await store.approvals.get(a.id))?.status).toBe('pending');
        expect(await store.approvals.expire(a.id, minutes(14))).toBe(false);
        expect(await store.approvals.expire(a.id, minutes(16))).toBe(true);
        expect((await store.approvals.get(a.id))?.status).toBe('expired');
        await expect(store.approvals.decide(a.id, 'approved', 'U0LEAD', minutes(1))).rejects.toBeInstanceOf(
          ApprovalAlreadyDecidedError,
        );
      });

      it('distinguishes unknown approvals and users who may not decide', async () => {
        await expect(store.approvals.decide('NOPE-missing', 'approved', 'U0LEAD', T0)).rejects.toBeInstanceOf(
          ApprovalNotFoundError,
        );
        const a = await store.approvals.create(approval(), T0);
        await expect(store.approvals.decide(a.id, 'approved', 'U0REQUESTER', minutes(1))).rejects.toBeInstanceOf(
          ApprovalNotAllowedError,
        );
        await expect(store.approvals.create(approval({ id: a.id }), T0)).rejects.toBeInstanceOf(
          ApprovalAlreadyExistsError,
        );
        const rejected = await store.approvals.decide(a.id, 'rejected', 'U0SRE', minutes(2), { reason: 'not yet' });
        expect(rejected).toMatchObject({ status: 'rejected', decidedBy: 'U0SRE', reason: 'not yet' });
        expect(await store.approvals.cancel(a.id)).toBe(false);
      });

      it("lists a session's pending approvals, expired ones included, until they are decided or withdrawn", async () => {
        const sessionId = ulid();
        const first = await store.approvals.create(approval({ sessionId, expiresAt: minutes(5) }), T0);
        const second = await store.approvals.create(approval({ sessionId }), minutes(1));
        const third = await store.approvals.create(approval({ sessionId }), minutes(2));
        await store.approvals.create(approval(), T0);
        const pending = async () => (await store.approvals.listPendingForSession(sessionId)).map((a) => a.id);
        expect(await pending()).toEqual([first.id, second.id, third.id]);
        await store.approvals.decide(second.id, 'approved', 'U0LEAD', minutes(3));
        expect(await store.approvals.cancel(third.id, minutes(3))).toBe(true);
        expect(await pending()).toEqual([first.id]);
        expect(await getItem(ctx, keys.approvalSession(second.id))).toBeUndefined();
      });

      it('lists what an approver still has to decide and writes nothing for bad input', async () => {
        const approver = `U${ulid()}`;
        const later = await store.approvals.create(
          approval({ allowedDeciders: [approver], expiresAt: minutes(30) }),
          T0,
        );
        const sooner = await store.approvals.create(approval({ allowedDeciders: ['U0X', approver] }), T0);
        const decided = await store.approvals.create(approval({ allowedDeciders: [approver] }), T0);
        const gone = await store.approvals.create(approval({ allowedDeciders: [approver], expiresAt: minutes(5) }), T0);
        await store.approvals.decide(decided.id, 'approved', approver, minutes(1));
        expect((await store.approvals.listPendingFor(approver, minutes(6))).map((a) => a.id)).toEqual([
          sooner.id,
          later.id,
        ]);
        expect(gone.status).toBe('pending');

        const badId = `bad-${ulid()}`;
        await expect(
          store.approvals.create(approval({ id: badId, allowedDeciders: [approver, approver] }), T0),
        ).rejects.toBeInstanceOf(StoreValidationError);
        await expect(store.approvals.create(approval({ id: badId, expiresAt: T0 }), T0)).rejects.toBeInstanceOf(
          StoreValidationError,
        );
        expect(await store.approvals.get(badId)).toBeUndefined();
        expect(await getItem(ctx, keys.approvalDecider(badId, approver))).toBeUndefined();
      });
    });

    describe('threads', () => {
      it('binds a thread to one session only', async () => {
        const ts = `1712345678.${Date.now() % 1e6}`;
        const bound = await store.threads.bind('C0INCIDENT', ts, 'S1', T0);
        expect(await store.threads.bind('C0INCIDENT', ts, 'S1', minutes(1))).toEqual(bound);
        await expect(store.threads.bind('C0INCIDENT', ts, 'S2')).rejects.toBeInstanceOf(ThreadAlreadyBoundError);
        expect(await store.threads.sessionFor('C0INCIDENT', ts)).toBe('S1');
        expect(await store.threads.lookup('C0INCIDENT', '1.2')).toBeUndefined();
      });
    });

    describe('dedupe', () => {
      it('reports the first delivery once, and again after expiry', async () => {
        const key = `event:Ev${ulid()}`;
        const tries = await Promise.all(
          Array.from({ length: 20 }, () => store.dedupe.firstDelivery(key, { ttlSeconds: 60, now: T0 })),
        );
        expect(tries.filter(Boolean)).toHaveLength(1);
        expect(await store.dedupe.firstDelivery(key, { ttlSeconds: 60, now: new Date(T0.getTime() + 59_999) })).toBe(
          false,
        );
        expect(await store.dedupe.firstDelivery(key, { ttlSeconds: 60, now: new Date(T0.getTime() + 60_000) })).toBe(
          true,
        );
        expect(await store.dedupe.firstDelivery(key, { ttlSeconds: 60, now: new Date(T0.getTime() + 61_000) })).toBe(
          false,
        );
        await expect(store.dedupe.firstDelivery('has space')).rejects.toBeInstanceOf(StoreValidationError);
      });

      it('claims a key once per live attempt, lets a retry through after a dead attempt, and drops it once finished', async () => {
        const at = (ms: number) => ({ ttlSeconds: 60, leaseSeconds: 3, now: new Date(T0.getTime() + ms) });
        const key = `event:Ev${ulid()}`;
        const claims = await Promise.all(Array.from({ length: 10 }, () => store.dedupe.claim(key, at(0))));
        expect(claims.filter((c) => c !== undefined)).toHaveLength(1);
        // A retry while the first attempt may still be working is a repeat...
        expect(await store.dedupe.claim(key, at(2_999))).toBeUndefined();
        // ...but past the lease the first attempt is presumed dead: the retry is processed.
        const retry = await store.dedupe.claim(key, at(3_000));
        expect(retry).toBeDefined();
        expect(await store.dedupe.finish(retry!)).toBe(true);
        // The dead attempt cannot finish or release what the retry now holds.
        const dead = claims.find((c) => c !== undefined)!;
        expect(await store.dedupe.finish(dead)).toBe(false);
        await store.dedupe.release(dead);
        expect(await store.dedupe.claim(key, at(30_000))).toBeUndefined();
        expect(await store.dedupe.claim(key, at(60_000))).toBeUndefined();
        expect(await store.dedupe.claim(key, at(63_001))).toBeDefined();

        const failed = `event:Ev${ulid()}`;
        const attempt = await store.dedupe.claim(failed, at(0));
        await store.dedupe.release(attempt!);
        expect(await store.dedupe.claim(failed, at(1))).toBeDefined();
      });
    });

    describe('blackboard', () => {
      it('records specialist findings and reads them back in order', async () => {
        const id = ulid();
        const osd = await store.blackboard.updateSharedContext(
          id,
          {
            specialist: 'storage',
            summary: 'OSD.5 is down with I/O errors',
            confidence: 0.95,
            code: 'OSD_DOWN',
            resource: { kind: 'CephOSD', name: 'osd.5' },
          },
          T0,
        );
        const pvc = await store.blackboard.updateSharedContext(
          id,
          {
            specialist: 'storage',
            summary: 'PVC data-0 pending',
            confidence: 0.6,
            resource: { kind: 'PersistentVolumeClaim', name: 'data-0', namespace: 'payments' },
            related: [{ kind: 'CephOSD', name: 'osd.5' }],
          },
          T0,
        );
        const node = await store.blackboard.updateSharedContext(
          id,
          { specialist: 'compute', summary: 'node-3 NotReady', confidence: 0.8 },
          minutes(1),
        );
        expect(await store.blackboard.getSharedContext(id)).toEqual([osd, pvc, node]);
        expect(await store.blackboard.getSharedContext(id, { specialist: 'storage', minConfidence: 0.9 })).toEqual([
          osd,
        ]);
        await expect(
          store.blackboard.updateSharedContext(id, { specialist: 'storage', summary: 'x', confidence: 2 }),
        ).rejects.toBeInstanceOf(StoreValidationError);
        expect(await store.blackboard.getSharedContext(id)).toHaveLength(3);
      });
    });
  });
}
