import { Logger } from '@aws-lambda-powertools/logger';
import type { SFNClient } from '@aws-sdk/client-sfn';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_ALARM_DESTINATION_WARNING } from '../../../cdk/calmops-stack.js';
import { TABLE_ACCESS } from '../../../cdk/table-access.js';
import { type LocalDynamo, localClientOptions, startLocalDynamo } from '../../../local/dynamodb/index.js';
import { stepFunctionsEngine } from '../../../src/app/step-functions-engine.js';
import { buildWorkflowDeps } from '../../../src/app/workflow-deps.js';
import { ArtifactRepository } from '../../../src/store/artifacts.js';
import { createDocumentClient, createDynamoClient, createStore, ensureTable } from '../../../src/store/index.js';
import { TABLE_DEFINITION } from '../../../src/store/table.js';
import { NOTIFIER_STEPS, runStep } from '../../../src/workflow/dispatch.js';
import { synthesize } from '../../support/cdk-support.js';
import { recordTableCalls, type TableCall, ungranted } from '../../support/cdk-table-calls.js';

/**
 * Each function's DynamoDB grant is what its code calls, and nothing on the index but Query; a deployment without an
 * alarm destination says so. The Slack function's calls are checked against its grant in the Slack integration
 * tests (test/integration/slack/slack-session-scope.test.ts, slack-approvals.test.ts); the notifier's here.
 */

type Json = Record<string, unknown>;
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Json;
}

const base = synthesize({ clusters: 'prod' });
const resources = base.template.toJSON().Resources as Record<string, { Type: string; Properties: Json }>;
const text = (value: unknown) => JSON.stringify(value);

function logicalId(prefix: string, type: string): string {
  const ids = Object.keys(resources).filter((id) => id.startsWith(prefix) && resources[id]!.Type === type);
  if (ids.length !== 1) throw new Error(`expected one ${type} named ${prefix}*, found ${ids.join(', ') || 'none'}`);
  return ids[0]!;
}

const tableId = logicalId('Table', 'AWS::DynamoDB::Table');

/** The DynamoDB statements in the policies of a function's role. */
function tableStatements(fnPrefix: string): Statement[] {
  const roleId = logicalId(`${fnPrefix}Role`, 'AWS::IAM::Role');
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy')
    .filter((r) => (r.Properties['Roles'] as { Ref: string }[]).some((role) => role.Ref === roleId))
    .flatMap((r) => (r.Properties['PolicyDocument'] as { Statement: Statement[] }).Statement)
    .filter((s) => [s.Action].flat().some((a) => a.startsWith('dynamodb:')));
}

const onIndex = (s: Statement) => text(s.Resource).includes('/index/');
const actions = (statements: Statement[]) => [...new Set(statements.flatMap((s) => [s.Action].flat()))].sort();
const sorted = (list: readonly string[]) => [...list].sort();

describe('table grants per function', () => {
  const cases = [
    ['SlackFunction', 'slack'],
    ['NotifierFunction', 'notifier'],
    ['WorkflowFunction', 'workflow'],
  ] as const;

  for (const [fn, name] of cases) {
    it(`${name}: exactly the actions its code calls, on the table itself`, () => {
      const statements = tableStatements(fn).filter((s) => !onIndex(s) && s.Condition === undefined);
      expect(actions(statements)).toEqual(sorted(TABLE_ACCESS[name].table));
      for (const s of statements) expect(s.Resource).toEqual({ 'Fn::GetAtt': [tableId, 'Arn'] });
    });

    it(`${name}: only Query on the index, and only when it lists something`, () => {
      const statements = tableStatements(fn).filter(onIndex);
      if (!TABLE_ACCESS[name].index) {
        expect(statements).toEqual([]);
        return;
      }
      expect(actions(statements)).toEqual(['dynamodb:Query']);
      // Named exactly, not `index/*`.
      expect(statements.map((s) => s.Resource)).toEqual([
        {
          'Fn::Join': [
            '',
            [{ 'Fn::GetAtt': [tableId, 'Arn'] }, `/index/${TABLE_DEFINITION.globalSecondaryIndexes[0].indexName}`],
          ],
        },
      ]);
    });
  }

  it('the Slack and notifier functions hold neither BatchWriteItem nor an unconditional DeleteItem', () => {
    for (const fn of ['SlackFunction', 'NotifierFunction']) {
      const statements = tableStatements(fn);
      expect(actions(statements)).not.toContain('dynamodb:BatchWriteItem');
      expect(actions(statements)).not.toContain('dynamodb:BatchGetItem');
      const deletes = statements.filter((s) => [s.Action].flat().includes('dynamodb:DeleteItem'));
      for (const s of deletes) expect(s.Condition).toBeDefined();
    }
    expect(
      tableStatements('NotifierFunction').filter((s) => [s.Action].flat().includes('dynamodb:DeleteItem')),
    ).toEqual([]);
  });

  it('the Slack function deletes only approval index entries and event marks, by a leading-key condition', () => {
    const deletes = tableStatements('SlackFunction').filter((s) => [s.Action].flat().includes('dynamodb:DeleteItem'));
    expect(deletes).toEqual([
      {
        Effect: 'Allow',
        Action: 'dynamodb:DeleteItem',
        Resource: { 'Fn::GetAtt': [tableId, 'Arn'] },
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['APPROVAL#*', 'DEDUPE#*'] } },
      },
    ]);
  });

  it('no function may Scan, use transactions or ConditionCheckItem, or hold a DynamoDB wildcard', () => {
    const all = ['SlackFunction', 'NotifierFunction', 'WorkflowFunction', 'ClusterReaderFunction'].flatMap((fn) =>
      actions(tableStatements(fn)),
    );
    for (const forbidden of [
      'dynamodb:Scan',
      'dynamodb:ConditionCheckItem',
      'dynamodb:TransactWriteItems',
      'dynamodb:*',
    ]) {
      expect(all).not.toContain(forbidden);
    }
    expect(tableStatements('ClusterReaderFunction')).toEqual([]);
  });
});

