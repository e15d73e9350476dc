import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  ListStateMachinesCommand,
  type SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStepFunctions, startLocalStepFunctions } from '../../../../local/stepfunctions/index.js';
import { errorNameOf, Inbox, loadAsl, sfnClient, waitFor, waitForClosed } from '../../../support/sfn-local-harness.js';

describe('local Step Functions endpoint: executions', () => {
  let sfn: LocalStepFunctions;
  let client: SFNClient;
  const parked = new Inbox<{ token: string; executionArn: string }>();

  beforeAll(async () => {
    sfn = await startLocalStepFunctions({
      stateMachines: [
        { name: 'greet', definition: loadAsl('greet') },
        {
          name: 'approval',
          definition: loadAsl('approval'),
          substitutions: { NotifierFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:notifier' },
        },
      ],
      taskHandlers: {
        greet: async (input) => ({ message: `hello ${(input as { who: string }).who}` }),
        notifier: async (_input, context) => {
          parked.push({ token: context.taskToken as string, executionArn: context.executionArn });
          return { posted: true };
        },
      },
    });
    client = sfnClient(sfn.endpoint);
  });

  afterAll(async () => {
    client?.destroy();
    await sfn?.close();
  });

  it('runs an execution to success and describes it', async () => {
    const stateMachineArn = sfn.stateMachineArn('greet');
    const started = await client.send(
      new StartExecutionCommand({ stateMachineArn, name: 'greet-1', input: JSON.stringify({ who: 'on-call' }) }),
    );
    expect(started.executionArn).toBe('arn:aws:states:us-east-1:000000000000:execution:greet:greet-1');
    expect(started.startDate).toBeInstanceOf(Date);

    const done = await waitForClosed(client, started.executionArn as string);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.stateMachineArn).toBe(stateMachineArn);
    expect(JSON.parse(done.input as string)).toEqual({ who: 'on-call' });
    expect(JSON.parse(done.output as string)).toEqual({ message: 'hello on-call', executionName: 'greet-1' });
    expect(done.stopDate).toBeInstanceOf(Date);
    expect(done.error).toBeUndefined();
  });

  it('treats a repeated start with the same name and input as the same open execution', async () => {
    const stateMachineArn = sfn.stateMachineArn('approval');
    const input = JSON.stringify({ request: 'idempotent', timeoutSeconds: 60 });
    const first = await client.send(new StartExecutionCommand({ stateMachineArn, name: 'same-name', input }));
    const again = await client.send(new StartExecutionCommand({ stateMachineArn, name: 'same-name', input }));
    expect(again.executionArn).toBe(first.executionArn);
    expect(again.startDate?.getTime()).toBe(first.startDate?.getTime());

    const differentInput = JSON.stringify({ request: 'other', timeoutSeconds: 60 });
    expect(
      await errorNameOf(() =>
        client.send(new StartExecutionCommand({ stateMachineArn, name: 'same-name', input: differentInput })),
      ),
    ).toBe('ExecutionAlreadyExists');

    await client.send(new StopExecutionCommand({ executionArn: first.executionArn }));
    // Once closed, the name is taken whatever the input.
    expect(
      await errorNameOf(() => client.send(new StartExecutionCommand({ stateMachineArn, name: 'same-name', input }))),
    ).toBe('ExecutionAlreadyExists');
  });

  it('answers bad requests with the Step Functions error codes', async () => {
    const missingMachine = 'arn:aws:states:us-east-1:000000000000:stateMachine:nope';
    expect(await errorNameOf(() => client.send(new StartExecutionCommand({ stateMachineArn: missingMachine })))).toBe(
      'StateMachineDoesNotExist',
    );
    expect(
      await errorNameOf(() =>
        client.send(
          new DescribeExecutionCommand({ executionArn: 'arn:aws:states:us-east-1:000000000000:execution:greet:none' }),
        ),
      ),
    ).toBe('ExecutionDoesNotExist');
    expect(
      await errorNameOf(() =>
        client.send(new StartExecutionCommand({ stateMachineArn: sfn.stateMachineArn('greet'), name: 'has space' })),
      ),
    ).toBe('InvalidName');
    expect(
      await errorNameOf(() =>
        client.send(new StartExecutionCommand({ stateMachineArn: sfn.stateMachineArn('greet'), input: '{not json' })),
      ),
    ).toBe('InvalidExecutionInput');
    expect(await errorNameOf(() => client.send(new DescribeExecutionCommand({ executionArn: 'not-an-arn' })))).toBe(
      'InvalidArn',
    );
    expect(await errorNameOf(() => client.send(new DescribeExecutionCommand({} as { executionArn: string })))).toBe(
      'ValidationException',
    );
  });

  it('stops a running execution and reports it as ABORTED with the given error and cause', async () => {
    const started = await client.send(
      new StartExecutionCommand({
        stateMachineArn: sfn.stateMachineArn('approval'),
        name: 'to-stop',
        input: JSON.stringify({ request: 'stop me', timeoutSeconds: 600 }),
      }),
    );
    await parked.find((item) => item.executionArn === started.executionArn, 'the callback task to start');
    const stopped = await client.send(
      new StopExecutionCommand({
        executionArn: started.executionArn,
        error: 'Operator.Stop',
        cause: 'no longer needed',
      }),
    );
    expect(stopped.stopDate).toBeInstanceOf(Date);
    const description = await client.send(new DescribeExecutionCommand({ executionArn: started.executionArn }));
    expect(description.status).toBe('ABORTED');
    expect(description.error).toBe('Operator.Stop');
    expect(description.cause).toBe('no longer needed');

    const history = await waitFor(async () => {
      const page = await client.send(new GetExecutionHistoryCommand({ executionArn: started.executionArn }));
      return page.events?.some((event) => event.type === 'ExecutionAborted') ? page : undefined;
    }, 'the ExecutionAborted event');
    const aborted = history.events?.find((event) => event.type === 'ExecutionAborted');
    expect(aborted?.executionAbortedEventDetails).toEqual({ error: 'Operator.Stop', cause: 'no longer needed' });
  });

  it('lists executions newest first, filtered by status and paginated', async () => {
    const stateMachineArn = sfn.stateMachineArn('greet');
    const names = ['list-a', 'list-b', 'list-c'];
    for (const name of names) {
      const started = await client.send(
        new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify({ who: name }) }),
      );
      await waitForClosed(client, started.executionArn as string);
    }
    const seen: string[] = [];
    let nextToken: string | undefined;
    do {
      const page = await client.send(
        new ListExecutionsCommand({ stateMachineArn, statusFilter: 'SUCCEEDED', maxResults: 2, nextToken }),
      );
      expect(page.executions?.length).toBeLessThanOrEqual(2);
      for (const execution of page.executions ?? []) {
        expect(execution.status).toBe('SUCCEEDED');
        expect(execution.stateMachineArn).toBe(stateMachineArn);
        seen.push(execution.name as string);
      }
      nextToken = page.nextToken;
    } while (nextToken);
    expect(seen.slice(0, 3)).toEqual(['list-c', 'list-b', 'list-a']);
    expect(new Set(seen).size).toBe(seen.length);

    const running = await client.send(new ListExecutionsCommand({ stateMachineArn, statusFilter: 'RUNNING' }));
    expect(running.executions).toEqual([]);
    expect(
      await errorNameOf(() => client.send(new ListExecutionsCommand({ stateMachineArn, nextToken: 'garbage' }))),
    ).toBe('InvalidToken');
  });

  it('returns the execution history in order, reversed, paginated and without data on request', async () => {
    const started = await client.send(
      new StartExecutionCommand({
        stateMachineArn: sfn.stateMachineArn('greet'),
        name: 'history-1',
        input: JSON.stringify({ who: 'history' }),
      }),
    );
    await waitForClosed(client, started.executionArn as string);
    const executionArn = started.executionArn as string;
    const { events = [] } = await client.send(new GetExecutionHistoryCommand({ executionArn }));
    expect(events.map((event) => event.type)).toEqual([
      'ExecutionStarted',
      'TaskStateEntered',
      'LambdaFunctionScheduled',
      'LambdaFunctionStarted',
      'LambdaFunctionSucceeded',
      'TaskStateExited',
      'PassStateEntered',
      'PassStateExited',
      'SucceedStateEntered',
      'SucceedStateExited',
      'ExecutionSucceeded',
    ]);
    expect(events.map((event) => event.id)).toEqual(events.map((_, index) => index + 1));
    expect(events[0]?.timestamp).toBeInstanceOf(Date);
    expect(JSON.parse(events[0]?.executionStartedEventDetails?.input as string)).toEqual({ who: 'history' });
    expect(events[1]?.stateEnteredEventDetails?.name).toBe('Greet');
    expect(events[2]?.lambdaFunctionScheduledEventDetails).toMatchObject({
      resource: 'arn:aws:lambda:us-east-1:000000000000:function:greet',
      timeoutInSeconds: 10,
    });
    expect(JSON.parse(events.at(-1)?.executionSucceededEventDetails?.output as string)).toEqual({
      message: 'hello history',
      executionName: 'history-1',
    });

    const reversed = await client.send(new GetExecutionHistoryCommand({ executionArn, reverseOrder: true }));
    expect(reversed.events?.map((event) => event.id)).toEqual(events.map((event) => event.id).reverse());

    const pagedIds: number[] = [];
    let nextToken: string | undefined;
    do {
      const page = await client.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 4, nextToken }));
      pagedIds.push(...(page.events ?? []).map((event) => event.id as number));
      nextToken = page.nextToken;
    } while (nextToken);
    expect(pagedIds).toEqual(events.map((event) => event.id));

    const withoutData = await client.send(
      new GetExecutionHistoryCommand({ executionArn, includeExecutionData: false }),
    );
    expect(withoutData.events?.[0]?.executionStartedEventDetails?.input).toBeUndefined();
    expect(withoutData.events?.[1]?.stateEnteredEventDetails?.name).toBe('Greet');
  });

  it('registers state machines through CreateStateMachine, idempotently, and refuses invalid ones', async () => {
    const definition = loadAsl('greet');
    const roleArn = 'arn:aws:iam::000000000000:role/states';
    const created = await client.send(new CreateStateMachineCommand({ name: 'greet-api', definition, roleArn }));
    expect(created.stateMachineArn).toBe(sfn.stateMachineArn('greet-api'));
    const again = await client.send(new CreateStateMachineCommand({ name: 'greet-api', definition, roleArn }));
    expect(again.stateMachineArn).toBe(created.stateMachineArn);
    expect(again.creationDate?.getTime()).toBe(created.creationDate?.getTime());

    const other = JSON.stringify({ StartAt: 'P', States: { P: { Type: 'Pass', End: true } } });
    expect(
      await errorNameOf(() =>
        client.send(new CreateStateMachineCommand({ name: 'greet-api', definition: other, roleArn })),
      ),
    ).toBe('StateMachineAlreadyExists');
    expect(
      await errorNameOf(() =>
        client.send(
          new CreateStateMachineCommand({
            name: 'broken',
            definition: JSON.stringify({ StartAt: 'Missing', States: { P: { Type: 'Pass', End: true } } }),
            roleArn,
          }),
        ),
      ),
    ).toBe('InvalidDefinition');

    const described = await client.send(new DescribeStateMachineCommand({ stateMachineArn: created.stateMachineArn }));
    expect(described).toMatchObject({ name: 'greet-api', status: 'ACTIVE', type: 'STANDARD', roleArn });
    expect(JSON.parse(described.definition as string)).toEqual(JSON.parse(definition));

    const listed = await client.send(new ListStateMachinesCommand({}));
    expect(listed.stateMachines?.map((machine) => machine.name)).toEqual(
      expect.arrayContaining(['greet', 'approval', 'greet-api']),
    );

    const run = await client.send(
      new StartExecutionCommand({ stateMachineArn: created.stateMachineArn, input: JSON.stringify({ who: 'api' }) }),
    );
    expect((await waitForClosed(client, run.executionArn as string)).status).toBe('SUCCEEDED');
  });
});

