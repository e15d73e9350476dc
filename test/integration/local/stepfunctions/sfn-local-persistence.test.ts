import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  SendTaskSuccessCommand,
  type SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  type LocalStepFunctions,
  type LocalStepFunctionsOptions,
  startLocalStepFunctions,
} from '../../../../local/stepfunctions/index.js';
import { journalFileOf } from '../../../../local/stepfunctions/journal.js';
import { errorNameOf, Inbox, loadAsl, sfnClient, waitFor, waitForClosed } from '../../../support/sfn-local-harness.js';

interface Notification {
  executionArn: string;
  taskToken: string;
  payload: Record<string, unknown>;
}

const NOTIFIER_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:notifier';
const CHILD_ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:child';

const holdDefinition = JSON.stringify({
  StartAt: 'Hold',
  States: {
    Hold: { Type: 'Wait', Seconds: 7200, Next: 'Report' },
    Report: {
      Type: 'Pass',
      Parameters: { 'startTime.$': '$$.Execution.StartTime', 'input.$': '$$.Execution.Input', 'held.$': '$' },
      End: true,
    },
  },
});

const deadlineDefinition = JSON.stringify({
  StartAt: 'HoldOverride',
  States: {
    HoldOverride: { Type: 'Wait', TimestampPath: '$.expiresAt', Next: 'Revoke' },
    Revoke: { Type: 'Pass', Result: { revoked: true }, End: true },
  },
});

const boundedDefinition = JSON.stringify({
  StartAt: 'Hold',
  TimeoutSeconds: 600,
  States: { Hold: { Type: 'Wait', Seconds: 7200, End: true } },
});

/** One "process" of the endpoint: its own handlers, the shared state directory and clock. */
class Generation {
  readonly notifications = new Inbox<Notification>();
  readonly greetings = new Inbox<unknown>();
  readonly errors: unknown[] = [];
  sfn!: LocalStepFunctions;
  client!: SFNClient;

  async start(stateDir: string, clock: () => Date, options: Partial<LocalStepFunctionsOptions> = {}) {
    this.sfn = await startLocalStepFunctions({
      stateDir,
      clock,
      stateMachines: [
        { name: 'approval', definition: loadAsl('approval'), substitutions: { NotifierFunctionArn: NOTIFIER_ARN } },
        { name: 'child', definition: loadAsl('child') },
        { name: 'parent', definition: loadAsl('parent'), substitutions: { ChildStateMachineArn: CHILD_ARN } },
        { name: 'hold', definition: holdDefinition },
        { name: 'bounded', definition: boundedDefinition },
        { name: 'deadline', definition: deadlineDefinition },
      ],
      taskHandlers: {
        notifier: async (payload, context) => {
          this.notifications.push({
            executionArn: context.executionArn,
            taskToken: context.taskToken as string,
            payload: payload as Record<string, unknown>,
          });
          return { posted: true };
        },
        greet: async (payload) => {
          this.greetings.push(payload);
          return { message: `hello ${(payload as { who: string }).who}` };
        },
      },
      onError: (error) => this.errors.push(error),
      ...options,
    });
    this.client = sfnClient(this.sfn.endpoint);
    return this;
  }

  private closing: Promise<void> | undefined;

  close(): Promise<void> {
    this.client?.destroy();
    this.closing ??= this.sfn?.close() ?? Promise.resolve();
    return this.closing;
  }
}