describe('alarm destination', () => {
  const warnings = (context: Record<string, unknown>) =>
    Annotations.fromStack(synthesize(context).stack).findWarning('*', Match.stringLikeRegexp('No alarm destination'));

  it('warns at synth when the alarms notify nobody', () => {
    const found = Annotations.fromStack(base.stack).findWarning('*', Match.anyValue());
    expect(found.map((w) => String(w.entry.data))).toEqual([expect.stringContaining(NO_ALARM_DESTINATION_WARNING)]);
    expect(NO_ALARM_DESTINATION_WARNING).toMatch(/alarmEmail.*alarmTopicArn/);
  });

  it('does not warn when an email or a topic is configured', () => {
    expect(warnings({ alarmEmail: 'oncall@example.com' })).toEqual([]);
    expect(warnings({ alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:oncall' })).toEqual([]);
  });
});

describe('the notifier’s real calls stay inside its grant', () => {
  let dynamo: LocalDynamo;
  let calls: TableCall[] = [];
  let run: (payload: Json) => Promise<unknown>;
  let setup: ReturnType<typeof createStore>;
  let sessionId = '';

  beforeAll(async () => {
    dynamo = await startLocalDynamo();
    const options = localClientOptions(dynamo.endpoint);
    const tableName = 'calmops-grants';
    await ensureTable(createDynamoClient(options), tableName);
    setup = createStore({ client: createDocumentClient(options), tableName });
    const recorded = createDynamoClient(options);
    calls = recordTableCalls(recorded);
    let ts = 0;
    const deps = buildWorkflowDeps({
      tableName,
      clients: { dynamo: recorded },
      engine: stepFunctionsEngine({ send: async () => ({}) } as unknown as SFNClient),
      slack: { post: async () => ({ ts: `1700000000.${String(++ts).padStart(6, '0')}` }), update: async () => {} },
      stateMachines: { diagnosticArn: 'arn:d', reviewArn: 'arn:r', breakGlassArn: 'arn:b' },
      timeouts: { idleTimeoutSeconds: 600, approvalTimeoutSeconds: 600 },
      policy: undefined,
      logger: new Logger({ logLevel: 'SILENT' }),
      metrics: { approvalExpired: () => {} },
    });
    run = (payload) => runStep(NOTIFIER_STEPS, deps, { step: 'await', sessionId, ...payload });
    const session = await setup.sessions.create({
      intent: 'pvc-binding',
      namespace: 'payments',
      cluster: 'prod',
      channelId: 'CINCIDENTS',
      threadTs: '1700000000.000001',
      requester: 'UREQUESTER',
    });
    sessionId = session.id;
  });
  afterAll(async () => {
    await dynamo?.close();
  });

  it('waits for input (and delivers what is buffered), plan and post-incident reviews, and break-glass', async () => {
    await setup.inbox.append(sessionId, { kind: 'message', userId: 'UREQUESTER', text: 'kubectl get pods', data: {} });
    expect(await run({ kind: 'input', taskToken: 'token-input' })).toMatchObject({ waiting: true, delivered: true });
    const plan = await buildPlan();
    await run({ kind: 'plan-review', taskToken: 'token-plan', planId: plan, revision: 0 });
    await run({ kind: 'postmortem', taskToken: 'token-postmortem', planId: 'none', requestId: 'bg-1' });
    const request = await setup.approvals.create({
      kind: 'break-glass',
      sessionId,
      allowedDeciders: ['USENIOR'],
      requester: 'UREQUESTER',
      expiresAt: new Date(Date.now() + 600_000),
      data: { phase: 'requested', approverUserId: 'USENIOR', targetState: 'TESTING', timeLimitMinutes: 30 },
    });
    await run({ kind: 'break-glass', taskToken: 'token-break-glass', requestId: request.id });

    const seen = new Set(calls.map((c) => c.action));
    expect(seen).toEqual(new Set(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query']));
    expect(ungranted('notifier', calls)).toEqual([]);
  });

  async function buildPlan(): Promise<string> {
    const artifacts = new ArtifactRepository({
      client: createDocumentClient(localClientOptions(dynamo.endpoint)),
      tableName: 'calmops-grants',
    });
    const record = await artifacts.putPlan(
      { sessionId, kind: 'plan', revision: 0, status: 'needs-human', message: 'No valid plan', feedback: [] },
      new Date(),
    );
    return record.planId;
  }
});
