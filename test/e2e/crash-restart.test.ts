import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CalmopsProcess, spawnCalmops } from '../../local/calmops-process.js';
import { DEMO_NAMESPACES } from '../../local/demo/index.js';
import { localClientOptions } from '../../local/dynamodb/index.js';
import { freePort } from '../../local/free-port.js';
import { type BotClient, createBotClient } from '../../local/sandbox/bot-client.js';
import { DEMO_IDS } from '../../local/slack/index.js';
import { ArtifactRepository } from '../../src/store/artifacts.js';
import { createDocumentClient, createDynamoClient, createStore, type Store } from '../../src/store/index.js';
import { blockActionBody, eventBody, slashBody, viewSubmissionBody } from '../support/slack-harness.js';
import { buttonsOf } from '../support/slack-messages.js';

/**
 * `npm start` is killed the way production processes die — `kill -9` of the whole process group in the middle of
 * work, or a SIGTERM — and started again on the same data directory. Slack is played over signed HTTP: slash
 * commands, bursts of concurrent thread replies with duplicates and retries, button clicks, a modal. What was not
 * acknowledged is sent again, as Slack would (a retry of the same event id, after Slack's 3 s). Nothing may be lost,
 * doubled or left waiting: every input consumed exactly once and in order, every acknowledged triage reported, a plan
 * approved after the restart takes effect, and an override granted before a kill still ends at its deadline.
 */

const SECRET = 'crash-test-signing-secret-6b1f0e';
const RECONCILE_SECONDS = 2;
const { requester, senior, incidents } = DEMO_IDS;

interface StandInMessage {
  ts: string;
  thread_ts?: string;
  text?: string;
  user?: string;
  bot_id?: string;
  blocks?: unknown[];
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/**
 * Whether a process of the group led by `pid` still runs. A zombie does not count: where PID 1 does not reap
 * orphans, one that has exited stays listed, but it holds no port and writes nothing.
 */
function groupAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone between the listing and the read
    }
    // After the command name in parentheses: state, parent, process group.
    const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(group) === pid && state !== 'Z') return true;
  }
  return false;
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The running product and what the test reads it with. */
class Product {
  private readonly sender: BotClient;

  private constructor(
    readonly proc: CalmopsProcess,
    readonly store: Store,
    readonly artifacts: ArtifactRepository,
  ) {
    // Longer than Slack's 3 s: a busy machine answers late, and only a dead process leaves a request unanswered.
    this.sender = createBotClient({ url: `${proc.origin}/slack/events`, signingSecret: SECRET, timeoutMs: 30_000 });
  }

  static async start(dataDir: string, port: number): Promise<Product> {
    const proc = await spawnCalmops({
      dataDir,
      port,
      signingSecret: SECRET,
      // The test clicks faster than a person reads: no minimum time in GATHERING (docs/diagnosis.md).
      env: { CALMOPS_RECONCILE_SECONDS: String(RECONCILE_SECONDS), CALMOPS_MIN_TIME_IN_STATE_SECONDS: '0' },
      readyTimeoutMs: 120_000,
    });
    const endpoint = proc.services['dynamodb']?.url ?? '';
    const ctx = {
      client: createDocumentClient(createDynamoClient(localClientOptions(endpoint))),
      tableName: 'calmops',
    };
    return new Product(proc, createStore(ctx), new ArtifactRepository(ctx));
  }

  /** A signed request to `/slack/events`; throws when nothing answered (nobody acknowledged it). */
  async slack(
    body: string,
    contentType: 'application/json' | 'application/x-www-form-urlencoded',
    headers: Record<string, string> = {},
  ) {
    const answer = await this.sender(body, contentType, headers);
    if (answer.failure !== undefined) throw new Error(`no answer: ${answer.failure}`);
    return { status: answer.status, body: answer.body };
  }

  command(text: string, user = requester) {
    return this.slack(slashBody(text, { user }), 'application/x-www-form-urlencoded');
  }

  async messages(): Promise<StandInMessage[]> {
    const response = await fetch(`${this.proc.origin}/_slack/messages?channel=${incidents}`);
    return (await response.json()) as StandInMessage[];
  }

  async thread(threadTs: string): Promise<StandInMessage[]> {
    return (await this.messages()).filter((m) => m.thread_ts === threadTs);
  }

