import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCalmops } from '../local/calmops-process.js';
import { DEMO_NAMESPACES } from '../local/demo/index.js';
import { localClientOptions } from '../local/dynamodb/index.js';
import { freePort } from '../local/free-port.js';
import { createBotClient } from '../local/sandbox/bot-client.js';
import { DEMO_IDS } from '../local/slack/index.js';
import { createDocumentClient, createDynamoClient, createStore } from '../src/store/index.js';

/**
 * Time from a restart after `kill -9` until every session that was waiting has answered a new thread message: the
 * whole process (spawn, bundle load, DynamoDB and Step Functions on disk, resumed executions, the reconciler's first
 * run) and the answer, which is what a person in the thread waits for. The same restart with no sessions, and an
 * empty `node`, are timed in the same run as baselines.
 */

const SECRET = 'bench-restart-signing-secret-0d9e';
const SESSIONS = 4;

async function until<T>(probe: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Slack's signed requests, waiting longer than Slack would: the bench times the answer, not the ack. */
const send = (origin: string) =>
  createBotClient({ url: `${origin}/slack/events`, signingSecret: SECRET, timeoutMs: 30_000 });

function threadReply(threadTs: string, ts: string, eventId: string): string {
  return JSON.stringify({
    type: 'event_callback',
    team_id: DEMO_IDS.team,
    api_app_id: 'ACALMOPS',
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    event: {
      type: 'message',
      channel_type: 'channel',
      channel: DEMO_IDS.incidents,
      user: DEMO_IDS.requester,
      text: 'show me the events',
      ts,
      thread_ts: threadTs,
      event_ts: ts,
    },
    authorizations: [{ team_id: DEMO_IDS.team, user_id: DEMO_IDS.botUser, is_bot: true, is_enterprise_install: false }],
  });
}

async function threadLength(origin: string, threadTs: string): Promise<number> {
  const response = await fetch(`${origin}/_slack/messages?channel=${DEMO_IDS.incidents}`);
  return ((await response.json()) as { thread_ts?: string }[]).filter((m) => m.thread_ts === threadTs).length;
}

export async function measureRestart(): Promise<object> {
  const dataDir = await mkdtemp(join(tmpdir(), 'calmops-bench-restart-'));
  try {
    const port = await freePort();
    const options = { dataDir, port, signingSecret: SECRET, env: { CALMOPS_RECONCILE_SECONDS: '60' } };
    const emptyStarted = performance.now();
    spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' });
    const emptyNodeMs = performance.now() - emptyStarted;

    const coldStarted = performance.now();
    const first = await spawnCalmops(options);
    const readyMs = performance.now() - coldStarted;
    const store = createStore({
      client: createDocumentClient(createDynamoClient(localClientOptions(first.services['dynamodb']?.url ?? ''))),
      tableName: 'calmops',
    });
    for (const demo of DEMO_NAMESPACES.slice(0, SESSIONS)) {
      const text = demo.try.replace('/triage ', '');
      const body = new URLSearchParams({
        command: '/triage',
        text,
        user_id: DEMO_IDS.requester,
        channel_id: DEMO_IDS.incidents,
        team_id: DEMO_IDS.team,
        trigger_id: `trigger.bench.${demo.namespace}.${Date.now()}`,
        response_url: 'http://127.0.0.1:9/unused',
      }).toString();
      await send(first.origin)(body, 'application/x-www-form-urlencoded');
    }
    const sessions = await until(async () => {
      const open = (await store.sessions.listOpen({ limit: 100 })).sessions;
      if (open.length < SESSIONS) return undefined;
      const waiting = await Promise.all(open.map(async (s) => (await store.waits.get(s.id)) !== undefined));
      return waiting.every(Boolean) ? open : undefined;
    });
    await first.killHard();

    const restarted = performance.now();
    const second = await spawnCalmops(options);
    const restartReadyMs = performance.now() - restarted;
    await Promise.all(
      sessions.map(async (session, i) => {
        const threadTs = session.threadTs as string;
        const before = await threadLength(second.origin, threadTs);
        await send(second.origin)(threadReply(threadTs, `1900000000.00000${i}`, `EvBench${i}`), 'application/json');
        await until(async () => (await threadLength(second.origin, threadTs)) > before);
      }),
    );
    const allAnsweredMs = performance.now() - restarted;
    await second.stop();
    const result = {
      sessions: SESSIONS,
      emptyNodeMs: Math.round(emptyNodeMs),
      coldStartReadyMs: Math.round(readyMs),
      restartReadyMs: Math.round(restartReadyMs),
      restartUntilEverySessionAnsweredMs: Math.round(allAnsweredMs),
      ratioToEmptyNode: Math.round((allAnsweredMs / emptyNodeMs) * 10) / 10,
    };
    process.stdout.write(
      `restart after kill -9 with ${SESSIONS} waiting sessions: ready in ${result.restartReadyMs} ms, every session answered after ${result.restartUntilEverySessionAnsweredMs} ms (empty node ${result.emptyNodeMs} ms, ${result.ratioToEmptyNode}×)\n`,
    );
    return result;
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
