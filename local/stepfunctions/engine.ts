import './polyfill.js';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError, type RunOptions } from 'aws-local-stepfunctions';
import * as z from 'zod';
import {
  type AccountScope,
  assertValidName,
  executionArnOf,
  parseExecutionArn,
  parseStateMachineArn,
  stateMachineArnOf,
} from './arn.js';
import {
  MAX_TIMER_MS,
  type PreparedDefinition,
  prepareDefinition,
  RESUME_STATE_NAME,
  resumedMachine,
  type TaskStateInfo,
  type ValidatedDefinitions,
  type WaitStateInfo,
} from './definition.js';
import { type EngineErrorClasses, engineErrorClasses } from './engine-errors.js';
import { ExecutionJournalError, SfnServiceError, StateMachineDefinitionError, TaskFailureError } from './errors.js';
import { type EngineEvent, ExecutionHistory, type HistoryEvent } from './history.js';
import { ExecutionJournal, journalFileOf, prepareStateDir, readJournals } from './journal.js';
import { type RecoveredExecution, type ResumePoint, recoverExecution } from './recovery.js';
import { lambdaFunctionName } from './resources.js';
import { type TaskTokenAnswer, TaskTokenRegistry, type TaskTokenStatus } from './tokens.js';

export interface TaskHandlerContext {
  /** The task token of a `.waitForTaskToken` task (also substituted for `$$.Task.Token` in its Parameters). */
  taskToken?: string;
  stateName: string;
  executionArn: string;
  /** The Task state's Resource. */
  resource: string;
}

/** An in-process stand-in for a Lambda function or another Task resource. */
export type TaskHandler = (input: unknown, context: TaskHandlerContext) => Promise<unknown>;

export interface StateMachineRegistration {
  name: string;
  definition: object | string;
  roleArn?: string;
  /** `${Name}` placeholders to replace in the definition (like CloudFormation DefinitionSubstitutions). */
  substitutions?: Readonly<Record<string, string>>;
}

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

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

export interface RegisteredStateMachine {
  name: string;
  arn: string;
  roleArn: string;
  creationDate: Date;
  prepared: PreparedDefinition;
}

export interface ExecutionRecord {
  seq: number;
  arn: string;
  name: string;
  stateMachine: RegisteredStateMachine;
  input: string;
  startDate: Date;
  stopDate?: Date;
  status: ExecutionStatus;
  output?: string;
  error?: string;
  cause?: string;
  history: ExecutionHistory;
  /** Settles once the execution is closed and its history is complete. */
  done: Promise<void>;
}

/** Where a restarted execution picks up: a top-level state, entered again with the input it had. */
interface ResumePlan extends ResumePoint {
  stateName: string;
  input: unknown;
  /** The first attempt of the resumed state has started (only it reuses the token, child or elapsed wait). */
  taken: boolean;
  /** The state's StateEntered event is in the history already; the resumed run's one is not recorded again. */
  skipEntered: boolean;
}

interface ExecutionRuntime {
  record: ExecutionRecord;
  controller: AbortController;
  abortRun?: () => void;
  stopDetails: { error?: string; cause?: string };
  journal?: ExecutionJournal;
  resume?: ResumePlan;
  /** Stopped in memory by a graceful shutdown and left running in the journal, for the next start to resume. */
  suspended: boolean;
  /** The run is over and its history complete. */
  finished: boolean;
}

type RecordFields = Omit<ExecutionRecord, 'stateMachine' | 'history' | 'done'>;

type LocalHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;

/** Step Functions' default Task timeout when a Task sets none (99999999 s, about 3 years). */
const DEFAULT_TASK_TIMEOUT_SECONDS = 99_999_999;
const DEFAULT_ROLE_ARN_NAME = 'calmops-local-states';

const lambdaInvokeParameters = z.object({ FunctionName: z.string().min(1), Payload: z.unknown().optional() });
const startExecutionParameters = z.object({
  StateMachineArn: z.string().min(1),
  Input: z.unknown().optional(),
  Name: z.string().optional(),
});

