import './polyfill.js';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ExecutionTimeoutError, type RunOptions } from 'aws-local-stepfunctions';
import { type AccountScope, assertValidName, executionArnOf, parseStateMachineArn } from './arn.js';
import { RESUME_STATE_NAME, resumedMachine, type ValidatedDefinitions } from './definition.js';
import { type EngineErrorClasses, engineErrorClasses } from './engine-errors.js';
import { ExecutionJournalError, SfnServiceError } from './errors.js';
import { journalClose, journalStart, journalTokenClosed } from './execution-journaling.js';
import { restoreExecutions } from './execution-restore.js';
import {
  createRuntime,
  type ExecutionRecord,
  type ExecutionRuntime,
  type ExecutionStatus,
  elapsedMs,
  type RecordFields,
  type RegisteredStateMachine,
  type RuntimeOptions,
  recordOutcome,
} from './execution-runtime.js';
import { ExecutionStore } from './execution-store.js';
import type { EngineEvent } from './history.js';
import { ExecutionJournal, journalFileOf, prepareStateDir } from './journal.js';
import { type NestedExecutionHost, startNested } from './nested-execution.js';
import { prepareRegistration, type StateMachineRegistration } from './state-machine-registration.js';
import { type TaskHandler, TaskRunner, toJson } from './task-runner.js';
import { TaskTokenRegistry } from './tokens.js';
import { runWait } from './wait-state.js';

export type { ExecutionRecord, ExecutionStatus, RegisteredStateMachine } from './execution-runtime.js';
export type { StateMachineRegistration } from './state-machine-registration.js';
export type { TaskHandler } from './task-runner.js';

export interface EngineOptions extends AccountScope {
  /** Keyed by Lambda function ARN, function name, or the exact Resource of any other Task. */
  taskHandlers: Readonly<Record<string, TaskHandler>>;
  clock: () => Date;
  waitTimeScale: number;
  callbackTimeoutScale: number;
  retryIntervalScale: number;
  maxExecutions: number;
  maxHistoryEvents: number;
  validated: ValidatedDefinitions;
  /**
   * Where executions are journaled so that they survive a restart (see restore()); without it they live in
   * memory only.
   */
  stateDir?: string;
  /** Receives journal problems (unwritable files, torn or unreadable journals). */
  onError?: (error: unknown) => void;
}

type LocalHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;

/**
 * Runs Amazon States Language executions with aws-local-stepfunctions and keeps what the Step Functions API
 * reports about them (status, output, history, task tokens) in memory. Task states run through TaskRunner, Wait
 * states through runWait; this class owns the executions' lifecycle and the API actions.
 */
export class LocalStepFunctionsEngine {
  private readonly stateMachines = new Map<string, RegisteredStateMachine>();
  private readonly executions = new ExecutionStore();
  private readonly tokens = new TaskTokenRegistry({
    onClose: (token, entry, status, answer) =>
      journalTokenClosed(this.executions.get(entry.executionArn)?.journal, token, status, answer),
  });
  private readonly tasks: TaskRunner;
  private sequence = 0;
  private closed = false;

  private constructor(
    private readonly options: EngineOptions,
    private readonly errors: EngineErrorClasses,
  ) {
    if (options.stateDir !== undefined) prepareStateDir(options.stateDir);
    const nested: NestedExecutionHost = {
      errors,
      executions: this.executions,
      startExecution: (request) => this.startExecution(request),
      stop: (runtime, error, cause) => this.stop(runtime, error, cause),
    };
    this.tasks = new TaskRunner({
      taskHandlers: options.taskHandlers,
      callbackTimeoutScale: options.callbackTimeoutScale,
      clock: () => this.now(),
      errors,
      tokens: this.tokens,
      startNested: (...task) => startNested(nested, ...task),
    });
  }

  static async create(options: EngineOptions): Promise<LocalStepFunctionsEngine> {
    return new LocalStepFunctionsEngine(options, await engineErrorClasses());
  }

  get scope(): AccountScope {
    return { region: this.options.region, accountId: this.options.accountId };
  }

  private now(): Date {
    return this.options.clock();
  }

  private report(error: unknown): void {
    this.options.onError?.(error);
  }

  // ---------------------------------------------------------------------------------------------- state machines