describe('local Step Functions endpoint: persistence across restarts', () => {
  const directories: string[] = [];
  const open: Generation[] = [];
  let offsetMs = 0;
  const clock = () => new Date(Date.now() + offsetMs);

  function stateDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'calmops-sfn-state-'));
    directories.push(dir);
    return dir;
  }

  async function generation(dir: string, options: Partial<LocalStepFunctionsOptions> = {}) {
    const started = await new Generation().start(dir, clock, options);
    open.push(started);
    return started;
  }

  afterEach(async () => {
    offsetMs = 0;
    await Promise.all(open.splice(0).map((item) => item.close()));
  });

  afterAll(() => {
    for (const dir of directories) rmSync(dir, { recursive: true, force: true });
  });

  async function startApproval(current: Generation, name: string, timeoutSeconds = 600) {
    const started = await current.client.send(
      new StartExecutionCommand({
        stateMachineArn: current.sfn.stateMachineArn('approval'),
        name,
        input: JSON.stringify({ request: name, timeoutSeconds }),
      }),
    );
    const executionArn = started.executionArn as string;
    const notification = await current.notifications.find((item) => item.executionArn === executionArn, name);
    return { executionArn, notification };
  }

  async function historyTypes(client: SFNClient, executionArn: string): Promise<string[]> {
    const { events = [] } = await client.send(new GetExecutionHistoryCommand({ executionArn }));
    return events.map((event) => event.type as string);
  }

  it('completes a callback task with the token issued before a graceful restart', async () => {
    const dir = stateDir();
    const first = await generation(dir);
    const { executionArn, notification } = await startApproval(first, 'approve-after-restart');
    const before = await first.client.send(new DescribeExecutionCommand({ executionArn }));
    await first.close();

    const second = await generation(dir);
    const resumed = await second.client.send(new DescribeExecutionCommand({ executionArn }));
    expect(resumed.status).toBe('RUNNING');
    expect(resumed.startDate).toEqual(before.startDate);
    await second.client.send(
      new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: JSON.stringify({ by: 'U42' }) }),
    );
    const done = await waitForClosed(second.client, executionArn);
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output as string)).toEqual({ outcome: 'approved', by: 'U42' });
    // The buttons were posted once, before the restart.
    expect(second.notifications.items).toEqual([]);
    expect(await historyTypes(second.client, executionArn)).toEqual([
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
    const { events = [] } = await second.client.send(new GetExecutionHistoryCommand({ executionArn }));
    expect(events.map((event) => event.id)).toEqual(events.map((_, index) => index + 1));
    expect(
      await errorNameOf(() =>
        second.client.send(new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: '{}' })),
      ),
    ).toBe('TaskTimedOut');
    expect(second.errors).toEqual([]);
  });

  it('serves finished executions, their histories and their closed tokens after a restart', async () => {
    const dir = stateDir();
    const first = await generation(dir);
    const approved = await startApproval(first, 'finished-1');
    await first.client.send(
      new SendTaskSuccessCommand({ taskToken: approved.notification.taskToken, output: '{"by":"a"}' }),
    );
    const started = await first.client.send(
      new StartExecutionCommand({
        stateMachineArn: first.sfn.stateMachineArn('child'),
        name: 'greet-1',
        input: '{"who":"ada"}',
      }),
    );
    const greetArn = started.executionArn as string;
    const described = {
      approval: await waitForClosed(first.client, approved.executionArn),
      greet: await waitForClosed(first.client, greetArn),
    };
    const history = (await first.client.send(new GetExecutionHistoryCommand({ executionArn: approved.executionArn })))
      .events;
    await first.close();

    const second = await generation(dir);
    for (const [arn, before] of [
      [approved.executionArn, described.approval],
      [greetArn, described.greet],
    ] as const) {
      const after = await second.client.send(new DescribeExecutionCommand({ executionArn: arn }));
      const { $metadata: _a, ...afterFields } = after;
      const { $metadata: _b, ...beforeFields } = before;
      expect(afterFields).toEqual(beforeFields);
    }
    expect(
      (await second.client.send(new GetExecutionHistoryCommand({ executionArn: approved.executionArn }))).events,
    ).toEqual(history);
    const listed = await second.client.send(
      new ListExecutionsCommand({ stateMachineArn: second.sfn.stateMachineArn('child') }),
    );
    expect(listed.executions?.map((item) => [item.name, item.status])).toEqual([['greet-1', 'SUCCEEDED']]);
    expect(
      await errorNameOf(() =>
        second.client.send(
          new StartExecutionCommand({
            stateMachineArn: second.sfn.stateMachineArn('child'),
            name: 'greet-1',
            input: '{"who":"ada"}',
          }),
        ),
      ),
    ).toBe('ExecutionAlreadyExists');
    expect(
      await errorNameOf(() =>
        second.client.send(new SendTaskSuccessCommand({ taskToken: approved.notification.taskToken, output: '{}' })),
      ),
    ).toBe('TaskTimedOut');
  });

  it('keeps the journal to the owner and drops closed executions beyond maxExecutions from disk', async () => {
    const dir = stateDir();
    const first = await generation(dir, { maxExecutions: 2 });
    for (const who of ['a', 'b', 'c']) {
      const started = await first.client.send(
        new StartExecutionCommand({
          stateMachineArn: first.sfn.stateMachineArn('child'),
          name: `bounded-${who}`,
          input: JSON.stringify({ who }),
        }),
      );
      await waitForClosed(first.client, started.executionArn as string);
    }
    const files = readdirSync(join(dir, 'executions'));
    expect(files).toHaveLength(2);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'executions')).mode & 0o777).toBe(0o700);
    for (const file of files) expect(statSync(join(dir, 'executions', file)).mode & 0o777).toBe(0o600);
    await first.close();

    const second = await generation(dir, { maxExecutions: 2 });
    const listed = await second.client.send(
      new ListExecutionsCommand({ stateMachineArn: second.sfn.stateMachineArn('child') }),
    );
    expect(listed.executions?.map((item) => item.name)).toEqual(['bounded-c', 'bounded-b']);
  });

  it('resumes a Wait state with only the time left since it was entered, keeping $$.Execution', async () => {
    const dir = stateDir();
    // 7200 s scaled by 0.5: an hour, of which all but 50 ms pass while the endpoint is down.
    const first = await generation(dir, { waitTimeScale: 0.5 });
    const started = await first.client.send(
      new StartExecutionCommand({
        stateMachineArn: first.sfn.stateMachineArn('hold'),
        name: 'hold-1',
        input: '{"session":"s1"}',
      }),
    );
    const executionArn = started.executionArn as string;
    await waitFor(
      async () => ((await historyTypes(first.client, executionArn)).includes('WaitStateEntered') ? true : undefined),
      'the Wait state to be entered',
    );
    await first.close();
    offsetMs += 3_600_000 - 50;

    const second = await generation(dir, { waitTimeScale: 0.5 });
    const done = await waitForClosed(second.client, executionArn);
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output as string)).toEqual({
      startTime: (started.startDate as Date).toISOString(),
      input: { session: 's1' },
      held: { session: 's1' },
    });
    expect(await historyTypes(second.client, executionArn)).toEqual([
      'ExecutionStarted',
      'WaitStateEntered',
      'WaitStateExited',
      'PassStateEntered',
      'PassStateExited',
      'ExecutionSucceeded',
    ]);
  });

  it('ends a Wait until a deadline that passed while the endpoint was down', async () => {
    const dir = stateDir();
    const first = await generation(dir);
    const started = await first.client.send(
      new StartExecutionCommand({
        stateMachineArn: first.sfn.stateMachineArn('deadline'),
        name: 'override-1',
        input: JSON.stringify({ expiresAt: new Date(clock().getTime() + 3_600_000).toISOString() }),
      }),
    );
    const executionArn = started.executionArn as string;
    await waitFor(
      async () => ((await historyTypes(first.client, executionArn)).includes('WaitStateEntered') ? true : undefined),
      'the Wait state to be entered',
    );
    await first.close();
    offsetMs += 3_600_000;

    const second = await generation(dir);
    const done = await waitForClosed(second.client, executionArn);
    expect(JSON.parse(done.output as string)).toEqual({ revoked: true });
  });

  it('keeps an execution stopped before the restart ABORTED', async () => {
    const dir = stateDir();
    const first = await generation(dir);
    const { executionArn, notification } = await startApproval(first, 'stopped-before-restart');
    await first.client.send(new StopExecutionCommand({ executionArn, error: 'Operator', cause: 'not needed' }));
    await waitForClosed(first.client, executionArn);
    await first.close();

    const second = await generation(dir);
    const described = await second.client.send(new DescribeExecutionCommand({ executionArn }));
    expect(described).toMatchObject({ status: 'ABORTED', error: 'Operator', cause: 'not needed' });
    expect((await historyTypes(second.client, executionArn)).at(-1)).toBe('ExecutionAborted');
    expect(
      await errorNameOf(() =>
        second.client.send(new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: '{}' })),
      ),
    ).toBe('TaskTimedOut');
  });

  it('times out an execution whose TimeoutSeconds passed while the endpoint was down', async () => {
    const dir = stateDir();
    const first = await generation(dir);
    const started = await first.client.send(
      new StartExecutionCommand({ stateMachineArn: first.sfn.stateMachineArn('bounded'), name: 'bounded-1' }),
    );
    const executionArn = started.executionArn as string;
    await waitFor(
      async () => ((await historyTypes(first.client, executionArn)).includes('WaitStateEntered') ? true : undefined),
      'the Wait state to be entered',
    );
    await first.close();
    offsetMs += 700_000;

    const second = await generation(dir);
    const done = await waitForClosed(second.client, executionArn);
    expect(done.status).toBe('TIMED_OUT');
    expect((await historyTypes(second.client, executionArn)).at(-1)).toBe('ExecutionTimedOut');
  });

  it('counts a callback timeout from when its token was issued', async () => {
    const dir = stateDir();
    const first = await generation(dir);
    const { executionArn, notification } = await startApproval(first, 'expire-while-down', 600);
    await first.close();
    offsetMs += 601_000;

    const second = await generation(dir);
    const done = await waitForClosed(second.client, executionArn);
    expect(JSON.parse(done.output as string)).toEqual({ outcome: 'expired', error: 'States.Timeout' });
    expect(second.notifications.items).toEqual([]);
    expect(
      await errorNameOf(() =>
        second.client.send(new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: '{}' })),
      ),
    ).toBe('TaskTimedOut');
  });

  it('resumes a .sync:2 parent together with the child it waits for', async () => {
    const dir = stateDir();
    const first = await generation(dir);
    const started = await first.client.send(
      new StartExecutionCommand({
        stateMachineArn: first.sfn.stateMachineArn('parent'),
        name: 'p1',
        input: '{"who":"park"}',
      }),
    );
    const parentArn = started.executionArn as string;
    const parked = await first.notifications.find((item) => item.executionArn.endsWith(':p1-child'), 'the child');
    await first.close();

    const second = await generation(dir);
    expect((await second.client.send(new DescribeExecutionCommand({ executionArn: parked.executionArn }))).status).toBe(
      'RUNNING',
    );
    await second.client.send(
      new SendTaskSuccessCommand({ taskToken: parked.taskToken, output: JSON.stringify({ message: 'unparked' }) }),
    );
    const done = await waitForClosed(second.client, parentArn);
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output as string).child).toEqual({ childMessage: 'unparked', childStatus: 'SUCCEEDED' });
    expect((await waitForClosed(second.client, parked.executionArn)).status).toBe('SUCCEEDED');
    expect(second.notifications.items).toEqual([]);
  });

  it('resumes a .sync:2 parent whose child closed before the parent took up its result', async () => {
    const dir = stateDir();
    const first = await generation(dir);
    await first.client.send(
      new StartExecutionCommand({
        stateMachineArn: first.sfn.stateMachineArn('parent'),
        name: 'p2',
        input: '{"who":"park"}',
      }),
    );
    const parked = await first.notifications.find((item) => item.executionArn.endsWith(':p2-child'), 'the child');
    await first.close();
    // As if the process died right after the child closed, before the parent moved on.
    appendFileSync(
      journalFileOf(dir, parked.executionArn),
      `${JSON.stringify({
        t: 'close',
        status: 'SUCCEEDED',
        stopDate: new Date().toISOString(),
        output: JSON.stringify({ message: 'closed while down' }),
      })}\n`,
    );

    const second = await generation(dir);
    const done = await waitForClosed(second.client, parked.executionArn.replace(':child:p2-child', ':parent:p2'));
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output as string).child).toEqual({
      childMessage: 'closed while down',
      childStatus: 'SUCCEEDED',
    });
  });

  it('starts despite a torn last line and a garbage journal, and reports both', async () => {
    const dir = stateDir();
    const first = await generation(dir);
    const { executionArn, notification } = await startApproval(first, 'torn-1');
    await first.close();
    const journal = journalFileOf(dir, executionArn);
    appendFileSync(journal, '{"t":"event","event":{"id":');
    writeFileSync(join(dir, 'executions', 'garbage.jsonl'), 'not a journal at all\n\u0000\u0001');

    const second = await generation(dir);
    expect(second.errors.map((error) => (error as Error).name)).toEqual([
      'ExecutionJournalError',
      'ExecutionJournalError',
    ]);
    expect(readFileSync(journal, 'utf8').endsWith('}\n')).toBe(true);
    expect(readdirSync(join(dir, 'executions'))).toContain('garbage.jsonl.corrupt');
    await second.client.send(
      new SendTaskSuccessCommand({ taskToken: notification.taskToken, output: JSON.stringify({ by: 'U7' }) }),
    );
    expect(JSON.parse((await waitForClosed(second.client, executionArn)).output as string)).toEqual({
      outcome: 'approved',
      by: 'U7',
    });
  });
});

