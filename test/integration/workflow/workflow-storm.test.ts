import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_NAMESPACES } from '../../../local/demo/index.js';
import { DEMO_IDS, type SlackStandIn, type StandInMessage } from '../../../local/slack/index.js';
import { type RunningCalmops, startCalmops } from '../../../local/start.js';
import { createStore, type Store } from '../../../src/store/index.js';
import {
  appMention,
  mentionOfBot,
  type SendOptions,
  type SignedSlack,
  type SlackAnswer,
  type SlackRequest,
  signedSlack,
  slashCommand,
  threadMessage,
} from '../../support/signed-slack.js';
import { waitFor } from '../../support/workflow-harness.js';

/**
 * Many sessions at once, fed through the real entry point: `npm start`'s stack in this process, Slack played over
 * signed HTTP to `/slack/events`. Each session gets its replies in waves: the replies of one wave are in flight
 * together (with their duplicates, Slack's retries and a mention's two events), and the next wave goes only once
 * every request of the previous one was answered. So the order calmops must keep is the order of the waves; within
 * a wave there is none. One session's input wait is taken by a sender that dies before SendTaskSuccess, and one
 * reply comes signed with the wrong secret.
 */

const SECRET = 'storm-signing-secret-41c7d2';
const SESSIONS = 12;
const WAVES = 4;
const PER_WAVE = 3;
const { incidents } = DEMO_IDS;
/** The session whose input wait is claimed by a sender that never sends. */
const STRANDED = 1;
/** The session that also gets a reply signed with the wrong secret. */
const FORGED = 2;
/** The first four demo incidents, round robin. */
const INCIDENTS = DEMO_NAMESPACES.slice(0, 4);

interface Session {
  index: number;
  sessionId: string;
  threadTs: string;
}

/** One distinct input and the requests that carry it (the original and its copies). */
interface Reply {
  key: string;
  wave: number;
  /** Sent together with the wave, all at once. */
  now: Array<() => Promise<SlackAnswer>>;
  /** Sent with the next wave: Slack's later retries of an input that was already answered. */
  later: Array<() => Promise<SlackAnswer>>;
}

/** What a person sees in a thread: the bot's messages and whatever else was posted there, not ephemerals. */
function threadMessages(standIn: SlackStandIn, threadTs: string): StandInMessage[] {
  return standIn.messages(incidents).filter((m) => m.thread_ts === threadTs && m.ephemeral_to === undefined);
}