  /**
   * CreateStateMachine semantics: registering the same name with the same definition and role returns the
   * existing state machine; anything else under a taken name is StateMachineAlreadyExists.
   */
  registerStateMachine(registration: StateMachineRegistration): RegisteredStateMachine {
    const { arn, roleArn, prepared } = prepareRegistration(registration, this.options);
    const existing = this.stateMachines.get(arn);
    if (existing) {
      if (existing.prepared.definitionText === prepared.definitionText && existing.roleArn === roleArn) {
        return existing;
      }
      throw new SfnServiceError('StateMachineAlreadyExists', `State Machine Already Exists: '${arn}'`);
    }
    const registered: RegisteredStateMachine = {
      name: registration.name,
      arn,
      roleArn,
      creationDate: this.now(),
      prepared,
    };
    this.stateMachines.set(arn, registered);
    this.executions.addStateMachine(arn);
    return registered;
  }

  describeStateMachine(stateMachineArn: string): RegisteredStateMachine {
    parseStateMachineArn(stateMachineArn);
    const machine = this.stateMachines.get(stateMachineArn);
    if (!machine) {
      throw new SfnServiceError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${stateMachineArn}'`);
    }
    return machine;
  }

  listStateMachines(): RegisteredStateMachine[] {
    return [...this.stateMachines.values()];
  }

  // -------------------------------------------------------------------------------------------------- executions

  /**
   * Loads the executions journaled under `stateDir` by an earlier process. Call it once, after the state machines
   * are registered. Closed executions are served as they were; running ones are resumed from the top-level state
   * they were in. Journals that cannot be read, or whose state machine is not registered, are reported to
   * `onError` and left out.
   */
  restore(): void {
    const stateDir = this.options.stateDir;
    if (stateDir === undefined) return;
    const { resumed, lastSeq } = restoreExecutions(
      {
        scope: this.scope,
        stateMachines: this.stateMachines,
        executions: this.executions,
        tokens: this.tokens,
        runtimeOptions: this.runtimeOptions(),
        report: (error) => this.report(error),
      },
      stateDir,
    );
    this.sequence = Math.max(this.sequence, lastSeq);
    this.evictClosedExecutions();
    // Every execution is known before any resumes, so a parent finds the child it waits for.
    for (const runtime of resumed) this.run(runtime);
  }

  /**
   * StartExecution semantics: a name already used by an open execution with the identical input returns that
   * execution; a different input, or a closed execution, is ExecutionAlreadyExists.
   */
  startExecution(request: { stateMachineArn: string; name?: string; input?: string }): ExecutionRecord {
    if (this.closed) {
      throw new SfnServiceError('ValidationException', 'The local Step Functions endpoint is shutting down');
    }
    const machine = this.describeStateMachine(request.stateMachineArn);
    const name = request.name ?? randomUUID();
    assertValidName(name, 'execution');
    const input = request.input ?? '{}';
    try {
      JSON.parse(input);
    } catch (error) {
      throw new SfnServiceError('InvalidExecutionInput', `Invalid State Machine Execution Input: '${error}'`, {
        cause: error,
      });
    }
    const existing = this.executions.named(machine.arn, name);
    if (existing) {
      if (existing.record.status === 'RUNNING' && existing.record.input === input) {
        return existing.record;
      }
      throw new SfnServiceError('ExecutionAlreadyExists', `Execution Already Exists: '${existing.record.arn}'`);
    }
    const runtime = this.launch(machine, name, input);
    this.executions.add(runtime);
    return runtime.record;
  }

  private runtimeOptions(): RuntimeOptions {
    const { maxHistoryEvents, region } = this.options;
    return { maxHistoryEvents, region, now: () => this.now() };
  }

  private openJournal(file: string): ExecutionJournal {
    return new ExecutionJournal(file, (error) => this.report(error));
  }

