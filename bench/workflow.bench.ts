import { readFileSync } from 'node:fs';
import { Logger } from '@aws-lambda-powertools/logger';
import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  SendTaskSuccessCommand,
} from '@aws-sdk/client-sfn';
import { DEMO_IDS } from '../local/slack/index.js';
import { DEMO_SCOPE, startLocalStack } from '../local/stack.js';
import { createWorkflowRuntime } from '../src/app/workflow-runtime.js';
import { parseSnapshot } from '../src/cluster/snapshot.js';
import { deliverInput } from '../src/workflow/deliver-input.js';
import type { ThreadPoster } from '../src/workflow/deps.js';
import { startSession } from '../src/workflow/session-lifecycle.js';
import { percentile } from './support/stats.js';
import { withDefaultStorageClassFix } from './support/workflow-fixed-cluster.js';

/**
 * What one complete session costs in Step Functions terms (state transitions and Lambda invocations, counted from
 * GetExecutionHistory of the session's executions and the review it started), and how long a thread input takes to
 * be answered on the local stack (from deliverInput to the reply's chat.postMessage).
 */

const SESSIONS = 5;
const READS = 60;

export default async function bench(): Promise<object> {
  const posts: Array<{ at: number; text: string; thread?: string }> = [];
  const wrapPoster = (inner: ThreadPoster): ThreadPoster => ({
    async post(channel, thread, message) {
      const out = await inner.post(channel, thread, message);
      posts.push({ at: performance.now(), text: message.text, ...(thread ? { thread } : {}) });
      return out;
    },
    update: (channel, ts, message) => inner.update(channel, ts, message),
  });
  const objects = parseSnapshot(
    readFileSync(
      new URL('../test/fixtures/snapshots/pvc-binding--no-default-storageclass.yaml', import.meta.url),
      'utf8',
    ),
  );
  const fixed = withDefaultStorageClassFix(objects);
  const stack = await startLocalStack({
    snapshot: { objects },
    logLevel: 'SILENT',
    wrapPoster,
    metrics: { approvalExpired: () => {} },
  });
  const deps = await createWorkflowRuntime(stack.env, {
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics: { approvalExpired: () => {} },
  });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const until = async <T>(probe: () => Promise<T | undefined | false>): Promise<T> => {
    for (let i = 0; i < 4000; i++) {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      await sleep(10);
    }
    throw new Error('bench step timed out');
  };
  const waiting = (sessionId: string) =>
    until(async () => {
      const w = await deps.store.waits.get(sessionId);
      return w && !w.claimedAt ? w : undefined;
    });
  const open = async () => {
    const root = stack.slack?.addUserMessage({
      channel: DEMO_IDS.incidents,
      user: DEMO_IDS.requester,
      text: '/triage pvc pending',
    });
    const threadTs = root?.ts ?? '';
    const started = await startSession(deps, {
      channelId: DEMO_IDS.incidents,
      threadTs,
      requester: DEMO_IDS.requester,
      text: 'pvc stuck pending',
      intent: 'pvc-binding',
      namespace: 'student03',
      cluster: 'default',
      scope: DEMO_SCOPE,
    });
    return { ...started, threadTs };
  };
  const history = async (executionArn: string): Promise<HistoryEvent[]> => {
    const out: HistoryEvent[] = [];
    let nextToken: string | undefined;
    do {
      const page = await stack.sfnClient.send(
        new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, ...(nextToken ? { nextToken } : {}) }),
      );
      out.push(...(page.events ?? []));
      nextToken = page.nextToken;
    } while (nextToken);
    return out;
  };

  try {
    // 1. Cost of complete sessions: triage → read → hypothesis → confirm → plan review → resolved → validated.
    const costs: Array<{ transitions: number; lambdaInvocations: number; executions: number }> = [];
    for (let i = 0; i < SESSIONS; i++) {
      const { sessionId, executionArn } = await open();
      await waiting(sessionId);
      await deliverInput(deps, {
        sessionId,
        userId: DEMO_IDS.requester,
        text: 'kubectl get pvc',
        source: 'message',
        messageKey: `${i}-r`,
      });
      await waiting(sessionId);
      const h = (await deps.artifacts.getWorkflow(sessionId))?.hypotheses[0];
      await deliverInput(deps, {
        sessionId,
        userId: DEMO_IDS.requester,
        text: 'h',
        source: 'button',
        action: { type: 'hypothesis', hypothesisId: h?.id ?? '' },
        messageKey: `${i}-h`,
      });
      await waiting(sessionId);
      await deliverInput(deps, {
        sessionId,
        userId: DEMO_IDS.requester,
        text: 'confirmed',
        source: 'message',
        messageKey: `${i}-c`,
      });
      const pending = await until(() => deps.artifacts.getPending(sessionId, 'plan-review'));
      const decided = await deps.store.approvals.decide(pending.approvalId, 'approved', DEMO_IDS.senior);
      await stack.sfnClient.send(
        new SendTaskSuccessCommand({
          taskToken: decided.token ?? '',
          output: JSON.stringify({ decision: 'approve', userId: DEMO_IDS.senior }),
        }),
      );
      // The plan was applied: "resolved" re-reads the cluster and validates the fix before the incident is stored.
      stack.kube?.setObjects(fixed);
      await waiting(sessionId);
      await deliverInput(deps, {
        sessionId,
        userId: DEMO_IDS.requester,
        text: 'resolved',
        source: 'button',
        action: { type: 'resolved' },
        messageKey: `${i}-z`,
      });
      await until(
        async () => (await stack.sfnClient.send(new DescribeExecutionCommand({ executionArn }))).status === 'SUCCEEDED',
      );
      stack.kube?.setObjects(objects);
      const review = executionArn
        .replace(':execution:calmops-diagnostic:', ':execution:calmops-review:')
        .replace(/-0$/, '-plan-1');
      const events = [...(await history(executionArn)), ...(await history(review))];
      costs.push({
        transitions: events.filter((e) => e.type?.endsWith('StateEntered')).length,
        lambdaInvocations: events.filter(
          (e) => e.type === 'TaskScheduled' && e.taskScheduledEventDetails?.resourceType === 'lambda',
        ).length,
        executions: 2,
      });
    }

    // 2. Input-to-reply latency: a read request answered by its read result, one after another in one session.
    const { sessionId, threadTs } = await open();
    const latencies: number[] = [];
    for (let i = 0; i < READS; i++) {
      await waiting(sessionId);
      const before = posts.filter((p) => p.thread === threadTs && p.text.startsWith('kubectl get pvc')).length;
      const t0 = performance.now();
      await deliverInput(deps, {
        sessionId,
        userId: DEMO_IDS.requester,
        text: 'kubectl get pvc',
        source: 'message',
        messageKey: `lat-${i}`,
      });
      const reply = await until(
        async () => posts.filter((p) => p.thread === threadTs && p.text.startsWith('kubectl get pvc'))[before],
      );
      latencies.push(reply.at - t0);
    }

    const mean = (xs: number[]) => Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10) / 10;
    const result = {
      completeSession: {
        sessions: SESSIONS,
        path: 'triage, memory search, 1 read, 1 hypothesis test, confirm, plan synthesis + automated + human review, resolved, fix validated by a fresh triage, store incident',
        stateTransitionsPerSession: mean(costs.map((c) => c.transitions)),
        lambdaInvocationsPerSession: mean(costs.map((c) => c.lambdaInvocations)),
        executionsPerSession: 2,
      },
      inputToReply: {
        samples: latencies.length,
        p50Ms: Math.round(percentile(latencies, 50)),
        p99Ms: Math.round(percentile(latencies, 99)),
        maxMs: Math.round(Math.max(...latencies)),
      },
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return result;
  } finally {
    await stack.close();
  }
}
