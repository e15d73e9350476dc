import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { StartExecutionCommand } from '@aws-sdk/client-sfn';
import { build } from 'esbuild';
import { lambdaBuildOptions } from '../cdk/bundling.js';
import { FUNCTION_ENTRIES } from '../cdk/calmops-stack.js';
import { localClientOptions, startLocalDynamo } from '../local/dynamodb/index.js';
import { DEMO_IDS, startSlackStandIn } from '../local/slack/index.js';
import { startLocalStepFunctions } from '../local/stepfunctions/index.js';
import { createAwsClients } from '../src/app/aws-clients.js';
import { createSlackDepsFromEnv } from '../src/app/slack-runtime.js';
import type { FunctionHttpRequest } from '../src/http/function-http.js';
import { silentLogger } from '../src/logging/port.js';
import { createSlackHttpHandler, signSlackRequest } from '../src/slack/receiver.js';
import { createDocumentClient, createDynamoClient, createStore, ensureTable } from '../src/store/index.js';
import { percentile } from './support/stats.js';

/**
 * The Slack function's ack latency: 1,000 signed requests of each kind through the real handler (signature check,
 * Bolt, DynamoDB on dynalite, StartExecution / SendTaskSuccess on the local Step Functions endpoint, Web API calls to
 * the stand-in), measured from handing the request over to having the HTTP answer. Slack's budget is 3 s.
 * Then the deployed bundle of functions/slack.ts (cdk/bundling.ts, as the CDK builds it): size and cold import time;
 * bench/bundles.bench.ts does the same for every function.
 */

const N = 1000;
const WARMUP = 20;
const SECRET = 'bench-signing-secret';
const root = fileURLToPath(new URL('..', import.meta.url));

const IDLE_MACHINE = { StartAt: 'Idle', States: { Idle: { Type: 'Pass', End: true } } };
const APPROVAL_MACHINE = {
  StartAt: 'Await',
  States: {
    Await: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
      Parameters: {
        FunctionName: 'bench-notifier',
        Payload: { 'sessionId.$': '$.sessionId', 'taskToken.$': '$$.Task.Token' },
      },
      TimeoutSeconds: 3600,
      End: true,
    },
  },
};

interface Stats {
  requests: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  non2xx: number;
}

function stats(samples: number[], non2xx: number): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    requests: samples.length,
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted[sorted.length - 1] ?? 0),
    meanMs: round(samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length)),
    non2xx,
  };
}

function signed(body: string, contentType: string): FunctionHttpRequest {
  return {
    headers: { 'content-type': contentType, ...signSlackRequest(SECRET, body, Date.now() / 1000) },
    body,
    isBase64Encoded: false,
  };
}

const form = (fields: Record<string, string>) =>
  signed(new URLSearchParams(fields).toString(), 'application/x-www-form-urlencoded');
const json = (payload: object) => signed(JSON.stringify(payload), 'application/json');
const interactive = (payload: object) => form({ payload: JSON.stringify(payload) });