  private launch(machine: RegisteredStateMachine, name: string, input: string): ExecutionRuntime {
    const arn = executionArnOf(this.scope, machine.name, name);
    const startDate = this.now();
    const seq = ++this.sequence;
    const fields: RecordFields = { seq, arn, name, input, startDate, status: 'RUNNING' };
    const runtime = createRuntime(machine, fields, this.runtimeOptions());
    if (this.options.stateDir !== undefined) {
      const file = journalFileOf(this.options.stateDir, arn);
      if (existsSync(file)) {
        // Left on disk by a start that could not load it (its state machine was not registered then).
        this.report(new ExecutionJournalError(`Replaced the journal of an earlier execution ${arn}`, file));
        this.openJournal(file).remove();
      }
      runtime.journal = this.openJournal(file);
      journalStart(runtime.journal, runtime.record);
    }
    this.run(runtime);
    return runtime;
  }

  /** Runs an execution from its start, or from its resume plan after a restart. */
  private run(runtime: ExecutionRuntime): void {
    const { record } = runtime;
    const machine = record.stateMachine;
    const plan = runtime.resume;
    let stateMachine = machine.prepared.machine;
    if (plan) {
      const timeoutSeconds =
        machine.prepared.timeoutSeconds === undefined
          ? undefined
          : machine.prepared.timeoutSeconds - elapsedMs(() => this.now(), record.startDate) / 1000;
      if (timeoutSeconds !== undefined && timeoutSeconds <= 0) {
        record.history.ingest({ type: 'ExecutionTimeout' });
        this.finish(runtime, { status: 'rejected', reason: new ExecutionTimeoutError() });
        return;
      }
      try {
        stateMachine = resumedMachine(machine.prepared, plan.stateName, timeoutSeconds);
      } catch (error) {
        // The definition changed since the restart and no longer has the state this execution was in.
        const failure = this.errors.createRuntime(`Cannot resume the execution: ${(error as Error).message}`);
        record.history.ingest({ type: 'ExecutionFailed', Error: failure.name, Cause: failure.message });
        this.finish(runtime, { status: 'rejected', reason: failure });
        return;
      }
    }
    const run = stateMachine.run(JSON.parse(record.input), {
      overrides: { taskResourceLocalHandlers: this.bindHandlers(runtime) },
      context: {
        Execution: {
          Id: record.arn,
          Name: record.name,
          RoleArn: machine.roleArn,
          StartTime: record.startDate.toISOString(),
          RedriveCount: 0,
        },
        StateMachine: { Id: machine.arn, Name: machine.name },
        // Each callback task replaces this placeholder with the token it issues.
        Task: { Token: this.tasks.tokenPlaceholder },
      },
    });
    runtime.abortRun = run.abort;
    const historyDone = (async () => {
      for await (const event of run.eventLogs) {
        this.ingest(runtime, event as unknown as EngineEvent);
      }
    })();
    record.done = Promise.allSettled([run.result, historyDone]).then(([result]) => {
      this.finish(runtime, result);
    });
  }

  /** Adds an engine event to the history and journals the top-level states entered and exited. */
  private ingest(runtime: ExecutionRuntime, event: EngineEvent): void {
    if (runtime.suspended) return;
    const { record, resume: plan } = runtime;
    const name = event.state?.name;
    if (plan) {
      // The resumed run starts again: its start, and the step that hands over the input, happened already.
      if (event.type === 'ExecutionStarted' && record.history.events.length > 0) return;
      if (name === RESUME_STATE_NAME) return;
      if (plan.skipEntered && event.type === 'StateEntered' && name === plan.stateName) {
        plan.skipEntered = false;
        return;
      }
    }
    record.history.ingest(event);
    const journal = runtime.journal;
    if (!journal || name === undefined || !record.stateMachine.prepared.topLevel.has(name)) return;
    if (event.type === 'StateEntered') {
      journal.append({ t: 'entered', state: name, input: event.state?.input ?? null, at: this.now().toISOString() });
    } else if (event.type === 'StateExited') {
      journal.append({ t: 'exited', state: name, output: event.state?.output ?? null, at: this.now().toISOString() });
    }
  }

  private bindHandlers(runtime: ExecutionRuntime): LocalHandlers {
    const handlers: LocalHandlers = {};
    const waitOptions = { clock: () => this.now(), waitTimeScale: this.options.waitTimeScale, errors: this.errors };
    for (const info of runtime.record.stateMachine.prepared.runnable.values()) {
      handlers[info.stateName] =
        info.kind === 'wait'
          ? async (raw) => (await runWait(waitOptions, runtime, info, raw)) as never
          : async (raw) => (await this.tasks.runTask(runtime, info, raw)) as never;
    }
    const plan = runtime.resume;
    if (plan) {
      const startTime = runtime.record.startDate.toISOString();
      handlers[RESUME_STATE_NAME] = async (raw) => {
        // The engine stamps $$.Execution.StartTime when a run starts; a resumed execution keeps its own.
        const execution = (raw as { execution?: unknown } | null)?.execution;
        if (execution !== null && typeof execution === 'object') {
          (execution as Record<string, unknown>).StartTime = startTime;
        }
        return toJson(plan.input) as never;
      };
    }
    return handlers;
  }

