import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClusterReaderHandler } from '../../../functions/cluster-reader.js';
import { createWorkflowHandler } from '../../../functions/workflow.js';
import { type LocalDynamo, localClientOptions, startLocalDynamo } from '../../../local/dynamodb/index.js';
import { slackCorrelation, stepCorrelation } from '../../../src/app/correlation.js';
import { createSlackFunction } from '../../../src/app/slack-runtime.js';
import type { ClusterReader } from '../../../src/cluster/types.js';
import { ClusterReadError } from '../../../src/cluster/types.js';
import { createDocumentClient, createDynamoClient, createStore, ensureTable } from '../../../src/store/index.js';

/** Every JSON line Powertools writes (stdout and stderr), parsed. */
function captureLogs() {
  const lines: Record<string, unknown>[] = [];
  const grab = (chunk: unknown) => {
    for (const line of String(chunk).split('\n')) {
      if (line.trim().startsWith('{')) {
        try {
          lines.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // Not one of ours.
        }
      }
    }
    return true;
  };
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(grab);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(grab);
  return {
    lines,
    restore() {
      out.mockRestore();
      err.mockRestore();
    },
  };
}

function lambdaContext(requestId: string): Context {
  return {
    awsRequestId: requestId,
    functionName: 'calmops-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:calmops-test',
    memoryLimitInMB: '512',
    logGroupName: '/aws/lambda/calmops-test',
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 10_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

const EXECUTION = 'arn:aws:states:eu-west-1:123456789012:execution:calmops-diagnostic:S1-0';
const ARN = (name: string) => `arn:aws:states:eu-west-1:123456789012:stateMachine:${name}`;

let logs: ReturnType<typeof captureLogs>;
beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => logs.restore());

describe('the cluster reader', () => {
  const emptyCluster = (): ClusterReader => ({
    list: async () => [],
    get: async (query) => {
      if (query.kind === 'namespaces') return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: query.name } };
      throw new ClusterReadError('not found', 'not-found', 404);
    },
    logs: async () => '',
  });
  /** A reader per invocation whose lists answer only once two invocations have both asked: they overlap. */
  const overlappingReaders = () => {
    let readersAsking = 0;
    let bothAsking = () => {};
    const together = new Promise<void>((resolve) => {
      bothAsking = resolve;
    });
    return async (): Promise<ClusterReader> => {
      let asked = false;
      return {
        ...emptyCluster(),
        list: async () => {
          if (!asked) {
            asked = true;
            readersAsking += 1;
            if (readersAsking === 2) bothAsking();
          }
          await together;
          return [];
        },
      };
    };
  };
  const triage = (sessionId: string) => ({
    step: 'triage',
    sessionId,
    namespace: 'payments',
    cluster: 'default',
    scope: ['payments'],
    intent: 'crashloop-analysis',
  });

  it('stamps every line with the session, the step and the Lambda request, and forgets them afterwards', async () => {
    const handler = createClusterReaderHandler(
      { CALMOPS_CLUSTERS: JSON.stringify({ default: { kubeconfigFile: '/unused' } }) },
      { logger: new Logger({ serviceName: 'calmops', logLevel: 'INFO' }), readerFor: async () => emptyCluster() },
    );
    await handler(triage('SESSIONONE'), lambdaContext('req-1'));
    const first = logs.lines.length;
    expect(first).toBeGreaterThan(0);
    for (const line of logs.lines) {
      expect(line).toMatchObject({ sessionId: 'SESSIONONE', invocationStep: 'triage', function_request_id: 'req-1' });
    }
    await handler({ ...triage('SESSIONTWO'), executionArn: EXECUTION }, lambdaContext('req-2'));
    const second = logs.lines.slice(first);
    expect(second.length).toBeGreaterThan(0);
    for (const line of second) {
      expect(line).toMatchObject({ sessionId: 'SESSIONTWO', executionArn: EXECUTION, function_request_id: 'req-2' });
    }
  });

  it('keeps overlapping invocations apart', async () => {
    const handler = createClusterReaderHandler(
      { CALMOPS_CLUSTERS: JSON.stringify({ default: { kubeconfigFile: '/unused' } }) },
      { logger: new Logger({ serviceName: 'calmops', logLevel: 'INFO' }), readerFor: overlappingReaders() },
    );
    await Promise.all([handler(triage('SESSIONA'), lambdaContext('req-a')), handler(triage('SESSIONB'))]);
    const bySession = (id: string) => logs.lines.filter((l) => l['sessionId'] === id);
    expect(bySession('SESSIONA').length).toBeGreaterThan(0);
    expect(bySession('SESSIONB').length).toBe(bySession('SESSIONA').length);
    expect(bySession('SESSIONA').every((l) => l['function_request_id'] === 'req-a')).toBe(true);
    expect(bySession('SESSIONB').some((l) => 'function_request_id' in l)).toBe(false);
    expect(logs.lines.every((l) => typeof l['sessionId'] === 'string')).toBe(true);
  });
});

