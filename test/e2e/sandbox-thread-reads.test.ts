import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_NAMESPACES } from '../../local/demo/index.js';
import type { StandInMessage } from '../../local/slack/server.js';
import { type RunningCalmops, startCalmops } from '../../local/start.js';
import { renderMessage } from '../support/slack-messages.js';
import { waitFor as waitUntil } from '../support/workflow-harness.js';

/**
 * What people type in an incident thread, through the sandbox's own API as the page sends it: in every broken demo
 * namespace, each SAFE next action of the envelope typed verbatim is answered (never met with the calming
 * intervention), and each question calmops offers is answered with the fact it asks for, computed from the cluster.
 */

const REQUESTER = 'UREQUESTER';
const CHANNEL = 'CINCIDENTS';
const WAIT = 90_000;

let running: RunningCalmops;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'calmops-thread-reads-'));
  running = await startCalmops({
    env: { CALMOPS_MIN_TIME_IN_STATE_SECONDS: '0' },
    dataDir,
    port: 0,
    logLevel: 'SILENT',
    ackTimeoutMs: 30_000,
  });
}, 120_000);

afterAll(async () => {
  await running?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

async function post(path: string, body: unknown = {}): Promise<Record<string, unknown>> {
  const response = await fetch(`${running.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(answer)).toBe(200);
  return answer;
}

async function messages(): Promise<StandInMessage[]> {
  const state = (await (await fetch(`${running.origin}/sandbox/api/state`)).json()) as { messages: StandInMessage[] };
  return state.messages;
}

const waitFor = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => waitUntil(what, probe, WAIT, 200);

async function threadOf(rootTs: string): Promise<StandInMessage[]> {
  return (await messages()).filter((m) => m.channel === CHANNEL && m.thread_ts === rootTs && m.ts !== rootTs);
}

async function triage(text: string): Promise<string> {
  const before = new Set((await messages()).map((m) => m.ts));
  await post('/sandbox/api/compose', { user: REQUESTER, channel: CHANNEL, text });
  const root = await waitFor('the thread root', async () =>
    (await messages()).find(
      (m) => m.channel === CHANNEL && !before.has(m.ts) && m.thread_ts === undefined && /requested by/.test(m.text),
    ),
  );
  return root.ts;
}

/** Types a reply in the thread and waits until calmops has answered it: the bot's messages after it, once settled. */
async function ask(rootTs: string, text: string, done: RegExp): Promise<string> {
  const before = (await threadOf(rootTs)).length;
  await post('/sandbox/api/compose', { user: REQUESTER, channel: CHANNEL, threadTs: rootTs, text });
  const replies = async () =>
    (await threadOf(rootTs))
      .slice(before)
      .filter((m) => m.user !== REQUESTER)
      .map((m) => `${renderMessage(m)}${(m.files ?? []).map((f) => `\n${f.content}`).join('')}`)
      .join('\n');
  try {
    return await waitFor(`an answer to ${text}`, async () => {
      const joined = await replies();
      return done.test(joined) || /Hold on/.test(joined) ? joined : undefined;
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}; the thread answered:\n${await replies()}`, { cause: error });
  }
}

/** The envelope's SAFE next actions, as the thread shows them. */
async function safeActions(rootTs: string): Promise<string[]> {
  const envelope = await waitFor('the envelope', async () =>
    (await threadOf(rootTs)).find((m) => /Next actions|SAFE/.test(renderMessage(m))),
  );
  const text = renderMessage(envelope);
  return [...text.matchAll(/`((?:kubectl|oc) [^`]+)`/g)]
    .map((m) => (m[1] as string).replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'))
    .filter((command) => /^(?:kubectl|oc) (?:get|describe|logs|events|top)\b/.test(command));
}

const ANSWERED = /:mag:|:white_circle:|:x:|:no_entry:|I did not run/;

describe('reads and questions typed in the thread of every broken demo namespace', () => {
  for (const demo of DEMO_NAMESPACES.filter((d) => d.expectedRootCause !== undefined)) {
    it(`answers every SAFE next action in ${demo.namespace}, typed verbatim, without an intervention`, async () => {
      const rootTs = await triage(demo.try);
      const actions = await safeActions(rootTs);
      expect(actions.length).toBeGreaterThan(0);
      for (const action of actions) {
        const answer = await ask(rootTs, action, ANSWERED);
        expect(answer, action).not.toMatch(/Hold on/);
        expect(answer, action).toMatch(ANSWERED);
      }
    }, 300_000);
  }

  const QUESTIONS: Array<{ namespace: string; question: string; fact: RegExp }> = [
    {
      namespace: 'payments',
      question: 'Which nodes have free capacity?',
      fact: /No node has room for pod \S+ \(requests cpu 4500m, memory 2.0Gi\)/,
    },
    {
      namespace: 'orders',
      question: 'Did the crashes start with the last rollout?',
      fact: /(Yes: the first crash|No: the crashes began) .*ReplicaSet order-worker-/,
    },
    { namespace: 'orders', question: 'Is the liveness probe killing the container?', fact: /liveness probe/i },
    {
      namespace: 'orders',
      question: 'Which container hit its memory limit?',
      fact: /container order-worker: limit 256Mi, request 128Mi, using \d+Mi now \(\d+% of the limit\)/,
    },
    {
      namespace: 'inventory',
      question: "Does the route's service have ready endpoints?",
      fact: /Service inventory: 0 ready endpoint\(s\), 2 not ready/,
    },
    {
      namespace: 'inventory',
      question: 'Which port does the backend container listen on?',
      fact: /Service inventory port \d+ → targetPort \S+/,
    },
    {
      namespace: 'ml-team',
      question: 'Which StorageClass is the default?',
      fact: /default StorageClass|StorageClasses are marked default/,
    },
    {
      namespace: 'ml-team',
      question: 'What changed in this namespace in the last hour?',
      fact: /What changed in ml-team in the last 1 hour\(s\)[\s\S]*(FailedScheduling|ProvisioningFailed)/,
    },
  ];
  for (const q of QUESTIONS) {
    it(`answers "${q.question}" in ${q.namespace} with the fact it asks for`, async () => {
      const demo = DEMO_NAMESPACES.find((d) => d.namespace === q.namespace);
      const rootTs = await triage(demo?.try ?? `/triage ${q.namespace}`);
      await safeActions(rootTs);
      const answer = await ask(rootTs, q.question, q.fact);
      expect(answer).not.toMatch(/Hold on/);
      expect(answer).toMatch(q.fact);
    }, 180_000);
  }
});