  private finish(runtime: ExecutionRuntime, result: PromiseSettledResult<unknown>): void {
    const record = runtime.record;
    runtime.finished = true;
    if (runtime.suspended) {
      runtime.controller.abort();
      return;
    }
    if (record.status === 'RUNNING') {
      recordOutcome(record, result, this.now());
      journalClose(runtime, () => this.now());
    }
    runtime.journal?.close();
    this.tokens.closeExecution(record.arn);
    runtime.controller.abort();
    this.evictClosedExecutions();
  }

  private evictClosedExecutions(): void {
    this.executions.evictClosedExecutions(this.options.maxExecutions, (arn) => this.tokens.forgetExecution(arn));
  }

  describeExecution(executionArn: string): ExecutionRecord {
    return this.executions.runtimeOf(executionArn).record;
  }

  /** StopExecution: closes a running execution as ABORTED; stopping a closed execution changes nothing. */
  stopExecution(executionArn: string, error?: string, cause?: string): ExecutionRecord {
    const runtime = this.executions.runtimeOf(executionArn);
    this.stop(runtime, error, cause);
    return runtime.record;
  }

  private stop(runtime: ExecutionRuntime, error?: string, cause?: string): void {
    const record = runtime.record;
    if (record.status !== 'RUNNING') return;
    runtime.stopDetails = { error, cause };
    record.status = 'ABORTED';
    record.stopDate = this.now();
    record.error = error;
    record.cause = cause;
    journalClose(runtime, () => this.now());
    this.tokens.closeExecution(record.arn);
    // The engine's abort ends the run and logs ExecutionAborted; ours releases handlers still waiting.
    runtime.abortRun?.();
    runtime.controller.abort();
  }

  /** Ends a running execution in this process only: its journal keeps it running, so the next start resumes it. */
  private suspend(runtime: ExecutionRuntime): void {
    if (runtime.record.status !== 'RUNNING' || runtime.suspended) return;
    runtime.suspended = true;
    runtime.journal?.close();
    this.tokens.closeExecution(runtime.record.arn);
    runtime.abortRun?.();
    runtime.controller.abort();
  }

  /** Executions of a state machine, newest first. */
  listExecutions(stateMachineArn: string, statusFilter?: ExecutionStatus): ExecutionRecord[] {
    return this.executions.listExecutions(this.describeStateMachine(stateMachineArn), statusFilter);
  }

  // ------------------------------------------------------------------------------------------------- task tokens

  sendTaskSuccess(taskToken: string, output: string): void {
    let value: unknown;
    try {
      value = JSON.parse(output);
    } catch (error) {
      throw new SfnServiceError('InvalidOutput', `Invalid Output: '${error}'`, { cause: error });
    }
    this.tokens.succeed(taskToken, value);
  }

  sendTaskFailure(taskToken: string, error?: string, cause?: string): void {
    this.tokens.fail(taskToken, error, cause);
  }

  /** Validates the token; heartbeat timeouts are not enforced locally. */
  sendTaskHeartbeat(taskToken: string): void {
    this.tokens.heartbeat(taskToken);
  }

  /**
   * Stops every running execution and waits until all of them are closed. With a state directory they are only
   * stopped in this process and stay running in their journals, for the next start to resume.
   */
  async close(): Promise<void> {
    this.closed = true;
    const pending: Promise<void>[] = [];
    for (const runtime of this.executions.values()) {
      if (this.options.stateDir === undefined) {
        this.stop(runtime, 'States.Aborted', 'The local Step Functions endpoint shut down');
      } else {
        this.suspend(runtime);
      }
      pending.push(runtime.record.done);
    }
    await Promise.all(pending);
    await this.tasks.handlersSettled();
  }
}