describe('the workflow function', () => {
  let dynamo: LocalDynamo;
  beforeAll(async () => {
    dynamo = await startLocalDynamo();
    await ensureTable(createDynamoClient(localClientOptions(dynamo.endpoint)), 'calmops-logs');
  });
  afterAll(() => dynamo.close());

  it('stamps the step’s lines with the session and the execution ARN', async () => {
    const store = createStore({
      client: createDocumentClient(localClientOptions(dynamo.endpoint)),
      tableName: 'calmops-logs',
    });
    const session = await store.sessions.create({
      intent: 'crashloop-analysis',
      namespace: 'payments',
      channelId: 'CINCIDENTS',
      threadTs: '1700000000.000100',
      requester: 'UREQ',
      executionArn: EXECUTION,
    });
    const handler = createWorkflowHandler(
      {
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
        CALMOPS_TABLE: 'calmops-logs',
        CALMOPS_DIAGNOSTIC_SM_ARN: ARN('d'),
        CALMOPS_REVIEW_SM_ARN: ARN('r'),
        CALMOPS_BREAK_GLASS_SM_ARN: ARN('b'),
        SLACK_BOT_TOKEN: 'xoxb-test',
        SLACK_SIGNING_SECRET: 'secret',
      },
      {
        logger: new Logger({ serviceName: 'calmops', logLevel: 'INFO' }),
        slack: { post: async () => ({ ts: '1700000000.000200' }), update: async () => {} },
      },
    );
    await handler(
      { step: 'notify-failure', sessionId: session.id, execution: EXECUTION, failure: { Error: 'Boom' } },
      lambdaContext('req-w'),
    );
    const lines = logs.lines.filter((l) => l['message'] === 'step failed' || l['message'] === 'workflow.failed');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).toMatchObject({
        sessionId: session.id,
        executionArn: EXECUTION,
        invocationStep: 'notify-failure',
        function_request_id: 'req-w',
      });
    }
  });
});

describe('the Slack function', () => {
  it('stamps a request’s lines with its Slack event id, and only that request’s', async () => {
    const logger = new Logger({ serviceName: 'calmops-slack', logLevel: 'INFO' });
    const slack = createSlackFunction(
      {
        AWS_REGION: 'eu-west-1',
        CALMOPS_DIAGNOSTIC_SM_ARN: ARN('d'),
        CALMOPS_REVIEW_SM_ARN: ARN('r'),
        CALMOPS_BREAK_GLASS_SM_ARN: ARN('b'),
        SLACK_BOT_TOKEN: 'xoxb-test',
        SLACK_SIGNING_SECRET: 'secret',
      },
      { logger },
    );
    const event = JSON.stringify({ type: 'event_callback', event_id: 'Ev0TESTEVENT1', event: { type: 'app_mention' } });
    // Unsigned, so refused before any handler runs: the refusal's own line is the one to look at.
    const refused = await slack(
      { headers: { 'content-type': 'application/json' }, body: event, isBase64Encoded: false },
      lambdaContext('req-s1'),
    );
    expect(refused.statusCode).toBe(401);
    await slack({ headers: { 'content-type': 'application/json' }, body: '{"type":"event_callback"}' });
    const refusals = logs.lines.filter((l) => l['message'] === 'refused Slack request');
    expect(refusals).toHaveLength(2);
    expect(refusals[0]).toMatchObject({ slackEventId: 'Ev0TESTEVENT1', function_request_id: 'req-s1' });
    expect(refusals[1]).not.toHaveProperty('slackEventId');
  });
});

describe('correlation keys', () => {
  it('take only well-formed ids from a payload', () => {
    expect(stepCorrelation({ step: 'route', sessionId: 'S1', execution: EXECUTION })).toEqual({
      invocationStep: 'route',
      sessionId: 'S1',
      executionArn: EXECUTION,
    });
    expect(stepCorrelation({ sessionId: 'S1\n{"level":"ERROR"}', executionArn: 'not-an-arn' })).toEqual({});
    expect(stepCorrelation('nope')).toEqual({});
    const base64 = Buffer.from('{"event_id":"Ev0ABC123"}').toString('base64');
    expect(slackCorrelation({ body: base64, isBase64Encoded: true })).toEqual({ slackEventId: 'Ev0ABC123' });
    expect(slackCorrelation({ body: 'command=%2Ftriage&text=x' })).toEqual({});
    expect(slackCorrelation({ body: '{"event_id": "<script>"}' })).toEqual({});
  });
});
