import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  type SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStepFunctions, startLocalStepFunctions } from '../../../../local/stepfunctions/index.js';
import { errorNameOf, Inbox, loadAsl, sfnClient, waitForClosed } from '../../../support/sfn-local-harness.js';

interface Notification {
  executionArn: string;
  taskToken: string;
  payload: { kind: string; taskToken: string; executionArn: string; request: string };
}

describe('local Step Functions endpoint: callback tasks', () => {
  let sfn: LocalStepFunctions;
  let client: SFNClient;
  const notifications = new Inbox<Notification>();

  beforeAll(async () => {
    sfn = await startLocalStepFunctions({
      stateMachines: [
        {
          name: 'approval',
          definition: loadAsl('approval'),
          substitutions: { NotifierFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:notifier' },
        },
      ],
      taskHandlers: {
        notifier: async (payload, context) => {
          notifications.push({
            executionArn: context.executionArn,
            taskToken: context.taskToken as string,
            payload: payload as Notification['payload'],
          });
          if ((payload as Notification['payload']).request === 'answer-at-once') {
            // A buffered message is delivered by the notifier itself, through the API, before it returns.
            await client.send(
              new SendTaskSuccessCommand({ taskToken: context.taskToken as string, output: '{"by":"inbox"}' }),
            );
          }
          if ((payload as Notification['payload']).request === 'notifier-down') {
            throw Object.assign(new Error('Slack is unreachable'), { name: 'Lambda.ServiceException' });
          }
          return { posted: true };
        },
      },
      // TimeoutSecondsPath values are whole seconds; a tenth of them keeps the timeout tests short.
      callbackTimeoutScale: 0.1,
    });
    client = sfnClient(sfn.endpoint);
  });

  afterAll(async () => {
    client?.destroy();
    await sfn?.close();
  });

  async function startApproval(name: string, timeoutSeconds: number) {
    const started = await client.send(
      new StartExecutionCommand({
        stateMachineArn: sfn.stateMachineArn('approval'),
        name,
        input: JSON.stringify({ request: name, timeoutSeconds }),
      }),
    );
    const executionArn = started.executionArn as string;
    const notification = await notifications.find((item) => item.executionArn === executionArn, `${name} to wait`);
    return { executionArn, notification };
  }

  it('hands the task token to the handler and completes the state on SendTaskSuccess', async () => {
    const { executionArn, notification } = await startApproval('approve-1', 600);
    expect(notification.payload).toEqual({
      kind: 'approval',
      taskToken: notification.taskToken,
      executionArn,
      request: 'approve-1',
    });
    expect(notification.taskToken.length).toBeGreaterThan(20);
    expect((await client.send(new DescribeExecutionCommand({ executionArn }))).status).toBe('RUNNING');

    await client.send(new SendTaskHeartbeatCommand({ taskToken: notification.taskToken }));
    await client.send(
      new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: JSON.stringify({ by: 'U123' }) }),
    );
    const done = await waitForClosed(client, executionArn);
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output as string)).toEqual({ outcome: 'approved', by: 'U123' });

    const { events = [] } = await client.send(new GetExecutionHistoryCommand({ executionArn }));
    const types = events.map((event) => event.type);
    expect(types).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSucceeded',
      'TaskStateExited',
      'PassStateEntered',
      'PassStateExited',
      'ExecutionSucceeded',
    ]);
    expect(events[2]?.taskScheduledEventDetails).toMatchObject({
      resourceType: 'lambda',
      resource: 'invoke.waitForTaskToken',
      region: 'us-east-1',
    });
  });

  it('routes SendTaskFailure to a matching Catch, or fails the execution when nothing catches it', async () => {
    const denied = await startApproval('deny-1', 600);
    await client.send(
      new SendTaskFailureCommand({ taskToken: denied.notification.taskToken, error: 'Denied', cause: 'not now' }),
    );
    const deniedDone = await waitForClosed(client, denied.executionArn);
    expect(deniedDone.status).toBe('SUCCEEDED');
    expect(JSON.parse(deniedDone.output as string)).toEqual({ outcome: 'denied', cause: 'not now' });

    const broken = await startApproval('fail-1', 600);
    await client.send(
      new SendTaskFailureCommand({ taskToken: broken.notification.taskToken, error: 'Notifier.Broken', cause: 'boom' }),
    );
    const brokenDone = await waitForClosed(client, broken.executionArn);
    expect(brokenDone.status).toBe('FAILED');
    expect(brokenDone.error).toBe('Notifier.Broken');
    expect(brokenDone.cause).toBe('boom');
    const { events = [] } = await client.send(new GetExecutionHistoryCommand({ executionArn: broken.executionArn }));
    expect(events.find((event) => event.type === 'TaskFailed')?.taskFailedEventDetails).toMatchObject({
      error: 'Notifier.Broken',
      cause: 'boom',
    });
    expect(events.at(-1)?.type).toBe('ExecutionFailed');
  });

  it('fails a callback task that outlives its timeout with States.Timeout, which a Catch handles', async () => {
    const { executionArn, notification } = await startApproval('expire-1', 2);
    const done = await waitForClosed(client, executionArn);
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output as string)).toEqual({ outcome: 'expired', error: 'States.Timeout' });
    const { events = [] } = await client.send(new GetExecutionHistoryCommand({ executionArn }));
    expect(events.map((event) => event.type)).toContain('TaskTimedOut');

    // The task is closed: a late answer is TaskTimedOut, as Step Functions answers for an expired token.
    expect(
      await errorNameOf(() =>
        client.send(new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: '{"by":"late"}' })),
      ),
    ).toBe('TaskTimedOut');
    expect(
      await errorNameOf(() => client.send(new SendTaskHeartbeatCommand({ taskToken: notification.taskToken }))),
    ).toBe('TaskTimedOut');
  });

  it('answers a token used twice with TaskTimedOut and leaves the first answer in force', async () => {
    const { executionArn, notification } = await startApproval('twice-1', 600);
    await client.send(new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: '{"by":"first"}' }));
    expect(
      await errorNameOf(() =>
        client.send(new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: '{"by":"second"}' })),
      ),
    ).toBe('TaskTimedOut');
    expect(
      await errorNameOf(() =>
        client.send(new SendTaskFailureCommand({ taskToken: notification.taskToken, error: 'Denied' })),
      ),
    ).toBe('TaskTimedOut');
    const done = await waitForClosed(client, executionArn);
    expect(JSON.parse(done.output as string)).toEqual({ outcome: 'approved', by: 'first' });
  });

  it('distinguishes malformed, unknown and invalid-output answers', async () => {
    expect(
      await errorNameOf(() => client.send(new SendTaskSuccessCommand({ taskToken: 'not-a-token', output: '{}' }))),
    ).toBe('InvalidToken');
    const unknownToken = `AQ${'A'.repeat(64)}`;
    expect(
      await errorNameOf(() => client.send(new SendTaskSuccessCommand({ taskToken: unknownToken, output: '{}' }))),
    ).toBe('TaskDoesNotExist');
    expect(await errorNameOf(() => client.send(new SendTaskHeartbeatCommand({ taskToken: unknownToken })))).toBe(
      'TaskDoesNotExist',
    );

    const { executionArn, notification } = await startApproval('bad-output-1', 600);
    expect(
      await errorNameOf(() =>
        client.send(new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: '{oops' })),
      ),
    ).toBe('InvalidOutput');
    // A rejected answer does not consume the token.
    await client.send(new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: '{"by":"retry"}' }));
    expect(JSON.parse((await waitForClosed(client, executionArn)).output as string)).toEqual({
      outcome: 'approved',
      by: 'retry',
    });
  });

  it('closes the token of a stopped execution', async () => {
    const { executionArn, notification } = await startApproval('stopped-1', 600);
    await client.send(new StopExecutionCommand({ executionArn }));
    expect(
      await errorNameOf(() =>
        client.send(new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: '{"by":"late"}' })),
      ),
    ).toBe('TaskTimedOut');
    expect((await client.send(new DescribeExecutionCommand({ executionArn }))).status).toBe('ABORTED');
  });

  it('accepts the answer the handler itself sends before it returns', async () => {
    const { executionArn } = await startApproval('answer-at-once', 600);
    const done = await waitForClosed(client, executionArn);
    expect(JSON.parse(done.output as string)).toEqual({ outcome: 'approved', by: 'inbox' });
  });

  it('fails the callback task when its handler throws, and closes the token it was given', async () => {
    const { executionArn, notification } = await startApproval('notifier-down', 600);
    const done = await waitForClosed(client, executionArn);
    expect(done.status).toBe('FAILED');
    expect(done.error).toBe('Lambda.ServiceException');
    expect(JSON.parse(done.cause as string)).toMatchObject({
      errorType: 'Lambda.ServiceException',
      errorMessage: 'Slack is unreachable',
    });
    expect(
      await errorNameOf(() =>
        client.send(new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: '{}' })),
      ),
    ).toBe('TaskTimedOut');
  });

  it('issues a new token for every callback task', async () => {
    const first = await startApproval('token-a', 600);
    const second = await startApproval('token-b', 600);
    expect(first.notification.taskToken).not.toBe(second.notification.taskToken);
    await client.send(new SendTaskSuccessCommand({ taskToken: second.notification.taskToken, output: '{"by":"b"}' }));
    await client.send(new SendTaskSuccessCommand({ taskToken: first.notification.taskToken, output: '{"by":"a"}' }));
    expect(JSON.parse((await waitForClosed(client, first.executionArn)).output as string).by).toBe('a');
    expect(JSON.parse((await waitForClosed(client, second.executionArn)).output as string).by).toBe('b');
  });
});