function toJson(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

function replaceInStrings(value: unknown, search: string, replacement: string): unknown {
  if (typeof value === 'string') {
    return value.includes(search) ? value.split(search).join(replacement) : value;
  }
  if (Array.isArray(value)) {
    return value.map((item) => replaceInStrings(item, search, replacement));
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, replaceInStrings(item, search, replacement)]),
    );
  }
  return value;
}

/** Lambda reports a function error as errorType/errorMessage; Step Functions uses errorType as the error name. */
function lambdaFailure(error: unknown): TaskFailureError {
  if (error instanceof TaskFailureError) return error;
  if (error instanceof Error) {
    const errorType = error.name || error.constructor.name || 'Error';
    const cause = JSON.stringify({
      errorType,
      errorMessage: error.message,
      trace: (error.stack ?? '').split('\n'),
    });
    return new TaskFailureError(errorType, cause, error);
  }
  return new TaskFailureError('Error', JSON.stringify({ errorType: 'Error', errorMessage: String(error) }), error);
}

/**
 * Runs Amazon States Language executions with aws-local-stepfunctions and keeps what the Step Functions API
 * reports about them (status, output, history, task tokens) in memory.
 */
export class LocalStepFunctionsEngine {
  private readonly stateMachines = new Map<string, RegisteredStateMachine>();
  private readonly executions = new Map<string, ExecutionRuntime>();
  private readonly executionNames = new Map<string, Map<string, ExecutionRuntime>>();
  private readonly tokens = new TaskTokenRegistry({
    onClose: (token, entry, status, answer) => this.journalTokenClosed(token, entry.executionArn, status, answer),
  });
  private readonly tokenPlaceholder = `calmops-local-task-token-${randomUUID()}`;
  private sequence = 0;
  private closed = false;
  /** Handlers outlive the execution that called them when it is stopped; close() waits for them all the same. */
  private readonly handlersRunning = new Set<Promise<unknown>>();