  async calls(method: string): Promise<{ response: Record<string, unknown> }[]> {
    const response = await fetch(`${this.proc.origin}/_slack/calls?method=${method}`);
    return (await response.json()) as { response: Record<string, unknown> }[];
  }
}

function rendered(message: StandInMessage): string {
  return `${message.text ?? ''}\n${JSON.stringify(message.blocks ?? [])}`;
}

async function waitForButton(product: Product, threadTs: string, actionId: string, pattern?: RegExp) {
  return until(`a ${actionId} button`, async () => {
    for (const message of await product.thread(threadTs)) {
      if (pattern && !pattern.test(rendered(message))) continue;
      const button = buttonsOf(message).find((b) => b.action_id === actionId || b.action_id.startsWith(`${actionId}:`));
      if (button) return { message, button };
    }
    return undefined;
  });
}

function click(product: Product, user: string, message: StandInMessage, button: { action_id: string; value: string }) {
  return product.slack(
    blockActionBody({
      actionId: button.action_id,
      value: button.value,
      user,
      messageTs: message.ts,
      threadTs: message.thread_ts ?? message.ts,
      blocks: message.blocks ?? [],
    }),
    'application/x-www-form-urlencoded',
  );
}

/** Opens a session with `/triage` and returns it once its thread is bound. */
async function triage(product: Product, text: string): Promise<{ sessionId: string; threadTs: string }> {
  const before = new Set((await product.store.sessions.listOpen({ limit: 1000 })).sessions.map((s) => s.id));
  const ack = await product.command(text);
  expect(ack.status).toBe(200);
  const session = await until('the new session', async () =>
    (await product.store.sessions.listOpen({ limit: 1000 })).sessions.find(
      (s) => !before.has(s.id) && s.threadTs !== undefined,
    ),
  );
  return { sessionId: session.id, threadTs: session.threadTs as string };
}

async function consumedKeys(store: Store, sessionId: string): Promise<string[]> {
  return (await store.timeline.list(sessionId))
    .filter((e) => e.type === 'input.consumed')
    .map((e) => String((e.data as { key?: string } | undefined)?.key ?? ''));
}