describe('local Step Functions endpoint: a killed process', () => {
  const CHILD_SCRIPT = fileURLToPath(new URL('../../../support/sfn-local-persistence-child.ts', import.meta.url));
  const directories: string[] = [];
  const processes: ChildProcess[] = [];
  const open: Generation[] = [];

  afterAll(async () => {
    for (const child of processes) if (child.exitCode === null) child.kill('SIGKILL');
    await Promise.all(open.map((item) => item.close()));
    for (const dir of directories) rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the child endpoint, waits for the token its notifier prints, then kills it with SIGKILL. */
  async function tokenFromKilledProcess(dir: string, request: string) {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD_SCRIPT, dir, request], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    processes.push(child);
    const stderr: string[] = [];
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const line = await new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the child exited (${code}) before printing: ${stderr.join('')}`)));
    });
    child.kill('SIGKILL');
    await exited;
    lines.close();
    return JSON.parse(line) as { taskToken: string; executionArn: string };
  }

  it('completes the task of a process killed with SIGKILL, with the token it issued', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'calmops-sfn-killed-'));
    directories.push(dir);
    const posted = await tokenFromKilledProcess(dir, 'posted');

    const next = await new Generation().start(dir, () => new Date());
    open.push(next);
    await next.client.send(
      new SendTaskSuccessCommand({ taskToken: posted.taskToken, output: JSON.stringify({ by: 'after-kill' }) }),
    );
    const done = await waitForClosed(next.client, posted.executionArn);
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output as string)).toEqual({ outcome: 'approved', by: 'after-kill' });
    expect(next.notifications.items).toEqual([]);
  });

  it('invokes a callback resource again with the same token when it had not returned before the kill', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'calmops-sfn-killed-'));
    directories.push(dir);
    const hung = await tokenFromKilledProcess(dir, 'hang');

    const next = await new Generation().start(dir, () => new Date());
    open.push(next);
    const again = await next.notifications.find((item) => item.executionArn === hung.executionArn, 'the new notice');
    expect(again.taskToken).toBe(hung.taskToken);
    await next.client.send(new SendTaskSuccessCommand({ taskToken: hung.taskToken, output: '{"by":"second-try"}' }));
    const done = await waitForClosed(next.client, hung.executionArn);
    expect(JSON.parse(done.output as string)).toEqual({ outcome: 'approved', by: 'second-try' });
  });
});
