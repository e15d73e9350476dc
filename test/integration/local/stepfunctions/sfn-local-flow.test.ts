import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  SendTaskSuccessCommand,
  type SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStepFunctions, startLocalStepFunctions } from '../../../../local/stepfunctions/index.js';
import { Inbox, loadAsl, sfnClient, waitFor, waitForClosed } from '../../../support/sfn-local-harness.js';

class ThrottledError extends Error {
  constructor() {
    super('Rate exceeded');
    this.name = 'Lambda.TooManyRequestsException';
  }
}

describe('local Step Functions endpoint: states, retries and nested executions', () => {
  let sfn: LocalStepFunctions;
  let client: SFNClient;
  const flakyCalls = new Map<string, number>();
  const parked = new Inbox<{ executionArn: string; taskToken: string }>();
  const childArn = () => sfn.stateMachineArn('child');

  beforeAll(async () => {
    const childSubstitution = { ChildStateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:child' };
    sfn = await startLocalStepFunctions({
      stateMachines: [
        { name: 'flow', definition: loadAsl('flow') },
        { name: 'retry', definition: loadAsl('retry') },
        { name: 'child', definition: loadAsl('child') },
        { name: 'parent', definition: loadAsl('parent'), substitutions: childSubstitution },
        { name: 'handshake', definition: loadAsl('handshake'), substitutions: childSubstitution },
        {
          name: 'bounded',
          definition: {
            TimeoutSeconds: 1,
            StartAt: 'Hold',
            States: { Hold: { Type: 'Wait', Seconds: 100_000, End: true } },
          },
        },
        {
          name: 'ghost',
          definition: {
            StartAt: 'CallGhost',
            States: {
              CallGhost: {
                Type: 'Task',
                Resource: 'arn:aws:lambda:us-east-1:000000000000:function:ghost',
                TimeoutSeconds: 5,
                End: true,
              },
            },
          },
        },
      ],
      taskHandlers: {
        greet: async (input) => ({ message: `hello ${(input as { who: string }).who}` }),
        double: async (input) => (input as { value: number }).value * 2,
        sum: async (input) => ({ sum: (input as { values: number[] }).values.reduce((a, b) => a + b, 0) }),
        'arn:aws:lambda:us-east-1:000000000000:function:flaky': async (input) => {
          const { id, failTimes, failWith } = input as { id: string; failTimes: number; failWith?: string };
          const calls = (flakyCalls.get(id) ?? 0) + 1;
          flakyCalls.set(id, calls);
          if (failWith === 'type') throw new TypeError('payload has the wrong shape');
          if (calls <= failTimes) throw new ThrottledError();
          return { calls };
        },
        notifier: async (_input, context) => {
          parked.push({ executionArn: context.executionArn, taskToken: context.taskToken as string });
          return {};
        },
      },
      waitTimeScale: 0.01,
      retryIntervalScale: 0.01,
    });
    client = sfnClient(sfn.endpoint);
  });

  afterAll(async () => {
    client?.destroy();
    await sfn?.close();
  });

  async function run(machine: string, name: string, input: unknown) {
    const started = await client.send(
      new StartExecutionCommand({ stateMachineArn: sfn.stateMachineArn(machine), name, input: JSON.stringify(input) }),
    );
    return waitForClosed(client, started.executionArn as string);
  }

  async function historyTypes(executionArn: string): Promise<string[]> {
    const { events = [] } = await client.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000 }));
    return events.map((event) => event.type as string);
  }

  it('runs Wait, Choice, Map and Parallel states', async () => {
    const done = await run('flow', 'flow-1', { items: [1, 2, 3], mode: 'double', pauseSeconds: 1 });
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output as string)).toEqual({ doubled: [2, 4, 6], sum: 12, count: 3 });
    const types = await historyTypes(done.executionArn as string);
    for (const type of [
      'WaitStateEntered',
      'WaitStateExited',
      'ChoiceStateEntered',
      'MapStateEntered',
      'MapIterationStarted',
      'MapIterationSucceeded',
      'MapStateExited',
      'ParallelStateEntered',
      'ParallelStateExited',
      'ExecutionSucceeded',
    ]) {
      expect(types).toContain(type);
    }
    expect(types.filter((type) => type === 'MapIterationSucceeded')).toHaveLength(3);
    expect(types.filter((type) => type === 'LambdaFunctionSucceeded')).toHaveLength(3);
  });

  it('fails the execution with the error and cause of a Fail state', async () => {
    const done = await run('flow', 'flow-fail', { items: [], mode: 'triple', pauseSeconds: 0 });
    expect(done.status).toBe('FAILED');
    expect(done.error).toBe('UnknownMode');
    expect(done.cause).toBe('mode must be double');
  });

  it('retries a handler error that a retrier matches, then succeeds', async () => {
    const done = await run('retry', 'retry-ok', { id: 'retry-ok', failTimes: 2 });
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output as string)).toEqual({ value: { calls: 3 }, status: 200 });
    expect(flakyCalls.get('retry-ok')).toBe(3);
    const types = await historyTypes(done.executionArn as string);
    expect(types.filter((type) => type === 'TaskScheduled')).toHaveLength(3);
    expect(types.filter((type) => type === 'TaskFailed')).toHaveLength(2);
  });

  it('catches the error once the retries are used up, and does not retry errors no retrier matches', async () => {
    const exhausted = await run('retry', 'retry-exhausted', { id: 'retry-exhausted', failTimes: 10 });
    expect(exhausted.status).toBe('SUCCEEDED');
    expect(JSON.parse(exhausted.output as string)).toEqual({
      fellBack: true,
      error: 'Lambda.TooManyRequestsException',
    });
    expect(flakyCalls.get('retry-exhausted')).toBe(4);

    const wrongShape = await run('retry', 'retry-type', { id: 'retry-type', failTimes: 0, failWith: 'type' });
    expect(JSON.parse(wrongShape.output as string)).toEqual({ fellBack: true, error: 'TypeError' });
    expect(flakyCalls.get('retry-type')).toBe(1);
  });

  it('times out an execution that outlives the TimeoutSeconds of its state machine', async () => {
    const done = await run('bounded', 'bounded-1', {});
    expect(done.status).toBe('TIMED_OUT');
    expect(done.error).toBeUndefined();
    const types = await historyTypes(done.executionArn as string);
    expect(types).toEqual(['ExecutionStarted', 'WaitStateEntered', 'ExecutionTimedOut']);
  });

  it('fails a Task whose Lambda has no local handler with Lambda.ResourceNotFoundException', async () => {
    const done = await run('ghost', 'ghost-1', {});
    expect(done.status).toBe('FAILED');
    expect(done.error).toBe('Lambda.ResourceNotFoundException');
    expect(done.cause).toContain('ghost');
  });

  it('starts a nested execution, waits for it with .sync:2, and starts another without waiting', async () => {
    const done = await run('parent', 'parent-1', { who: 'nested' });
    expect(done.status).toBe('SUCCEEDED');
    const output = JSON.parse(done.output as string);
    expect(output.child).toEqual({ childMessage: 'hello nested', childStatus: 'SUCCEEDED' });
    expect(output.detached.arn).toBe('arn:aws:states:us-east-1:000000000000:execution:child:parent-1-detached');

    const child = await client.send(
      new DescribeExecutionCommand({
        executionArn: 'arn:aws:states:us-east-1:000000000000:execution:child:parent-1-child',
      }),
    );
    expect(child.status).toBe('SUCCEEDED');
    expect(JSON.parse(child.input as string).AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID).toBe(done.executionArn);
    expect((await waitForClosed(client, output.detached.arn)).status).toBe('SUCCEEDED');
  });

  it('fails the .sync task when the nested execution fails', async () => {
    const done = await run('parent', 'parent-fail', { who: 'fail' });
    expect(done.status).toBe('FAILED');
    expect(done.error).toBe('States.TaskFailed');
    expect(JSON.parse(done.cause as string)).toMatchObject({ Status: 'FAILED', Error: 'ChildRefused' });
  });

  it('stops the nested execution a stopped parent was waiting for', async () => {
    const started = await client.send(
      new StartExecutionCommand({
        stateMachineArn: sfn.stateMachineArn('parent'),
        name: 'parent-stop',
        input: JSON.stringify({ who: 'park' }),
      }),
    );
    const childExecutionArn = 'arn:aws:states:us-east-1:000000000000:execution:child:parent-stop-child';
    await parked.find((item) => item.executionArn === childExecutionArn, 'the child to park');
    await client.send(new StopExecutionCommand({ executionArn: started.executionArn }));
    const child = await waitForClosed(client, childExecutionArn);
    expect(child.status).toBe('ABORTED');
  });

  it('waits on startExecution.waitForTaskToken until the started execution’s token is answered', async () => {
    const started = await client.send(
      new StartExecutionCommand({ stateMachineArn: sfn.stateMachineArn('handshake'), name: 'hs-1', input: '{}' }),
    );
    const childExecutionArn = `${childArn().replace(':stateMachine:', ':execution:')}:hs-1-handshake`;
    const child = await waitForClosed(client, childExecutionArn);
    expect(child.status).toBe('SUCCEEDED');
    const { parentToken } = JSON.parse(child.input as string) as { parentToken: string };
    expect((await client.send(new DescribeExecutionCommand({ executionArn: started.executionArn }))).status).toBe(
      'RUNNING',
    );
    await client.send(new SendTaskSuccessCommand({ taskToken: parentToken, output: JSON.stringify({ shook: true }) }));
    const done = await waitForClosed(client, started.executionArn as string);
    expect(JSON.parse(done.output as string)).toEqual({ shook: true });

    const children = await waitFor(async () => {
      const page = await client.send(new ListExecutionsCommand({ stateMachineArn: childArn() }));
      return page.executions?.length ? page.executions : undefined;
    }, 'child executions');
    expect(children.map((execution) => execution.name)).toContain('hs-1-handshake');
  });
});