describe('kill -9 and restarts of npm start lose nothing and leave nothing stuck', () => {
  let dataDir: string;
  let port: number;
  let product: Product | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'calmops-crash-'));
    port = await freePort();
  });
  afterAll(async () => {
    await product?.proc.killHard();
    await rm(dataDir, { recursive: true, force: true });
  });

  const restart = async (how: 'kill' | 'term') => {
    if (product) {
      if (how === 'kill') await product.proc.killHard();
      else await product.proc.stop();
    }
    product = await Product.start(dataDir, port);
    return product;
  };

  it('a kill -9 in the middle of triage and a burst of replies: each reply consumed once, in order; every triage reported', async () => {
    const a = await restart('kill');
    const opened: { sessionId: string; threadTs: string }[] = [];
    for (const demo of DEMO_NAMESPACES.slice(0, 4)) opened.push(await triage(a, demo.try.replace('/triage ', '')));
    const PER_SESSION = 10;
    let sent = 0;
    const killAt = 12 + Math.floor(Math.random() * 16);
    let killed: Promise<void> | undefined;
    let killedAt = 0;
    // Per session: the message keys in the order they were sent, and what still has to go after a restart.
    const plan = opened.map((s, i) =>
      Array.from({ length: PER_SESSION }, (_, m) => ({
        sessionId: s.sessionId,
        threadTs: s.threadTs,
        ts: `${1_800_000_000 + i}.${String(m + 1).padStart(6, '0')}`,
        eventId: `EvCrash${i}x${m}`,
        text: `ack ${m}`,
      })),
    );
    const reply = (item: (typeof plan)[number][number]) =>
      eventBody(
        {
          type: 'message',
          channel_type: 'channel',
          channel: incidents,
          user: requester,
          text: item.text,
          ts: item.ts,
          thread_ts: item.threadTs,
        },
        { eventId: item.eventId },
      );
    const unsent: (typeof plan)[number][] = plan.map(() => []);
    await Promise.all(
      plan.map(async (items, s) => {
        for (let m = 0; m < items.length; m++) {
          const item = items[m] as (typeof items)[number];
          if (killed) {
            unsent[s]?.push(...items.slice(m));
            return;
          }
          sent++;
          if (sent === killAt) {
            killedAt = Date.now();
            killed = a.proc.killHard();
          }
          try {
            const body = reply(item);
            const first = a.slack(body, 'application/json');
            // Some replies arrive twice at once, some are retried after the ack: one consumption each.
            const twin = m % 4 === 1 ? a.slack(body, 'application/json') : undefined;
            const [answer] = await Promise.all([first, twin]);
            expect(answer?.status).toBe(200);
            if (m % 5 === 2) {
              await a.slack(body, 'application/json', {
                'x-slack-retry-num': '1',
                'x-slack-retry-reason': 'http_timeout',
              });
            }
          } catch {
            // Not acknowledged: Slack retries it.
            unsent[s]?.push(...items.slice(m));
            return;
          }
        }
      }),
    );
    await killed;
    expect(killedAt).toBeGreaterThan(0);

    const b = await restart('kill');
    // Slack retries only after its 3 s have passed on the attempt that got no answer.
    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + 3_500 - Date.now())));
    await Promise.all(
      unsent.map(async (items) => {
        for (const [i, item] of items.entries()) {
          const answer = await b.slack(
            reply(item),
            'application/json',
            i === 0 ? { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' } : {},
          );
          expect(answer.status).toBe(200);
        }
      }),
    );

    for (const [s, session] of opened.entries()) {
      const expected = (plan[s] ?? []).map((item) => `${incidents}:${item.ts}`);
      const keys = await until(
        `session ${s} to consume its ${expected.length} replies`,
        async () => {
          const got = await consumedKeys(b.store, session.sessionId);
          const handled = (await b.store.inbox.list(session.sessionId)).length === 0;
          return got.length >= expected.length && handled ? got : undefined;
        },
        40_000,
      ).catch(async (error) => {
        const record = await b.store.sessions.get(session.sessionId);
        const wait = await b.store.waits.get(session.sessionId);
        const inbox = await b.store.inbox.list(session.sessionId);
        const timeline = (await b.store.timeline.list(session.sessionId)).map(
          (e) => `${e.at} ${e.type} ${e.summary?.slice(0, 80)}`,
        );
        console.error(
          JSON.stringify(
            { record, wait: wait && { ...wait, token: wait.token.slice(0, 8) }, inbox: inbox.length, timeline },
            null,
            1,
          ),
        );
        console.error(b.proc.output().slice(-3000));
        throw error;
      });
      expect(keys).toEqual(expected);
      expect(await b.store.inbox.list(session.sessionId)).toEqual([]);
    }
    // Every /triage that was acknowledged reported its envelope, whether or not the kill interrupted its reads.
    for (const session of opened) {
      await until('the envelope of an acknowledged triage', () => b.artifacts.envelopePostedTs(session.sessionId));
    }
    // And every session answers something new within 30 s.
    await Promise.all(
      opened.map(async (session, s) => {
        const before = (await b.thread(session.threadTs)).length;
        const ts = `${1_800_000_100 + s}.000001`;
        await b.slack(
          eventBody(
            {
              type: 'message',
              channel_type: 'channel',
              channel: incidents,
              user: requester,
              text: 'show me the events',
              ts,
              thread_ts: session.threadTs,
            },
            { eventId: `EvAfter${s}` },
          ),
          'application/json',
        );
        await until(
          'an answer after the restart',
          async () => (await b.thread(session.threadTs)).length > before,
          30_000,
        );
      }),
    );
  }, 300_000);

  it('a plan approved after a graceful restart takes effect, and an override granted before a kill -9 ends at its deadline', async () => {
    const b = product ?? (await restart('kill'));
    // A plan waiting for review.
    const r = await triage(b, 'pvc stuck pending in ml-team');
    const hypothesis = await waitForButton(b, r.threadTs, 'hypothesis_choose');
    expect((await click(b, requester, hypothesis.message, hypothesis.button)).status).toBe(200);
    await until('the test question', async () =>
      (await b.thread(r.threadTs)).some((m) => /Does this confirm/.test(rendered(m))),
    );
    await b.slack(
      eventBody(
        {
          type: 'message',
          channel_type: 'channel',
          channel: incidents,
          user: requester,
          text: 'confirmed',
          ts: '1800000200.000001',
          thread_ts: r.threadTs,
        },
        { eventId: 'EvConfirmed' },
      ),
      'application/json',
    );
    const plan = await waitForButton(b, r.threadTs, 'approval_approve', /Remediation plan for review/);

    // An override, granted by the senior.
    const o = await triage(b, 'pods stuck pending in payments');
    await until('the envelope', async () => (await b.thread(o.threadTs)).length > 0);
    expect((await b.command(`breakglass ${o.sessionId}`)).status).toBe(200);
    const opened = await until('the break-glass form', async () => (await b.calls('views.open')).at(-1)?.response);
    const view = opened['view'] as { id: string; private_metadata: string; hash?: string };
    const submitted = await b.slack(
      viewSubmissionBody({
        callbackId: 'breakglass_request',
        user: requester,
        viewId: view.id,
        privateMetadata: view.private_metadata,
        values: {
          justification: {
            value: {
              type: 'plain_text_input',
              value: 'Checkout is down for every customer; the guided steps take too long',
            },
          },
          seniorApprover: { value: { type: 'users_select', selected_user: senior } },
          skipToState: { value: { type: 'static_select', selected_option: { value: 'TESTING' } } },
          timeLimitMinutes: { value: { type: 'number_input', value: '1' } },
        },
      }),
      'application/x-www-form-urlencoded',
    );
    expect(submitted.status).toBe(200);
    const request = await waitForButton(b, o.threadTs, 'approval_approve', /break-glass/i);
    expect((await click(b, senior, request.message, request.button)).status).toBe(200);
    const override = await until('the override', async () => (await b.store.sessions.get(o.sessionId))?.override);

    // A graceful restart while the plan waits: the button posted before it still works.
    const c = await restart('term');
    expect((await click(c, senior, plan.message, plan.button)).status).toBe(200);
    await until('the approved plan', async () =>
      (await c.thread(r.threadTs)).some((m) => /Approved plan/.test(rendered(m))),
    );
    expect((await c.store.timeline.list(r.sessionId)).map((e) => e.type)).toContain('approval.decided');

    // A kill -9 while the override is active: it still ends by its deadline (or, when the restart comes after it, by
    // the restart) plus one reconciler period.
    const d = await restart('kill');
    const backAt = Date.now();
    const revoked = await until(
      'the override to be revoked',
      async () => {
        const events = await d.store.timeline.list(o.sessionId);
        return events.find((e) => /revoked/.test(e.type));
      },
      120_000,
    );
    const deadline = Date.parse(override.expiresAt);
    expect(Date.parse(revoked.at)).toBeGreaterThanOrEqual(deadline);
    // One reconciler period, plus the time a run takes and this machine's jitter.
    expect(Date.parse(revoked.at)).toBeLessThanOrEqual(Math.max(deadline, backAt) + RECONCILE_SECONDS * 1000 + 10_000);
    expect((await d.store.sessions.get(o.sessionId))?.override ?? null).toBeNull();
    // Its mandatory review was started, by the resumed run or by the reconciler.
    const requestId = (await d.artifacts.getWorkflow(o.sessionId))?.override?.id;
    expect(requestId).toBeDefined();

    // A kill -9 right after a /triage was acknowledged, while its reads run: the envelope still reaches the thread.
    const t = await triage(d, 'crashloop in orders');
    const e = await restart('kill');
    await until('the envelope of the interrupted triage', () => e.artifacts.envelopePostedTs(t.sessionId), 90_000);
  }, 300_000);

  it('SIGTERM to `npm start` stops everything it started, and nothing holds the port', async () => {
    await product?.proc.stop();
    product = undefined;
    expect(await portIsFree(port)).toBe(true);
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: { ...process.env, PORT: String(port), CALMOPS_DATA_DIR: dataDir, SLACK_SIGNING_SECRET: SECRET },
      stdio: 'ignore',
      detached: true,
    });
    await until(
      'npm start to listen',
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200,
      120_000,
    );
    npm.kill('SIGTERM');
    // npm may exit before what it started has: the test waits for the whole process group, so nothing is left
    // writing to the data directory when it is removed.
    await until('every process npm start started to exit', async () => !groupAlive(npm.pid), 30_000);
    expect(await portIsFree(port)).toBe(true);
  }, 200_000);
});