describe('exactly-once input delivery under a storm of signed Slack requests', () => {
  let dataDir: string;
  let running: RunningCalmops;
  let standIn: SlackStandIn;
  let store: Store;
  let slack: SignedSlack;
  const answers: { what: string; answer: SlackAnswer }[] = [];

  const send = async (what: string, request: SlackRequest, options?: SendOptions) => {
    const answer = await slack(request, options);
    answers.push({ what, answer });
    return answer;
  };

  const consumedKeys = async (sessionId: string) =>
    (await store.timeline.list(sessionId))
      .filter((e) => e.type === 'input.consumed')
      .map((e) => String(e.data?.['key'] ?? ''));

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'calmops-storm-'));
    running = await startCalmops({
      // The reconciler (the schedule in AWS) every 2 s: a wait stranded by a dead sender is handed over in seconds.
      env: { SLACK_SIGNING_SECRET: SECRET, CALMOPS_RECONCILE_SECONDS: '2' },
      dataDir,
      port: 0,
      logLevel: 'SILENT',
    });
    standIn = running.standIn as SlackStandIn;
    store = createStore({ client: running.stack.docClient, tableName: running.stack.env['CALMOPS_TABLE'] ?? '' });
    // An answer later than Slack's 3 s still counts here: `npm run bench` measures how soon it comes.
    slack = signedSlack({ url: running.origin, signingSecret: SECRET, timeoutMs: 180_000 });
  }, 180_000);

  afterAll(async () => {
    await running?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** Until the session's execution is parked on its input wait: stored, and claimed by no sender. */
  const waitForInput = (session: Session) =>
    waitFor(`session ${session.index} to wait for input`, async () => {
      const wait = await store.waits.get(session.sessionId);
      return wait && !wait.claimedAt ? wait : undefined;
    });

  /** `/triage … <marker>`, then the session bound to the root message that carries the marker. */
  const open = async (index: number): Promise<Session> => {
    const incident = INCIDENTS[index % INCIDENTS.length] as (typeof INCIDENTS)[number];
    // The note after the namespace shows in the root message, which tells the concurrent triages apart.
    const marker = `storm${String(index).padStart(2, '0')}`;
    const ack = await send(`/triage ${index}`, slashCommand(`${incident.try.replace('/triage ', '')} ${marker}`));
    expect(ack.status).toBe(200);
    const root = await waitFor(`the thread of session ${index}`, async () =>
      standIn
        .messages(incidents)
        .find((m) => m.thread_ts === undefined && JSON.stringify(m.blocks ?? []).includes(marker)),
    );
    const sessionId = await waitFor(`the session of thread ${root.ts}`, () =>
      store.threads.sessionFor(incidents, root.ts),
    );
    return { index, sessionId, threadTs: root.ts };
  };

  /** The replies of one session, wave by wave, each with its duplicates and retries. */
  const plan = (session: Session): Reply[] => {
    const s = session.index;
    const replies: Reply[] = [];
    for (let m = 0; m < WAVES * PER_WAVE; m++) {
      const ts = `${1_800_000_000 + s}.${String(m + 1).padStart(6, '0')}`;
      const eventId = `EvStorm${s}x${m}`;
      const variant = (s + m) % 6;
      const reply: Reply = { key: `${incidents}:${ts}`, wave: Math.floor(m / PER_WAVE), now: [], later: [] };
      const what = `session ${s} reply ${m}`;
      if (variant === 5) {
        // A mention in the thread: Slack sends a `message` copy and an `app_mention`, under different event ids.
        const text = `${mentionOfBot()} ack ${m}`;
        const message = threadMessage({ text, ts, threadTs: session.threadTs, eventId: `${eventId}m` });
        const mention = appMention({ text, ts, threadTs: session.threadTs, eventId });
        reply.now.push(
          () => send(`${what} (message copy)`, message),
          () => send(`${what} (app_mention)`, mention),
        );
        // And retries the mention after its answer was lost.
        reply.later.push(() => send(`${what} (app_mention retry)`, mention, { retry: { num: 1 } }));
      } else {
        const request = threadMessage({ text: `ack ${m}`, ts, threadTs: session.threadTs, eventId });
        reply.now.push(() => send(what, request));
        // The same event at once, as a double delivery.
        if (variant === 1) reply.now.push(() => send(`${what} (twin)`, request));
        // Slack's retry racing a slow first attempt.
        if (variant === 2) reply.now.push(() => send(`${what} (retry 1)`, request, { retry: { num: 1 } }));
        // Slack's retries 1..3 after answers it did not get in time, arriving among later replies.
        if (variant === 3) {
          reply.later.push(async () => {
            let last: SlackAnswer | undefined;
            for (let num = 1; num <= 3; num++) last = await send(`${what} (retry ${num})`, request, { retry: { num } });
            return last as SlackAnswer;
          });
        }
      }
      replies.push(reply);
    }
    return replies;
  };

  it('consumes every reply of 12 busy sessions exactly once, in wave order, despite duplicates, retries and a dead sender', async () => {
    const sessions = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => open(i)));
    const expected = new Map<string, Map<string, number>>();
    let strandedClaim: unknown;
    const forged = signedSlack({ url: running.origin, signingSecret: `${SECRET}-not`, timeoutMs: 180_000 });
    let forgedKey = '';
    let forgedAnswer: SlackAnswer | undefined;

    await Promise.all(
      sessions.map(async (session) => {
        const replies = plan(session);
        const waves = new Map(replies.map((r) => [r.key, r.wave]));
        expected.set(session.sessionId, waves);
        if (session.index === STRANDED) {
          // Parked on its input wait with nothing buffered, so no one else claims it: this claim always wins.
          await waitForInput(session);
          strandedClaim = await store.waits.claim(session.sessionId, new Date());
        }
        for (let wave = 0; wave <= WAVES; wave++) {
          const batch = [
            ...replies.filter((r) => r.wave === wave).flatMap((r) => r.now),
            ...replies.filter((r) => r.wave === wave - 1).flatMap((r) => r.later),
          ];
          if (wave === 1 && session.index === FORGED) {
            const ts = `${1_800_000_000 + session.index}.500000`;
            forgedKey = `${incidents}:${ts}`;
            const request = threadMessage({ text: 'forged', ts, threadTs: session.threadTs, eventId: 'EvForged' });
            batch.push(async () => {
              forgedAnswer = await forged(request);
              return forgedAnswer;
            });
          }
          await Promise.all(batch.map((request) => request()));
        }
      }),
    );
    expect(strandedClaim).toBeDefined();
    // Signed with another secret: refused before anything reads it.
    expect(forgedAnswer?.status).toBe(401);

    const snapshot = () =>
      Promise.all(
        sessions.map(async (session) => ({
          session,
          keys: await consumedKeys(session.sessionId),
          inbox: await store.inbox.list(session.sessionId),
        })),
      );
    const outcome = await waitFor(
      'every reply to be consumed and every inbox to be empty',
      async () => {
        const state = await snapshot();
        const done = state.every(
          (s) => s.inbox.length === 0 && s.keys.length >= (expected.get(s.session.sessionId)?.size ?? 0),
        );
        return done ? state : undefined;
      },
      undefined,
      250,
    ).catch(async (error: unknown) => {
      // Which session is behind, and whether its input sits in the inbox or never arrived.
      const behind = (await snapshot())
        .map(({ session, keys, inbox }) => ({
          session: session.index,
          missing: [...(expected.get(session.sessionId)?.keys() ?? [])].filter((k) => !keys.includes(k)),
          buffered: inbox.length,
        }))
        .filter((s) => s.missing.length > 0 || s.buffered > 0);
      throw new Error(`${(error as Error).message}: ${JSON.stringify(behind)}`, { cause: error });
    });

    // Every request of the storm was acknowledged, duplicates and retries included.
    expect(answers.filter((a) => a.answer.status !== 200).map((a) => `${a.what}: ${a.answer.status}`)).toEqual([]);
    // A reply that failed on the way in is answered 200 with an apology to its author: there must be none.
    expect(standIn.callsFor('chat.postEphemeral').map((c) => String(c.args['text']))).not.toContainEqual(
      expect.stringMatching(/could not take that in/),
    );
    for (const { session, keys, inbox } of outcome) {
      const waves = expected.get(session.sessionId) as Map<string, number>;
      // Exactly once: the same keys, none twice, none missing, the forged one never.
      expect([...keys].sort()).toEqual([...waves.keys()].sort());
      expect(keys).not.toContain(forgedKey);
      // In order where the sender serialised: a reply is never consumed before one of an earlier wave. Sorting by
      // wave is stable, so only an out-of-order consumption changes the sequence.
      expect(keys).toEqual([...keys].sort((a, b) => (waves.get(a) ?? -1) - (waves.get(b) ?? -1)));
      expect(inbox).toEqual([]);
    }

    // Each session still answers: once it waits for input again, a new reply gets a new message in its thread.
    await Promise.all(
      sessions.map(async (session) => {
        await waitForInput(session);
        const before = threadMessages(standIn, session.threadTs).length;
        const ts = `${1_800_000_100 + session.index}.000001`;
        const answer = await send(
          `session ${session.index} after the storm`,
          threadMessage({
            text: 'show me the events',
            ts,
            threadTs: session.threadTs,
            eventId: `EvAfter${session.index}`,
          }),
        );
        expect(answer.status).toBe(200);
        await waitFor(
          `session ${session.index} to answer after the storm`,
          async () =>
            threadMessages(standIn, session.threadTs).length > before &&
            (await consumedKeys(session.sessionId)).includes(`${incidents}:${ts}`),
        );
        // And goes back to waiting: nothing of it is still running when the stack stops.
        await waitForInput(session);
        // Nothing of the storm was consumed late, either.
        expect((await consumedKeys(session.sessionId)).sort()).toEqual(
          [...(expected.get(session.sessionId)?.keys() ?? []), `${incidents}:${ts}`].sort(),
        );
      }),
    );
  }, 600_000);
});