async function ackLatency() {
  process.env['POWERTOOLS_LOG_LEVEL'] = 'ERROR';
  const dynamo = await startLocalDynamo();
  const slack = await startSlackStandIn();
  const dynamoOptions = localClientOptions(dynamo.endpoint);
  const tableName = 'calmops-bench-slack';
  await ensureTable(createDynamoClient(dynamoOptions), tableName);
  const store = createStore({ client: createDocumentClient(dynamoOptions), tableName });

  const approvals: { id: string; sessionId: string }[] = [];
  const sfn = await startLocalStepFunctions({
    stateMachines: [
      { name: 'diagnostic', definition: IDLE_MACHINE },
      { name: 'review', definition: IDLE_MACHINE },
      { name: 'break-glass', definition: IDLE_MACHINE },
      { name: 'bench-approval', definition: APPROVAL_MACHINE },
    ],
    taskHandlers: {
      'bench-notifier': async (input, context) => {
        const { sessionId } = input as { sessionId: string };
        const approval = await store.approvals.create({
          kind: 'handoff',
          sessionId,
          token: context.taskToken,
          allowedDeciders: [DEMO_IDS.requester, DEMO_IDS.senior, DEMO_IDS.engineer],
          requester: DEMO_IDS.requester,
          expiresAt: new Date(Date.now() + 3_600_000),
          summary: 'Consult the storage specialist',
          data: { channelId: DEMO_IDS.incidents },
        });
        approvals.push({ id: approval.id, sessionId });
        return { approvalId: approval.id };
      },
    },
  });

  const env = {
    CALMOPS_TABLE: tableName,
    CALMOPS_DIAGNOSTIC_SM_ARN: sfn.stateMachineArn('diagnostic'),
    CALMOPS_REVIEW_SM_ARN: sfn.stateMachineArn('review'),
    CALMOPS_BREAK_GLASS_SM_ARN: sfn.stateMachineArn('break-glass'),
    SLACK_API_URL: slack.url,
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_BOT_TOKEN: 'xoxb-bench',
    CALMOPS_POLICY_JSON: JSON.stringify({
      defaults: { cluster: 'demo', approverGroup: DEMO_IDS.approvers, seniorGroup: DEMO_IDS.seniors },
      channels: { [DEMO_IDS.incidents]: {} },
    }),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SFN: sfn.endpoint,
  };
  const deps = { ...(await createSlackDepsFromEnv(env)), logger: silentLogger };
  const handle = createSlackHttpHandler(deps);

  let counter = 0;
  const next = () => ++counter;
  const sessionThreads: string[] = [];

  const kinds: Record<string, () => Promise<FunctionHttpRequest>> = {
    'command-help': async () =>
      form({
        command: '/triage',
        text: 'help',
        user_id: DEMO_IDS.requester,
        channel_id: DEMO_IDS.incidents,
        team_id: DEMO_IDS.team,
        trigger_id: `t.${next()}`,
      }),
    'command-invalid-input': async () =>
      form({
        command: '/triage',
        text: 'pods stuck pending in pаyments',
        user_id: DEMO_IDS.requester,
        channel_id: DEMO_IDS.incidents,
        team_id: DEMO_IDS.team,
        trigger_id: `t.${next()}`,
      }),
    'command-start-session': async () =>
      form({
        command: '/triage',
        text: 'pvc-binding -n payments',
        user_id: DEMO_IDS.requester,
        channel_id: DEMO_IDS.incidents,
        team_id: DEMO_IDS.team,
        trigger_id: `t.${next()}`,
      }),
    'mention-start-session': async () => {
      const ts = `1800000000.${String(next()).padStart(6, '0')}`;
      return json({
        type: 'event_callback',
        team_id: DEMO_IDS.team,
        event_id: `Ev${counter}`,
        event: {
          type: 'app_mention',
          user: DEMO_IDS.requester,
          text: `<@${DEMO_IDS.botUser}> crash loop in checkout`,
          ts,
          channel: DEMO_IDS.incidents,
        },
      });
    },
    'thread-message-input': async () => {
      const threadTs = sessionThreads[counter % sessionThreads.length] as string;
      return json({
        type: 'event_callback',
        team_id: DEMO_IDS.team,
        event_id: `Ev${next()}`,
        event: {
          type: 'message',
          channel_type: 'channel',
          user: DEMO_IDS.engineer,
          text: 'show events for pvc data-0',
          ts: `1800000001.${String(counter).padStart(6, '0')}`,
          thread_ts: threadTs,
          channel: DEMO_IDS.incidents,
        },
      });
    },
    'button-approve-handoff': async () => {
      const approval = approvals.shift();
      if (approval === undefined) throw new Error('ran out of pending approvals');
      const posted = await deps.client.chat.postMessage({ channel: DEMO_IDS.incidents, text: 'handoff?' });
      return interactive({
        type: 'block_actions',
        user: { id: DEMO_IDS.engineer, team_id: DEMO_IDS.team },
        team: { id: DEMO_IDS.team },
        channel: { id: DEMO_IDS.incidents },
        container: { type: 'message', channel_id: DEMO_IDS.incidents, message_ts: posted.ts },
        message: { ts: posted.ts, text: 'handoff?', blocks: [] },
        trigger_id: `t.${next()}`,
        actions: [
          {
            type: 'button',
            action_id: 'approval_approve',
            value: approval.id,
            action_ts: `1800000002.${String(counter).padStart(6, '0')}`,
          },
        ],
      });
    },
    'modal-breakglass-rejected': async () => {
      const threadTs = sessionThreads[counter % sessionThreads.length] as string;
      const sessionId = (await store.threads.sessionFor(DEMO_IDS.incidents, threadTs)) as string;
      return interactive({
        type: 'view_submission',
        user: { id: DEMO_IDS.requester, team_id: DEMO_IDS.team },
        team: { id: DEMO_IDS.team },
        view: {
          id: `V${next()}`,
          hash: `h${counter}`,
          type: 'modal',
          callback_id: 'breakglass_request',
          private_metadata: JSON.stringify({ s: sessionId, c: DEMO_IDS.incidents }),
          state: {
            values: {
              justification: {
                value: { type: 'plain_text_input', value: 'Checkout is down for all customers right now' },
              },
              seniorApprover: { value: { type: 'users_select', selected_user: DEMO_IDS.requester } },
              skipToState: { value: { type: 'static_select', selected_option: { value: 'TESTING' } } },
              timeLimitMinutes: { value: { type: 'number_input', value: '30' } },
            },
          },
        },
      });
    },
  };

  const results: Record<string, Stats> = {};
  try {
    for (const [kind, make] of Object.entries(kinds)) {
      if (kind === 'thread-message-input' || kind === 'modal-breakglass-rejected') {
        if (sessionThreads.length === 0) {
          const open = await store.sessions.listOpenByChannel(DEMO_IDS.incidents, { limit: 200 });
          sessionThreads.push(...open.map((s) => s.threadTs).filter((t): t is string => t !== undefined));
        }
      }
      if (kind === 'button-approve-handoff') {
        const { sfn: client } = createAwsClients({ region: 'us-east-1', sfnEndpoint: sfn.endpoint }, env);
        const sessionId = (await store.threads.sessionFor(DEMO_IDS.incidents, sessionThreads[0] as string)) as string;
        for (let i = 0; i < N + WARMUP; i++) {
          await client.send(
            new StartExecutionCommand({
              stateMachineArn: sfn.stateMachineArn('bench-approval'),
              name: `approval-${i}`,
              input: JSON.stringify({ sessionId }),
            }),
          );
        }
        while (approvals.length < N + WARMUP) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const samples: number[] = [];
      let non2xx = 0;
      for (let i = 0; i < N + WARMUP; i++) {
        const request = await make();
        const started = performance.now();
        const response = await handle(request);
        const ms = performance.now() - started;
        if (i >= WARMUP) {
          samples.push(ms);
          if (response.statusCode < 200 || response.statusCode >= 300) non2xx++;
        }
      }
      results[kind] = stats(samples, non2xx);
      process.stdout.write(
        `  ${kind.padEnd(28)} p50 ${results[kind].p50Ms} ms  p99 ${results[kind].p99Ms} ms  max ${results[kind].maxMs} ms\n`,
      );
    }
    const webApiCalls = slack.calls();
    return {
      results,
      webApiCallsRecorded: webApiCalls.length,
      failedWebApiCalls: webApiCalls.filter((c) => c.response['ok'] !== true).length,
    };
  } finally {
    await sfn.close();
    await slack.close();
    await dynamo.close();
  }
}

async function bundle() {
  const dir = await mkdtemp(join(tmpdir(), 'calmops-slack-bundle-'));
  try {
    const outfile = join(dir, 'slack.mjs');
    const started = performance.now();
    await build(lambdaBuildOptions({ projectRoot: root, entry: FUNCTION_ENTRIES.slack, outfile }));
    const buildMs = performance.now() - started;
    const bytes = (await stat(outfile)).size;
    const gzipBytes = gzipSync(await readFile(outfile)).length;
    const imports: number[] = [];
    for (let i = 0; i < 7; i++) {
      const script = `const t = performance.now(); const m = await import(${JSON.stringify(pathToFileURL(outfile).href)}); if (typeof m.handler !== 'function') process.exit(3); process.stdout.write(String(performance.now() - t));`;
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        env: { PATH: process.env['PATH'] ?? '', CALMOPS_TEMPLATES_DIR: join(root, 'templates') },
        encoding: 'utf8',
      });
      if (run.status !== 0) throw new Error(`importing the bundle failed: ${run.stderr}`);
      imports.push(Number(run.stdout));
    }
    imports.sort((a, b) => a - b);
    const round = (n: number) => Math.round(n * 10) / 10;
    return {
      bytes,
      megabytes: round(bytes / 1_048_576),
      gzipBytes,
      buildMs: round(buildMs),
      coldImportMs: {
        median: round(imports[3] ?? 0),
        min: round(imports[0] ?? 0),
        max: round(imports[6] ?? 0),
        runs: imports.length,
      },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export default async function slackBench() {
  const latency = await ackLatency();
  const bundled = await bundle();
  process.stdout.write(
    `  bundle ${bundled.megabytes} MB (${Math.round(bundled.gzipBytes / 1024)} KB gzip), cold import median ${bundled.coldImportMs.median} ms\n`,
  );
  return {
    description:
      'Ack latency of functions/slack.ts through the real handler on the local stack (dynalite, local Step Functions, Slack stand-in), and the deployed bundle (cdk/bundling.ts: esbuild ESM, node24, minified, AWS SDK bundled, Bolt receivers other than AwsLambdaReceiver left out).',
    requestsPerKind: N,
    warmupPerKind: WARMUP,
    ack: latency.results,
    webApiCallsRecorded: latency.webApiCallsRecorded,
    failedWebApiCalls: latency.failedWebApiCalls,
    bundle: bundled,
  };
}