  private constructor(
    private readonly options: EngineOptions,
    private readonly errors: EngineErrorClasses,
  ) {
    if (options.stateDir !== undefined) prepareStateDir(options.stateDir);
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

  private elapsedMs(since: Date): number {
    return Math.max(0, this.now().getTime() - since.getTime());
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
    assertValidName(registration.name, 'state machine');
    const arn = stateMachineArnOf(this.scope, registration.name);
    const roleArn = registration.roleArn ?? `arn:aws:iam::${this.options.accountId}:role/${DEFAULT_ROLE_ARN_NAME}`;
    let prepared: PreparedDefinition;
    try {
      prepared = prepareDefinition(registration.definition, {
        substitutions: registration.substitutions,
        retryIntervalScale: this.options.retryIntervalScale,
        validated: this.options.validated,
      });
      this.assertResourcesServed(prepared);
    } catch (error) {
      if (error instanceof StateMachineDefinitionError) {
        throw new SfnServiceError('InvalidDefinition', `Invalid State Machine Definition: '${error.message}'`, {
          cause: error,
        });
      }
      throw error;
    }
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
    this.executionNames.set(arn, new Map());
    return registered;
  }

  /** Custom resources can never run without a handler, so they are refused when the machine is registered. */
  private assertResourcesServed(prepared: PreparedDefinition): void {
    for (const info of prepared.runnable.values()) {
      if (info.kind === 'task' && info.spec.integration.kind === 'custom') {
        const { key } = info.spec.integration;
        if (!this.options.taskHandlers[key]) {
          throw new StateMachineDefinitionError(
            `State '${info.stateName}': resource '${info.spec.resource}' is not supported locally and no task handler is registered for '${key}'`,
          );
        }
      }
    }
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
    const recovered = readJournals(stateDir, (error) => this.report(error))
      .map(recoverExecution)
      .sort((a, b) => a.seq - b.seq);
    const resumed: ExecutionRuntime[] = [];
    for (const execution of recovered) {
      const runtime = this.restoreExecution(execution);
      if (runtime?.resume) resumed.push(runtime);
    }
    this.evictClosedExecutions();
    // Every execution is known before any resumes, so a parent finds the child it waits for.
    for (const runtime of resumed) this.run(runtime);
  }

  private restoreExecution(execution: RecoveredExecution): ExecutionRuntime | undefined {
    const machine = this.stateMachines.get(stateMachineArnOf(this.scope, execution.stateMachineName));
    if (!machine) {
      this.report(
        new ExecutionJournalError(
          `Execution ${execution.arn} was left on disk: its state machine '${execution.stateMachineName}' is not registered`,
          execution.file,
        ),
      );
      return undefined;
    }
    if (
      execution.arn !== executionArnOf(this.scope, machine.name, execution.name) ||
      this.executions.has(execution.arn)
    ) {
      this.report(
        new ExecutionJournalError(`Execution ${execution.arn} does not belong here or is duplicated`, execution.file),
      );
      return undefined;
    }
    const { arn, name, input, startDate, seq, status, stopDate, output, error, cause } = execution;
    const runtime = this.createRuntime(
      machine,
      { seq, arn, name, input, startDate, status, stopDate, output, error, cause },
      execution.events,
    );
    runtime.journal = this.openJournal(execution.file);
    this.sequence = Math.max(this.sequence, seq);
    this.executions.set(arn, runtime);
    this.executionNames.get(machine.arn)?.set(name, runtime);
    const point = execution.resume;
    if (point) {
      runtime.resume = {
        ...point,
        stateName: point.stateName ?? machine.prepared.startAt,
        input: point.stateName === undefined ? JSON.parse(input) : point.input,
        taken: false,
        skipEntered: point.inProgress,
      };
    } else {
      runtime.finished = true;
    }
    const reusable = runtime.resume?.token?.closed === undefined ? runtime.resume?.token?.token : undefined;
    for (const token of execution.tokens) {
      const restored: TaskTokenStatus =
        token.closed === undefined
          ? token.token === reusable
            ? 'open'
            : 'stopped'
          : token.closed === 'abandoned'
            ? 'failed'
            : token.closed;
      this.tokens.restore(token.token, arn, token.stateName, restored);
    }
    return runtime;
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
    const names = this.executionNames.get(machine.arn) as Map<string, ExecutionRuntime>;
    const existing = names.get(name);
    if (existing) {
      if (existing.record.status === 'RUNNING' && existing.record.input === input) {
        return existing.record;
      }
      throw new SfnServiceError('ExecutionAlreadyExists', `Execution Already Exists: '${existing.record.arn}'`);
    }
    const runtime = this.launch(machine, name, input);
    names.set(name, runtime);
    this.executions.set(runtime.record.arn, runtime);
    return runtime.record;
  }

  private createRuntime(
    machine: RegisteredStateMachine,
    fields: RecordFields,
    restored?: readonly HistoryEvent[],
  ): ExecutionRuntime {
    const runtime: ExecutionRuntime = {
      controller: new AbortController(),
      stopDetails: {},
      suspended: false,
      finished: false,
      record: {
        ...fields,
        stateMachine: machine,
        done: Promise.resolve(),
        history: new ExecutionHistory({
          maxEvents: this.options.maxHistoryEvents,
          now: () => this.now(),
          region: this.options.region,
          roleArn: machine.roleArn,
          stateTypes: machine.prepared.stateTypes,
          runnable: machine.prepared.runnable,
          stopDetails: () => runtime.stopDetails,
          restored,
          onRecord: (event) =>
            runtime.journal?.append({ t: 'event', event: { ...event, timestamp: event.timestamp.toISOString() } }),
        }),
      },
    };
    return runtime;
  }

  private openJournal(file: string): ExecutionJournal {
    return new ExecutionJournal(file, (error) => this.report(error));
  }

  private launch(machine: RegisteredStateMachine, name: string, input: string): ExecutionRuntime {
    const arn = executionArnOf(this.scope, machine.name, name);
    const startDate = this.now();
    const seq = ++this.sequence;
    const runtime = this.createRuntime(machine, { seq, arn, name, input, startDate, status: 'RUNNING' });
    if (this.options.stateDir !== undefined) {
      const file = journalFileOf(this.options.stateDir, arn);
      if (existsSync(file)) {
        // Left on disk by a start that could not load it (its state machine was not registered then).
        this.report(new ExecutionJournalError(`Replaced the journal of an earlier execution ${arn}`, file));
        this.openJournal(file).remove();
      }
      runtime.journal = this.openJournal(file);
      runtime.journal.append({
        t: 'start',
        v: 1,
        arn,
        name,
        stateMachine: machine.name,
        input,
        startDate: startDate.toISOString(),
        seq,
      });
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
          : machine.prepared.timeoutSeconds - this.elapsedMs(record.startDate) / 1000;
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
        Task: { Token: this.tokenPlaceholder },
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
    for (const info of runtime.record.stateMachine.prepared.runnable.values()) {
      handlers[info.stateName] =
        info.kind === 'wait'
          ? async (raw) => (await this.runWait(runtime, info, raw)) as never
          : async (raw) => (await this.runTask(runtime, info, raw)) as never;
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

  /** The resume plan, the first time the resumed state runs; later attempts and other states run afresh. */
  private takeResume(runtime: ExecutionRuntime, stateName: string): ResumePlan | undefined {
    const plan = runtime.resume;
    if (!plan || plan.taken || plan.stateName !== stateName) return undefined;
    plan.taken = true;
    return plan;
  }

  private finish(runtime: ExecutionRuntime, result: PromiseSettledResult<unknown>): void {
    const record = runtime.record;
    runtime.finished = true;
    if (runtime.suspended) {
      runtime.controller.abort();
      return;
    }
    if (record.status === 'RUNNING') {
      record.stopDate = this.now();
      if (result.status === 'fulfilled') {
        record.status = 'SUCCEEDED';
        record.output = JSON.stringify(result.value ?? null);
      } else if (result.reason instanceof ExecutionTimeoutError) {
        record.status = 'TIMED_OUT';
      } else if (result.reason instanceof ExecutionAbortedError) {
        record.status = 'ABORTED';
      } else {
        record.status = 'FAILED';
        const failure = result.reason instanceof ExecutionError ? result.reason.cause : result.reason;
        if (failure instanceof Error) {
          record.error = failure.name;
          record.cause = typeof failure.cause === 'string' ? failure.cause : failure.message;
        } else {
          record.error = 'States.Runtime';
          record.cause = String(failure);
        }
      }
      this.journalClose(runtime);
    }
    runtime.journal?.close();
    this.tokens.closeExecution(record.arn);
    runtime.controller.abort();
    this.evictClosedExecutions();
  }

  private journalClose(runtime: ExecutionRuntime): void {
    const { record, journal } = runtime;
    if (!journal || record.status === 'RUNNING') return;
    journal.append({
      t: 'close',
      status: record.status,
      stopDate: (record.stopDate ?? this.now()).toISOString(),
      ...(record.output !== undefined ? { output: record.output } : {}),
      ...(record.error !== undefined ? { error: record.error } : {}),
      ...(record.cause !== undefined ? { cause: record.cause } : {}),
    });
  }

  private journalTokenClosed(
    token: string,
    executionArn: string,
    status: Exclude<TaskTokenStatus, 'open'>,
    answer: TaskTokenAnswer | undefined,
  ): void {
    // Tokens stopped with their execution are closed by its close record (or stay open for a resumed run).
    if (status === 'stopped') return;
    const journal = this.executions.get(executionArn)?.journal;
    if (!journal) return;
    if (answer && 'output' in answer) {
      journal.append({ t: 'token-closed', token, status: 'succeeded', output: answer.output ?? null });
    } else if (answer) {
      journal.append({
        t: 'token-closed',
        token,
        status: 'failed',
        ...(answer.error !== undefined ? { error: answer.error } : {}),
        ...(answer.cause !== undefined ? { cause: answer.cause } : {}),
      });
    } else {
      // Closed without an answer: timed out, or its resource failed (a retry issues a new token).
      journal.append({ t: 'token-closed', token, status: status === 'timed-out' ? 'timed-out' : 'abandoned' });
    }
  }

  private evictClosedExecutions(): void {
    if (this.executions.size <= this.options.maxExecutions) return;
    for (const [arn, runtime] of this.executions) {
      if (this.executions.size <= this.options.maxExecutions) break;
      if (runtime.record.status === 'RUNNING' || !runtime.finished) continue;
      this.executions.delete(arn);
      this.executionNames.get(runtime.record.stateMachine.arn)?.delete(runtime.record.name);
      this.tokens.forgetExecution(arn);
      runtime.journal?.remove();
    }
  }

  private runtimeOf(executionArn: string): ExecutionRuntime {
    parseExecutionArn(executionArn);
    const runtime = this.executions.get(executionArn);
    if (!runtime) {
      throw new SfnServiceError('ExecutionDoesNotExist', `Execution Does Not Exist: '${executionArn}'`);
    }
    return runtime;
  }

  describeExecution(executionArn: string): ExecutionRecord {
    return this.runtimeOf(executionArn).record;
  }

  /** StopExecution: closes a running execution as ABORTED; stopping a closed execution changes nothing. */
  stopExecution(executionArn: string, error?: string, cause?: string): ExecutionRecord {
    const runtime = this.runtimeOf(executionArn);
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
    this.journalClose(runtime);
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
    const machine = this.describeStateMachine(stateMachineArn);
    const records: ExecutionRecord[] = [];
    for (const runtime of this.executions.values()) {
      const record = runtime.record;
      if (record.stateMachine !== machine) continue;
      if (statusFilter && record.status !== statusFilter) continue;
      records.push(record);
    }
    return records.reverse();
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

  // --------------------------------------------------------------------------------------------- Task execution

  private taskTimeoutMs(info: TaskStateInfo, fromPath: unknown): number | undefined {
    let seconds = info.timeoutSeconds;
    if (seconds === undefined && info.timeoutSecondsPath !== undefined) {
      if (typeof fromPath !== 'number' || !Number.isInteger(fromPath) || fromPath < 1) {
        throw this.errors.createRuntime(
          `TimeoutSecondsPath '${info.timeoutSecondsPath}' of state '${info.stateName}' must point to a positive integer, got ${JSON.stringify(fromPath)}`,
        );
      }
      seconds = fromPath;
    }
    const scale = info.spec.callback ? this.options.callbackTimeoutScale : 1;
    const ms = (seconds ?? DEFAULT_TASK_TIMEOUT_SECONDS) * 1000 * scale;
    return ms > MAX_TIMER_MS ? undefined : ms;
  }

  /**
   * Runs one attempt of a Task state. The timeout is enforced here (not by the engine) so that
   * TimeoutSecondsPath and the callback time scale work, and so that the task token is closed before the state
   * fails with States.Timeout. The first attempt of a resumed callback task takes up the token it issued before
   * the restart: answered meanwhile, its answer is the result; still open, the same token completes it, and its
   * resource is invoked again only if it had not returned before the restart.
   */
  private async runTask(runtime: ExecutionRuntime, info: TaskStateInfo, raw: unknown): Promise<unknown> {
    const { p: input, t: timeoutFromPath } = (raw ?? {}) as { p?: unknown; t?: unknown };
    const resumed = this.takeResume(runtime, info.stateName);
    if (runtime.journal) {
      // Let the history catch up first, so the journal has this state's entry before any token or child it starts.
      await new Promise((resolve) => setImmediate(resolve));
    }
    let timeoutMs = this.taskTimeoutMs(info, timeoutFromPath);
    const signal = runtime.controller.signal;
    if (signal.aborted) {
      throw this.errors.createRuntime('The execution is no longer running');
    }
    const previous = info.spec.callback ? resumed?.token : undefined;
    switch (previous?.closed) {
      case 'succeeded':
        return previous.output;
      case 'failed':
        throw new TaskFailureError(previous.error ?? '', previous.cause ?? '');
      case 'timed-out':
        throw this.errors.createTimeout();
    }
    const reused = previous?.closed === undefined ? previous : undefined;
    if (reused && timeoutMs !== undefined) {
      timeoutMs = Math.max(0, timeoutMs - this.elapsedMs(reused.issuedAt));
    }
    return new Promise((resolve, reject) => {
      let token: string | undefined;
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        outcome();
      };
      const onAbort = () => {
        if (token) this.tokens.close(token, 'stopped');
        settle(() => reject(this.errors.createRuntime('The execution is no longer running')));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          if (token) this.tokens.close(token, 'timed-out');
          settle(() => reject(this.errors.createTimeout()));
        }, timeoutMs);
      }
      let taskInput = input;
      if (info.spec.callback) {
        const callbacks = {
          succeed: (output: unknown) => settle(() => resolve(output)),
          fail: (error: string | undefined, cause: string | undefined) =>
            settle(() => reject(new TaskFailureError(error ?? '', cause ?? ''))),
        };
        if (reused) {
          token = reused.token;
          this.tokens.attach(token, callbacks);
        } else {
          token = this.tokens.issue(runtime.record.arn, info.stateName, callbacks);
          runtime.journal?.append({
            t: 'token',
            token,
            state: info.stateName,
            issuedAt: this.now().toISOString(),
          });
        }
        taskInput = replaceInStrings(input, this.tokenPlaceholder, token);
      }
      if (reused?.delivered || settled) return;
      const issued = token;
      this.invoke(runtime, info, taskInput, issued, resumed).then(
        (result) => {
          if (!info.spec.callback) settle(() => resolve(result));
          else if (issued) runtime.journal?.append({ t: 'token-delivered', token: issued });
        },
        (error: unknown) => {
          if (issued) this.tokens.close(issued, 'failed');
          settle(() => reject(error));
        },
      );
    });
  }

  private async invoke(
    runtime: ExecutionRuntime,
    info: TaskStateInfo,
    input: unknown,
    taskToken: string | undefined,
    resumed: ResumePlan | undefined,
  ): Promise<unknown> {
    const context: TaskHandlerContext = {
      stateName: info.stateName,
      executionArn: runtime.record.arn,
      resource: info.spec.resource,
    };
    if (taskToken) context.taskToken = taskToken;
    const integration = info.spec.integration;
    switch (integration.kind) {
      case 'lambda-function':
        return this.callLambda(integration.functionRef, input, context);
      case 'lambda-invoke': {
        const parameters = lambdaInvokeParameters.safeParse(input);
        if (!parameters.success) {
          throw this.errors.createRuntime(
            `State '${info.stateName}': lambda:invoke needs Parameters with a FunctionName string`,
          );
        }
        const payload = await this.callLambda(parameters.data.FunctionName, parameters.data.Payload ?? null, context);
        return {
          ExecutedVersion: '$LATEST',
          Payload: payload,
          SdkHttpMetadata: { HttpStatusCode: 200 },
          SdkResponseMetadata: { RequestId: randomUUID() },
          StatusCode: 200,
        };
      }
      case 'start-execution':
        return this.startNested(runtime, info, integration.mode, input, resumed);
      case 'custom': {
        const handler = this.options.taskHandlers[integration.key];
        if (!handler) {
          throw this.errors.createRuntime(`No task handler is registered for '${integration.key}'`);
        }
        try {
          return toJson(await this.track(handler(toJson(input), context)));
        } catch (error) {
          throw lambdaFailure(error);
        }
      }
    }
  }

  private track<T>(running: Promise<T>): Promise<T> {
    this.handlersRunning.add(running);
    const forget = () => this.handlersRunning.delete(running);
    running.then(forget, forget);
    return running;
  }

  private async callLambda(functionRef: string, payload: unknown, context: TaskHandlerContext): Promise<unknown> {
    const handler =
      this.options.taskHandlers[functionRef] ?? this.options.taskHandlers[lambdaFunctionName(functionRef)];
    if (!handler) {
      throw new TaskFailureError(
        'Lambda.ResourceNotFoundException',
        `Function not found: ${functionRef} (no local task handler is registered under this ARN or under '${lambdaFunctionName(functionRef)}')`,
      );
    }
    try {
      return toJson(await this.track(handler(toJson(payload), context)));
    } catch (error) {
      throw lambdaFailure(error);
    }
  }

  private async startNested(
    parent: ExecutionRuntime,
    info: TaskStateInfo,
    mode: 'async' | 'sync' | 'sync2',
    input: unknown,
    resumed: ResumePlan | undefined,
  ): Promise<unknown> {
    const parameters = startExecutionParameters.safeParse(input);
    if (!parameters.success) {
      throw this.errors.createRuntime(
        `State '${info.stateName}': states:startExecution needs Parameters with a StateMachineArn string`,
      );
    }
    const { StateMachineArn, Input, Name } = parameters.data;
    // A resumed state takes up the child it started before the restart, running or closed.
    let child = resumed && this.startedChild(resumed, StateMachineArn, Name);
    if (!child) {
      try {
        child = this.startExecution({
          stateMachineArn: StateMachineArn,
          name: Name,
          input: Input === undefined ? undefined : typeof Input === 'string' ? Input : JSON.stringify(Input),
        });
      } catch (error) {
        if (error instanceof SfnServiceError) {
          throw new TaskFailureError(`StepFunctions.${error.code}Exception`, error.message, error);
        }
        throw error;
      }
      parent.journal?.append({ t: 'child', state: info.stateName, arn: child.arn });
    }
    if (mode === 'async') {
      return { ExecutionArn: child.arn, StartDate: child.startDate.getTime() };
    }
    // Stopping the parent stops a child it is waiting for, as Step Functions does for .sync.
    const started = child;
    const stopChild = () => {
      if (parent.suspended) return;
      const childRuntime = this.executions.get(started.arn);
      if (childRuntime) this.stop(childRuntime, 'States.Aborted', `Parent execution ${parent.record.arn} stopped`);
    };
    parent.controller.signal.addEventListener('abort', stopChild, { once: true });
    try {
      await started.done;
    } finally {
      parent.controller.signal.removeEventListener('abort', stopChild);
    }
    const parse = mode === 'sync2';
    const description: Record<string, unknown> = {
      ExecutionArn: child.arn,
      Input: parse ? JSON.parse(child.input) : child.input,
      InputDetails: { Included: true },
      Name: child.name,
      StartDate: child.startDate.getTime(),
      StateMachineArn: child.stateMachine.arn,
      Status: child.status,
      StopDate: child.stopDate?.getTime(),
    };
    if (child.output !== undefined) {
      description.Output = parse ? JSON.parse(child.output) : child.output;
      description.OutputDetails = { Included: true };
    }
    if (child.error !== undefined) description.Error = child.error;
    if (child.cause !== undefined) description.Cause = child.cause;
    if (child.status === 'SUCCEEDED') {
      return description;
    }
    throw new TaskFailureError('States.TaskFailed', JSON.stringify(description));
  }

  private startedChild(
    plan: ResumePlan,
    stateMachineArn: string,
    name: string | undefined,
  ): ExecutionRecord | undefined {
    const byArn = plan.childArn === undefined ? undefined : this.executions.get(plan.childArn);
    const byName = name === undefined ? undefined : this.executionNames.get(stateMachineArn)?.get(name);
    return (byArn ?? byName)?.record;
  }

  /** A resumed Wait waits only for what is left of its duration since the state was entered. */
  private async runWait(runtime: ExecutionRuntime, info: WaitStateInfo, raw: unknown): Promise<unknown> {
    const { p: input, seconds, timestamp } = (raw ?? {}) as { p?: unknown; seconds?: unknown; timestamp?: unknown };
    const resumed = this.takeResume(runtime, info.stateName);
    let ms = 0;
    if (seconds !== undefined) {
      if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 0) {
        throw this.errors.createRuntime(`Wait seconds must be a non-negative integer, got ${JSON.stringify(seconds)}`);
      }
      ms = seconds * 1000 * this.options.waitTimeScale;
      if (resumed) ms -= this.elapsedMs(resumed.enteredAt);
    } else if (timestamp !== undefined) {
      const at = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
      if (Number.isNaN(at)) {
        throw this.errors.createRuntime(
          `Wait timestamp must be an RFC 3339 timestamp, got ${JSON.stringify(timestamp)}`,
        );
      }
      ms = (at - this.now().getTime()) * this.options.waitTimeScale;
    }
    ms = Math.min(Math.max(0, ms), MAX_TIMER_MS);
    const signal = runtime.controller.signal;
    await new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(this.errors.createRuntime('The execution is no longer running'));
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(this.errors.createRuntime('The execution is no longer running'));
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return input;
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
    await Promise.allSettled([...this.handlersRunning]);
  }
}