describe('local Step Functions endpoint: memory bounds and clock', () => {
  it('keeps at most maxExecutions closed executions and reports dates from the given clock', async () => {
    const fixed = new Date('2030-01-02T03:04:05.000Z');
    const sfn = await startLocalStepFunctions({
      stateMachines: [{ name: 'greet', definition: loadAsl('greet') }],
      taskHandlers: { greet: async () => ({ message: 'hi' }) },
      maxExecutions: 2,
      clock: () => fixed,
    });
    const client = sfnClient(sfn.endpoint);
    try {
      const arns: string[] = [];
      for (const name of ['keep-1', 'keep-2', 'keep-3']) {
        const started = await client.send(
          new StartExecutionCommand({ stateMachineArn: sfn.stateMachineArn('greet'), name }),
        );
        expect(started.startDate?.toISOString()).toBe(fixed.toISOString());
        await waitForClosed(client, started.executionArn as string);
        arns.push(started.executionArn as string);
      }
      expect(await errorNameOf(() => client.send(new DescribeExecutionCommand({ executionArn: arns[0] })))).toBe(
        'ExecutionDoesNotExist',
      );
      const kept = await client.send(new ListExecutionsCommand({ stateMachineArn: sfn.stateMachineArn('greet') }));
      expect(kept.executions?.map((execution) => execution.name)).toEqual(['keep-3', 'keep-2']);
      const { events = [] } = await client.send(new GetExecutionHistoryCommand({ executionArn: arns[2] }));
      expect(events.every((event) => event.timestamp?.getTime() === fixed.getTime())).toBe(true);
    } finally {
      client.destroy();
      await sfn.close();
    }
  });
});
