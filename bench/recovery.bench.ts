import { readFileSync } from 'node:fs';
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { DEMO_IDS } from '../local/slack/index.js';
import { DEMO_SCOPE, startLocalStack } from '../local/stack.js';
import { stepFunctionsEngine } from '../src/app/step-functions-engine.js';
import { webClientPoster } from '../src/app/thread-poster.js';
import { buildWorkflowDeps } from '../src/app/workflow-deps.js';
import { parseSnapshot } from '../src/cluster/snapshot.js';
import { loadConfig } from '../src/config.js';
import { createSlackClient } from '../src/slack/client.js';
import { reconcile } from '../src/workflow/reconcile.js';
import { startSession } from '../src/workflow/session-lifecycle.js';
import { measureRestart } from './restart.js';

/**
 * What the reconciler costs and what recovery takes:
 * - one run over N healthy open sessions, and one over the same sessions with a fifth of their runs lost, counted
 *   as DynamoDB reads and writes and Step Functions calls (what a run bills every minute in AWS) and timed;
 * - after `kill -9` of the whole local product with sessions waiting, the time from the restart's spawn until every
 *   stuck session has answered a new message (see restart.ts).
 */

const SESSIONS = 20;
const READS = new Set(['GetItem', 'Query', 'BatchGetItem', 'Scan']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);

type Counts = Record<string, number>;

type Stack = { add(middleware: unknown, options: { step: 'initialize'; name: string }): void };

function counted<T extends DynamoDBClient | SFNClient>(client: T, counts: Counts): T {
  (client.middlewareStack as unknown as Stack).add(
    (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
      const name = String(context.commandName ?? '').replace(/Command$/, '');
      counts[name] = (counts[name] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name: 'countCalls' },
  );
  return client;
}

function summarise(dynamo: Counts, sfn: Counts) {
  const sum = (set: Set<string>) => Object.entries(dynamo).reduce((n, [k, v]) => n + (set.has(k) ? v : 0), 0);
  return {
    dynamoReads: sum(READS),
    dynamoWrites: sum(WRITES),
    sfnCalls: Object.values(sfn).reduce((a, b) => a + b, 0),
    dynamo,
    sfn,
  };
}

async function reconcilerCost() {
  const objects = parseSnapshot(
    readFileSync(
      new URL('../test/fixtures/snapshots/pvc-binding--no-default-storageclass.yaml', import.meta.url),
      'utf8',
    ),
  );
  const stack = await startLocalStack({ snapshot: { objects }, logLevel: 'SILENT', reconcileEverySeconds: 0 });
  try {
    const config = loadConfig(stack.env, ['table', 'stateMachines', 'policy', 'timeouts', 'aws']);
    const dynamoCounts: Counts = {};
    const sfnCounts: Counts = {};
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const sfn = counted(new SFNClient({ region: 'us-east-1', endpoint: stack.endpoints.sfn, credentials }), sfnCounts);
    const deps = buildWorkflowDeps({
      tableName: config.table.tableName,
      clients: {
        dynamo: counted(
          new DynamoDBClient({ region: 'us-east-1', endpoint: stack.endpoints.dynamodb, credentials }),
          dynamoCounts,
        ),
      },
      engine: stepFunctionsEngine(sfn),
      slack: webClientPoster(createSlackClient({ token: 'xoxb-local-stand-in', slackApiUrl: stack.endpoints.slack })),
      stateMachines: config.stateMachines,
      timeouts: config.timeouts,
      policy: config.policy.policy,
      logger: new Logger({ logLevel: 'SILENT' }),
      metrics: { approvalExpired: () => {} },
    });
    const sessions = [];
    for (let i = 0; i < SESSIONS; i++) {
      sessions.push(
        await startSession(deps, {
          channelId: DEMO_IDS.incidents,
          threadTs: `1700000000.${String(i).padStart(6, '0')}`,
          requester: DEMO_IDS.requester,
          text: 'pvc stuck pending',
          intent: 'pvc-binding',
          namespace: 'student03',
          cluster: 'default',
          scope: DEMO_SCOPE,
        }),
      );
    }
    const deadline = Date.now() + 120_000;
    for (const s of sessions) {
      while (!(await deps.store.waits.get(s.sessionId)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
    }
    const run = async () => {
      for (const k of Object.keys(dynamoCounts)) delete dynamoCounts[k];
      for (const k of Object.keys(sfnCounts)) delete sfnCounts[k];
      const started = performance.now();
      const report = await reconcile(deps);
      return {
        ms: Math.round(performance.now() - started),
        resumed: report.resumed.length,
        ...summarise({ ...dynamoCounts }, { ...sfnCounts }),
      };
    };
    const healthy = await run();
    const lost = sessions.filter((_, i) => i % 5 === 0);
    for (const s of lost) {
      await sfn.send(new StopExecutionCommand({ executionArn: s.executionArn }));
    }
    const repairing = await run();
    return { sessions: SESSIONS, lost: lost.length, healthy, repairing };
  } finally {
    await stack.close();
  }
}

export default async function bench(): Promise<object> {
  const cost = await reconcilerCost();
  const perSession = (n: number) => Math.round((n / cost.sessions) * 100) / 100;
  process.stdout.write(
    [
      `reconciler, ${cost.sessions} open sessions, nothing to repair: ${cost.healthy.ms} ms, ` +
        `${cost.healthy.dynamoReads} DynamoDB reads (${perSession(cost.healthy.dynamoReads)}/session), ` +
        `${cost.healthy.dynamoWrites} writes, ${cost.healthy.sfnCalls} Step Functions calls`,
      `reconciler, ${cost.lost} of them lost: ${cost.repairing.ms} ms, resumed ${cost.repairing.resumed}, ` +
        `${cost.repairing.dynamoReads} reads, ${cost.repairing.dynamoWrites} writes, ${cost.repairing.sfnCalls} Step Functions calls`,
      '',
    ].join('\n'),
  );
  const restart = await measureRestart();
  return { reconciler: cost, restart };
}
